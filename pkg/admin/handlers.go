package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/jetsched/jetsched/pkg/fire"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/wakeup"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

type handlers struct {
	store   *kvstore.Store
	control fire.Control
	timers  wakeup.Client
}

type endpoint func(ctx context.Context, body []byte) (any, error)

// Requests.
type (
	// IDRequest names a schedule.
	IDRequest struct {
		ID string `json:"id"`
	}
	// PutRequest creates or updates a schedule.
	PutRequest struct {
		ID   string          `json:"id"`
		Spec json.RawMessage `json:"spec"`
	}
	// PauseRequest pauses a schedule.
	PauseRequest struct {
		ID    string    `json:"id"`
		Note  string    `json:"note,omitempty"`
		Until time.Time `json:"until,omitzero"`
	}
	// TriggerRequest fires a schedule once now.
	TriggerRequest struct {
		ID   string `json:"id"`
		Note string `json:"note,omitempty"`
	}
	// SkipRequest skips the next Count slots.
	SkipRequest struct {
		ID    string `json:"id"`
		Count int    `json:"count"`
	}
	// BackfillRequest replays a past range.
	BackfillRequest struct {
		ID   string    `json:"id"`
		From time.Time `json:"from"`
		To   time.Time `json:"to"`
		Rate float64   `json:"rate,omitempty"`
		Note string    `json:"note,omitempty"`
	}
	// HistoryRequest lists a schedule's ledger.
	HistoryRequest struct {
		ID    string `json:"id"`
		Limit int    `json:"limit,omitempty"`
	}
	// CalendarRequest names a calendar; Calendar carries its JSON form for
	// calendar.put, Force removes one in use for calendar.delete.
	CalendarRequest struct {
		Name     string          `json:"name"`
		Calendar json.RawMessage `json:"calendar,omitempty"`
		Force    bool            `json:"force,omitempty"`
	}
	// WakeupRequest registers a timer (wakeup.Request's wire form).
	WakeupRequest struct {
		Run         string          `json:"run"`
		Step        string          `json:"step"`
		Workflow    string          `json:"workflow"`
		When        string          `json:"when,omitempty"`
		At          time.Time       `json:"at,omitzero"`
		Zone        string          `json:"zone,omitempty"`
		Calendar    string          `json:"calendar,omitempty"`
		Payload     json.RawMessage `json:"payload,omitempty"`
		Condition   string          `json:"condition,omitempty"`
		ExpireAfter string          `json:"expire_after,omitempty"`
	}
	// WakeupCancelRequest cancels a timer, or every timer of a run.
	WakeupCancelRequest struct {
		Run  string `json:"run"`
		Step string `json:"step,omitempty"`
	}
	// WakeupListRequest filters pending timers.
	WakeupListRequest struct {
		Run      string `json:"run,omitempty"`
		Workflow string `json:"workflow,omitempty"`
	}
)

func (h handlers) table() map[string]endpoint {
	return map[string]endpoint{
		"schedule.create":   h.schedulePut,
		"schedule.update":   h.schedulePut,
		"schedule.get":      h.scheduleGet,
		"schedule.list":     h.scheduleList,
		"schedule.delete":   h.scheduleDelete,
		"schedule.pause":    h.schedulePause,
		"schedule.resume":   h.scheduleResume,
		"schedule.trigger":  h.scheduleTrigger,
		"schedule.skip":     h.scheduleSkip,
		"schedule.backfill": h.scheduleBackfill,
		"schedule.history":  h.scheduleHistory,
		"status":            h.status,
		"calendar.put":      h.calendarPut,
		"calendar.get":      h.calendarGet,
		"calendar.list":     h.calendarList,
		"calendar.delete":   h.calendarDelete,
		"wakeup.add":        h.wakeupAdd,
		"wakeup.cancel":     h.wakeupCancel,
		"wakeup.list":       h.wakeupList,
	}
}

func (h handlers) schedulePut(ctx context.Context, body []byte) (any, error) {
	r, err := decode[PutRequest](body)
	if err != nil {
		return nil, err
	}
	spec, err := kvstore.DecodeSpec(r.Spec)
	if err != nil {
		return nil, err
	}
	rev, err := h.store.PutSpec(ctx, r.ID, spec)
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": r.ID, "revision": rev}, nil
}

func (h handlers) scheduleGet(ctx context.Context, body []byte) (any, error) {
	r, err := decode[IDRequest](body)
	if err != nil {
		return nil, err
	}
	e, err := h.store.GetSpec(ctx, r.ID)
	if err != nil && e.ID == "" {
		return nil, err
	}
	return Info(ctx, h.store, e, err), nil
}

func (h handlers) scheduleList(ctx context.Context, _ []byte) (any, error) {
	specs, bad, err := h.store.ListSpecs(ctx)
	if err != nil {
		return nil, err
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].ID < specs[j].ID })
	out := make([]ScheduleInfo, 0, len(specs))
	for _, e := range specs {
		out = append(out, Info(ctx, h.store, e, bad[e.ID]))
	}
	return out, nil
}

func (h handlers) status(ctx context.Context, _ []byte) (any, error) {
	return Status(ctx, h.store)
}

func (h handlers) scheduleDelete(ctx context.Context, body []byte) (any, error) {
	r, err := decode[IDRequest](body)
	if err != nil {
		return nil, err
	}
	if err := h.store.DeleteSpec(ctx, r.ID); err != nil {
		return nil, err
	}
	return map[string]any{"id": r.ID, "removed": true}, nil
}

func (h handlers) schedulePause(ctx context.Context, body []byte) (any, error) {
	r, err := decode[PauseRequest](body)
	if err != nil {
		return nil, err
	}
	st, err := h.control.Pause(ctx, r.ID, r.Note, r.Until)
	return st, err
}

func (h handlers) scheduleResume(ctx context.Context, body []byte) (any, error) {
	r, err := decode[IDRequest](body)
	if err != nil {
		return nil, err
	}
	return h.control.Resume(ctx, r.ID)
}

func (h handlers) scheduleTrigger(ctx context.Context, body []byte) (any, error) {
	r, err := decode[TriggerRequest](body)
	if err != nil {
		return nil, err
	}
	slot, err := h.control.Trigger(ctx, r.ID, r.Note)
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": r.ID, "slot_id": slot}, nil
}

func (h handlers) scheduleSkip(ctx context.Context, body []byte) (any, error) {
	r, err := decode[SkipRequest](body)
	if err != nil {
		return nil, err
	}
	return h.control.Skip(ctx, r.ID, max(r.Count, 1))
}

func (h handlers) scheduleBackfill(ctx context.Context, body []byte) (any, error) {
	r, err := decode[BackfillRequest](body)
	if err != nil {
		return nil, err
	}
	if r.Rate == 0 {
		r.Rate = 10
	}
	return h.control.Backfill(ctx, r.ID, r.From, r.To, r.Rate, r.Note)
}

func (h handlers) scheduleHistory(ctx context.Context, body []byte) (any, error) {
	r, err := decode[HistoryRequest](body)
	if err != nil {
		return nil, err
	}
	if err := kvstore.ValidateID(r.ID); err != nil {
		return nil, err
	}
	ticks, err := h.store.History(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	if r.Limit > 0 && len(ticks) > r.Limit {
		ticks = ticks[len(ticks)-r.Limit:]
	}
	return ticks, nil
}

func (h handlers) calendarPut(ctx context.Context, body []byte) (any, error) {
	r, err := decode[CalendarRequest](body)
	if err != nil {
		return nil, err
	}
	e, err := h.store.PutCalendar(ctx, r.Name, r.Calendar)
	if err != nil {
		return nil, err
	}
	return map[string]any{"name": r.Name, "revision": e.Revision, "fingerprint": e.Calendar.Fingerprint()}, nil
}

func (h handlers) calendarGet(ctx context.Context, body []byte) (any, error) {
	r, err := decode[CalendarRequest](body)
	if err != nil {
		return nil, err
	}
	e, err := h.store.GetCalendar(ctx, r.Name)
	if err != nil {
		return nil, err
	}
	return e.Calendar, nil
}

func (h handlers) calendarList(ctx context.Context, _ []byte) (any, error) {
	cals, bad, err := h.store.ListCalendars(ctx)
	if err != nil {
		return nil, err
	}
	type row struct {
		Name     string `json:"name"`
		Zone     string `json:"zone,omitempty"`
		Revision uint64 `json:"revision"`
		Invalid  string `json:"invalid,omitempty"`
	}
	out := make([]row, 0, len(cals))
	for _, c := range cals {
		r := row{Name: c.Name, Revision: c.Revision}
		if c.Calendar != nil {
			r.Zone = c.Calendar.Location().String()
		}
		if err := bad[c.Name]; err != nil {
			r.Invalid = err.Error()
		}
		out = append(out, r)
	}
	return out, nil
}

func (h handlers) calendarDelete(ctx context.Context, body []byte) (any, error) {
	r, err := decode[CalendarRequest](body)
	if err != nil {
		return nil, err
	}
	if err := h.store.DeleteCalendar(ctx, r.Name, r.Force); err != nil {
		return nil, err
	}
	return map[string]any{"name": r.Name, "removed": true}, nil
}

func (h handlers) wakeupAdd(ctx context.Context, body []byte) (any, error) {
	r, err := decode[WakeupRequest](body)
	if err != nil {
		return nil, err
	}
	req := wakeup.Request{Run: r.Run, Step: r.Step, Workflow: r.Workflow, When: r.When, At: r.At, Zone: r.Zone,
		Calendar: r.Calendar, Payload: r.Payload, Condition: r.Condition}
	if r.ExpireAfter != "" {
		d, err := time.ParseDuration(r.ExpireAfter)
		if err != nil {
			return nil, &kvstore.FieldError{Field: "expire_after", Value: r.ExpireAfter, Reason: "want a duration"}
		}
		req.ExpireAfter = d
	}
	e, err := h.timers.Register(ctx, req)
	if err != nil {
		return nil, err
	}
	return map[string]any{"key": e.Key, "revision": e.Revision, "timer": e.Timer}, nil
}

func (h handlers) wakeupCancel(ctx context.Context, body []byte) (any, error) {
	r, err := decode[WakeupCancelRequest](body)
	if err != nil {
		return nil, err
	}
	if r.Step == "" {
		n, err := h.timers.CancelRun(ctx, r.Run)
		return map[string]any{"run": r.Run, "cancelled": n}, err
	}
	out, err := h.timers.Cancel(ctx, r.Run, r.Step)
	if err != nil {
		return nil, fmt.Errorf("timer %s/%s: %w", r.Run, r.Step, err)
	}
	return map[string]any{"run": r.Run, "step": r.Step, "outcome": out}, nil
}

func (h handlers) wakeupList(ctx context.Context, body []byte) (any, error) {
	r, err := decode[WakeupListRequest](body)
	if err != nil {
		return nil, err
	}
	timers, err := h.timers.List(ctx, wakeup.Filter{Run: r.Run, Workflow: r.Workflow})
	if err != nil {
		return nil, err
	}
	out := make([]kvstore.Timer, 0, len(timers))
	for _, e := range timers {
		out = append(out, e.Timer)
	}
	return out, nil
}
