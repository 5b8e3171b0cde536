package adminapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/timearg"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/wakeup"
)

func (h handlers) wakeupAdd(ctx context.Context, body []byte) (any, error) {
	r, err := decode[admin.WakeupRequest](body)
	if err != nil {
		return nil, err
	}
	req := wakeup.Request{Run: r.Run, Step: r.Step, Workflow: r.Workflow, When: r.When, WhenExpr: r.WhenExpr, At: r.At,
		Zone: r.Zone, Calendar: r.Calendar, Payload: r.Payload, Condition: r.Condition, ConditionKey: r.ConditionKey, Labels: r.Labels}
	if r.ExpireAfter != "" {
		d, err := timearg.ParseDuration(r.ExpireAfter)
		if err != nil {
			return nil, &kvstore.FieldError{Field: "expire_after", Value: r.ExpireAfter, Reason: err.Error()}
		}
		req.ExpireAfter = d
	}
	e, err := h.timers.Register(ctx, req)
	if err != nil {
		return nil, err
	}
	return map[string]any{"key": e.Key, "revision": e.Revision, "timer": e.Timer}, nil
}

// wakeupGet reads one pending timer by its run and step, whole: a record
// that is not a timer the engine fires is answered with invalid set, as a
// listing shows it.
func (h handlers) wakeupGet(ctx context.Context, body []byte) (any, error) {
	r, err := decode[admin.WakeupGetRequest](body)
	if err != nil {
		return nil, err
	}
	if err := fieldcheck.TimerID("run", r.Run); err != nil {
		return nil, &kvstore.FieldError{Field: "run", Value: r.Run, Err: err}
	}
	if err := fieldcheck.TimerID("step", r.Step); err != nil {
		return nil, &kvstore.FieldError{Field: "step", Value: r.Step, Err: err}
	}
	key := kvstore.TimerKey(r.Run, r.Step)
	e, err := h.store.GetTimer(ctx, key)
	switch {
	case errors.Is(err, kvstore.ErrNotFound):
		return nil, usererr.NotFound("timer", r.Run+"/"+r.Step)
	case err != nil && e.Revision == 0:
		return nil, fmt.Errorf("timer %s/%s: %w", r.Run, r.Step, err)
	}
	it := admin.TimerItem{Key: key, Timer: e.Timer}
	if err == nil {
		err = kvstore.ValidateTimer(key, e.Timer)
	}
	if err != nil {
		it.Invalid = usererr.Message(err)
	}
	return admin.TimerReply{TimerItem: it, Revision: e.Revision}, nil
}

func (h handlers) wakeupCancel(ctx context.Context, body []byte) (any, error) {
	r, err := decode[admin.WakeupCancelRequest](body)
	if err != nil {
		return nil, err
	}
	if r.Step == "" {
		n, err := h.timers.CancelRun(ctx, r.Run)
		if err != nil {
			return nil, err
		}
		return map[string]any{"run": r.Run, "cancelled": n}, nil
	}
	out, err := h.timers.Cancel(ctx, r.Run, r.Step)
	if errors.Is(err, kvstore.ErrNotFound) {
		return nil, usererr.NotFound("timer", r.Run+"/"+r.Step)
	}
	if err != nil {
		return nil, fmt.Errorf("timer %s/%s: %w", r.Run, r.Step, err)
	}
	return map[string]any{"run": r.Run, "step": r.Step, "outcome": out}, nil
}
