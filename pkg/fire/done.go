package fire

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Outcomes a worker reports on sched.done.<schedule id>.
const (
	OutcomeCompleted = "completed"
	OutcomeFailed    = "failed"
	OutcomeStarted   = "started"
)

// DoneReport is the body a worker publishes on sched.done.<schedule id>
// when it finished a fire (the worker SDK does it for you).
type DoneReport struct {
	// SlotID is the fire's Nats-Msg-Id.
	SlotID string `json:"slot_id"`
	// Outcome is "completed", "failed" (given up: no more redeliveries),
	// or "started".
	Outcome string `json:"outcome"`
	// Error says why a fire failed.
	Error string `json:"error,omitempty"`
	// Worker names the worker, for the ledger.
	Worker string `json:"worker,omitempty"`
}

type doneReport struct {
	DoneReport
	Schedule string
	At       time.Time
}

func parseDone(m *nats.Msg) (doneReport, bool) {
	i := strings.LastIndexByte(m.Subject, '.')
	if i < 0 {
		return doneReport{}, false
	}
	var d doneReport
	if err := json.Unmarshal(m.Data, &d.DoneReport); err != nil || d.SlotID == "" {
		return doneReport{}, false
	}
	switch d.Outcome {
	case OutcomeCompleted, OutcomeFailed, OutcomeStarted:
	default:
		return doneReport{}, false
	}
	d.Schedule, d.At = m.Subject[i+1:], time.Now()
	return d, true
}

// applyDones records completion reports: the slot's tick gets the
// outcome, and a matching Running ends (the overlap policies go on).
func (w worker) applyDones(ctx context.Context, j job, r *result) {
	for _, d := range j.dones {
		status := kvstore.TickStarted
		switch d.Outcome {
		case OutcomeCompleted:
			status = kvstore.TickCompleted
		case OutcomeFailed:
			status = kvstore.TickFailed
		}
		if t, err := w.e.store.GetTick(ctx, d.SlotID); err == nil {
			t.Status, t.Outcome, t.DoneAt = status, d.Error, d.At.UTC()
			if d.Worker != "" {
				t.Outcome = strings.TrimSpace(d.Worker + " " + d.Error)
			}
			if err := w.e.store.PutTick(ctx, t); err != nil {
				w.e.log.Warn("record completion", "slot", d.SlotID, "err", err)
			}
		}
		if d.Outcome == OutcomeStarted {
			continue
		}
		for range 3 {
			st := r.state
			if st == nil || st.Running == nil || st.Running.SlotID != d.SlotID {
				break
			}
			next := w.next(r, w.e.cfg.Clock.Now())
			next.Running, next.LastDone = nil, w.e.cfg.Clock.Now().UTC()
			err := w.update(ctx, j, next, r)
			if !errors.Is(err, kvstore.ErrConflict) {
				break
			}
			if st, rev, gerr := w.e.store.GetState(ctx, j.id); gerr == nil {
				r.state, r.stateRev = &st, rev
			}
		}
	}
}
