package adminapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/control"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/internal/timearg"
	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

type handlers struct {
	store   *jsstore.Store
	model   readmodel.Model
	cat     *catalog
	control control.Control
	timers  wakeups.Client
	// replyBudget bounds the bytes of a listing's items, well under the
	// connection's max payload.
	replyBudget int
}

func newHandlers(store *jsstore.Store, cat *catalog, nc *nats.Conn, maxBackfill int) handlers {
	budget := maxReplyBytes
	if mp := int(nc.MaxPayload()); mp > 0 {
		budget = min(budget, mp/2)
	}
	return handlers{store: store, model: readmodel.Model{Store: store, Planner: fires.Planner{}}, cat: cat, replyBudget: budget,
		control: control.Control{Store: store, MaxBackfillSlots: maxBackfill},
		timers:  wakeups.Client{Store: store}}
}

type endpoint func(ctx context.Context, body []byte) (any, error)

func (h handlers) table() map[string]endpoint {
	return map[string]endpoint{
		"schedule.create":          h.scheduleCreate,
		"schedule.update":          h.scheduleUpdate,
		"schedule.import":          h.scheduleImport,
		"schedule.get":             h.scheduleGet,
		"schedule.describe":        h.scheduleDescribe,
		"schedule.list":            h.scheduleList,
		"schedule.delete":          h.scheduleDelete,
		"schedule.pause":           h.schedulePause,
		"schedule.resume":          h.scheduleResume,
		"schedule.trigger":         h.scheduleTrigger,
		"schedule.skip":            h.scheduleSkip,
		"schedule.backfill":        h.scheduleBackfill,
		"schedule.backfill.cancel": h.scheduleBackfillCancel,
		"schedule.history":         h.scheduleHistory,
		"schedule.account":         h.scheduleAccount,
		"status":                   h.status,
		"calendar.put":             h.calendarPut,
		"calendar.get":             h.calendarGet,
		"calendar.list":            h.calendarList,
		"calendar.delete":          h.calendarDelete,
		"calendar.count":           h.calendarCount,
		"wakeup.add":               h.wakeupAdd,
		"wakeup.cancel":            h.wakeupCancel,
		"wakeup.list":              h.wakeupList,
		"wakeup.get":               h.wakeupGet,
		"deadletter.list":          h.deadLetterList,
		"deadletter.get":           h.deadLetterGet,
		"deadletter.retry":         h.deadLetterRetry,
		"deadletter.purge":         h.deadLetterPurge,
	}
}

// decodeID decodes a request that names a schedule and checks the id.
func decodeID[T any](body []byte, id func(T) string) (T, error) {
	r, err := decode[T](body)
	if err != nil {
		return r, err
	}
	return r, kvstore.ValidateID(id(r))
}

func (h handlers) scheduleCreate(ctx context.Context, body []byte) (any, error) {
	r, spec, err := decodePut(body)
	if err != nil {
		return nil, err
	}
	if r.IfRevision != 0 {
		return nil, &kvstore.FieldError{Field: "if_revision", Reason: "applies to schedule.update and schedule.delete, not to create"}
	}
	return h.save(ctx, r.ID, spec, jsstore.SaveOptions{Create: !r.Upsert, DryRun: r.DryRun})
}

func (h handlers) scheduleUpdate(ctx context.Context, body []byte) (any, error) {
	r, err := decode[admin.PutRequest](body)
	if err != nil {
		return nil, err
	}
	if r.Upsert {
		return nil, &kvstore.FieldError{Field: "upsert", Reason: "applies to schedule.create; update changes an existing schedule only"}
	}
	o := jsstore.SaveOptions{Update: true, IfRevision: r.IfRevision, DryRun: r.DryRun, Now: time.Now()}
	if len(r.Patch) == 0 {
		var spec kvstore.Spec
		if r.ID, spec, err = decodeSpec(r.ID, r.Spec); err != nil {
			return nil, err
		}
		return h.save(ctx, r.ID, spec, o)
	}
	if len(r.Spec) != 0 {
		return nil, &kvstore.FieldError{Field: "patch", Reason: "give spec (the whole schedule) or patch (some fields), not both"}
	}
	if err := kvstore.ValidateID(r.ID); err != nil {
		return nil, err
	}
	var patch map[string]json.RawMessage
	if err := json.Unmarshal(r.Patch, &patch); err != nil || patch == nil {
		return nil, &kvstore.FieldError{Field: "patch", Reason: "want a JSON object of spec fields, each a value or null (to remove it)"}
	}
	res, err := h.store.PatchSpec(ctx, r.ID, patch, o)
	if err != nil {
		return admin.PutResponse{}, err
	}
	return putResponse(r.ID, res, r.DryRun)
}

// save writes a spec as a put through the API: a dynamic write (a static
// schedule is refused), and a one-shot in the past refused unless it is
// the one stored.
func (h handlers) save(ctx context.Context, id string, spec kvstore.Spec, o jsstore.SaveOptions) (admin.PutResponse, error) {
	o.Now = time.Now()
	res, err := h.store.SaveSpec(ctx, id, spec, o)
	if err != nil {
		return admin.PutResponse{}, err
	}
	return putResponse(id, res, o.DryRun)
}

// putResponse is the reply to a put: what was (or, dry, would be)
// stored, and the fields it changed.
func putResponse(id string, res jsstore.Saved, dry bool) (admin.PutResponse, error) {
	raw, err := res.Spec.Encode()
	if err != nil {
		return admin.PutResponse{}, fmt.Errorf("encode spec %q: %w", id, err)
	}
	changes, err := specChanges(res.Previous, res.Spec)
	if err != nil {
		return admin.PutResponse{}, err
	}
	return admin.PutResponse{ID: id, Revision: res.Revision, Created: res.Created, Unchanged: res.Unchanged,
		DryRun: dry, Spec: raw, Changes: changes}, nil
}

// decodePut decodes a put request. Without an id (in the request or in
// the spec), the id is derived from the spec's content (kvstore.DefaultKey).
func decodePut(body []byte) (admin.PutRequest, kvstore.Spec, error) {
	r, err := decode[admin.PutRequest](body)
	if err != nil {
		return r, kvstore.Spec{}, err
	}
	var spec kvstore.Spec
	r.ID, spec, err = decodeSpec(r.ID, r.Spec)
	return r, spec, err
}

// decodeSpec decodes a put's spec and resolves its id: id, else the
// spec's, else the content hash (kvstore.DefaultKey).
func decodeSpec(id string, raw json.RawMessage) (string, kvstore.Spec, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return id, kvstore.Spec{}, &kvstore.FieldError{Field: "spec", Reason: "missing: the schedule's spec (docs/records.md)"}
	}
	spec, err := kvstore.DecodeSpec(raw)
	if err != nil {
		return id, spec, err
	}
	if id == "" {
		id = spec.ID
	}
	if id == "" {
		if err := kvstore.ValidateWorkflow(spec.Workflow); err != nil {
			return id, spec, err
		}
		id = kvstore.DefaultKey(spec)
	}
	return id, spec, kvstore.ValidateID(id)
}

func (h handlers) scheduleGet(ctx context.Context, body []byte) (any, error) {
	r, err := decodeID(body, func(r admin.IDRequest) string { return r.ID })
	if err != nil {
		return nil, err
	}
	e, err := h.store.GetSpec(ctx, r.ID)
	if err != nil && e.ID == "" {
		return nil, err
	}
	return h.infoOf(ctx, e, err), nil
}

// infoOf is info of one schedule, its ended list looked up where the
// catalogue last saw one name it.
func (h handlers) infoOf(ctx context.Context, e jsstore.SpecEntry, decodeErr error) admin.ScheduleInfo {
	return h.model.Info(ctx, h.listsOf(e.ID), e, decodeErr)
}

// listsOf is a reader of the ended lists that looks for schedule id
// where the catalogue last saw one name it.
func (h handlers) listsOf(id string) *jsstore.EndedReader {
	lists := h.store.NewEndedReader()
	if key := h.cat.listOf(id); key != "" {
		lists.Hint(id, key)
	}
	return lists
}

func (h handlers) scheduleDelete(ctx context.Context, body []byte) (any, error) {
	r, err := decodeID(body, func(r admin.DeleteRequest) string { return r.ID })
	if err != nil {
		return nil, err
	}
	if err := h.store.DeleteSpecAt(ctx, r.ID, r.IfRevision); err != nil {
		return nil, err
	}
	return map[string]any{"id": r.ID, "removed": true}, nil
}

func (h handlers) schedulePause(ctx context.Context, body []byte) (any, error) {
	r, err := decodeID(body, func(r admin.PauseRequest) string { return r.ID })
	if err != nil {
		return nil, err
	}
	if r.Until.IsZero() && untilGiven(body) {
		// The zero time is no end: read as "no until", it paused for ever.
		return nil, &kvstore.FieldError{Field: "until", Value: r.Until.Format(time.RFC3339), Reason: "is not in the future"}
	}
	if r.For != "" {
		if !r.Until.IsZero() {
			return nil, &kvstore.FieldError{Field: "for", Value: r.For, Reason: "give until or for, not both"}
		}
		if r.Until, err = pauseEnd(r.For, time.Now()); err != nil {
			return nil, err
		}
	}
	return h.control.Pause(ctx, r.ID, r.Note, r.Until)
}

// pauseEnd is the end of a pause "for" d (timearg's grammar) from now:
// d must be positive, and the end within the supported time range.
func pauseEnd(d string, now time.Time) (time.Time, error) {
	dur, err := timearg.ParseDuration(d)
	if err != nil {
		return time.Time{}, &kvstore.FieldError{Field: "for", Value: d, Reason: err.Error()}
	}
	end := now.Add(dur)
	switch {
	case dur <= 0:
		return time.Time{}, &kvstore.FieldError{Field: "for", Value: d, Reason: "must be longer than 0 " + timearg.Example}
	case !kvstore.InTimeRange(end) || end.Before(now):
		return time.Time{}, &kvstore.FieldError{Field: "for", Value: d, Reason: "ends past the supported time range " + fieldcheck.TimeRange}
	}
	return end, nil
}

// untilGiven reports whether a pause request (already decoded without
// error) carries an until other than null.
func untilGiven(body []byte) bool {
	var r struct {
		Until json.RawMessage `json:"until"`
	}
	return json.Unmarshal(body, &r) == nil && len(r.Until) > 0 && string(r.Until) != "null"
}

func (h handlers) scheduleResume(ctx context.Context, body []byte) (any, error) {
	r, err := decodeID(body, func(r admin.IDRequest) string { return r.ID })
	if err != nil {
		return nil, err
	}
	return h.control.Resume(ctx, r.ID)
}

func (h handlers) scheduleTrigger(ctx context.Context, body []byte) (any, error) {
	r, err := decodeID(body, func(r admin.TriggerRequest) string { return r.ID })
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
	r, err := decodeID(body, func(r admin.SkipRequest) string { return r.ID })
	if err != nil {
		return nil, err
	}
	n := 1
	if r.Count != nil {
		n = *r.Count
	}
	return h.control.Skip(ctx, r.ID, n)
}

func (h handlers) scheduleBackfill(ctx context.Context, body []byte) (any, error) {
	r, err := decodeID(body, func(r admin.BackfillRequest) string { return r.ID })
	if err != nil {
		return nil, err
	}
	if r.Rate == 0 {
		r.Rate = 10
	}
	return h.control.Backfill(ctx, r.ID, r.From, r.To, r.Rate, r.Note)
}

func (h handlers) scheduleBackfillCancel(ctx context.Context, body []byte) (any, error) {
	r, err := decodeID(body, func(r admin.IDRequest) string { return r.ID })
	if err != nil {
		return nil, err
	}
	b, err := h.control.CancelBackfill(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": r.ID, "cancelled": true, "done": b.Done, "total": b.Total}, nil
}

func (h handlers) calendarPut(ctx context.Context, body []byte) (any, error) {
	r, err := decode[admin.CalendarRequest](body)
	if err != nil {
		return nil, err
	}
	if err := jsstore.CheckStoredCalendarName(r.Name); err != nil {
		return nil, err
	}
	e, err := h.store.PutCalendar(ctx, r.Name, r.Calendar)
	if err != nil {
		return nil, err
	}
	return map[string]any{"name": r.Name, "revision": e.Revision, "fingerprint": e.Calendar.Fingerprint()}, nil
}

func (h handlers) calendarGet(ctx context.Context, body []byte) (any, error) {
	r, err := decode[admin.CalendarRequest](body)
	if err != nil {
		return nil, err
	}
	if err := jsstore.CheckCalendarRef(r.Name); err != nil {
		return nil, err
	}
	e, err := h.store.GetCalendar(ctx, r.Name)
	if err != nil {
		return nil, err
	}
	return e.Calendar, nil
}

func (h handlers) calendarDelete(ctx context.Context, body []byte) (any, error) {
	r, err := decodeCalendar(body)
	if err != nil {
		return nil, err
	}
	if err := h.store.DeleteCalendar(ctx, r.Name, r.Force); err != nil {
		return nil, err
	}
	return map[string]any{"name": r.Name, "removed": true}, nil
}

// decodeCalendar decodes a request that names a stored calendar.
func decodeCalendar(body []byte) (admin.CalendarRequest, error) {
	r, err := decode[admin.CalendarRequest](body)
	if err != nil {
		return r, err
	}
	return r, jsstore.CheckStoredCalendarName(r.Name)
}
