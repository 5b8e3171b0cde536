package fires

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/slotid"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

type doneReport struct {
	kvstore.DoneReport
	Schedule string
	// Workflow is the subject's workflow; "" on the deprecated form
	// sched.done.<schedule id>.
	Workflow string
	At       time.Time
}

// doneTick is the ledger entry a completion report d completes: the
// slot's entry when it has one (an outcome reported before, or a slot
// dispatched by a scheduler from before the per-schedule fire subjects),
// else a new entry (readers of the ledger add the fire's stream position,
// see kvstore.Store.SlotEntry). ok is false when the report is refused:
// its subject names another workflow than the one the slot was fired for
// (the slot's own workflow when the ledger or the stream says, else the
// spec's). The stream is read only when the answer can differ from the
// spec's or matters: the subject names another workflow than the spec's
// (the spec's may have changed since the fire), or the report would end
// the schedule's running slot (an overlap policy waits on it); a report
// that only records an outcome costs no read.
func (w worker) doneTick(ctx context.Context, j slotJob, d doneReport, running bool) (kvstore.Tick, bool) {
	t, err := w.e.store.GetTick(ctx, d.SlotID)
	switch {
	case err == nil:
	case errors.Is(err, kvstore.ErrNotFound) || errors.Is(err, kvstore.ErrInvalid):
		t = kvstore.Tick{Schedule: j.id, Workflow: j.workflow, SlotID: d.SlotID}
		if d.Workflow != "" && (d.Workflow != j.workflow || running) {
			if f, published, ferr := w.e.store.Published(ctx, j.id, d.SlotID); ferr == nil && published {
				t = f.Tick()
			}
		}
		t.Owner, t.At = w.e.cfg.Instance, w.e.cfg.Clock.Now().UTC()
	default:
		w.e.log.Warn("read the ledger entry of a completion report", "slot", d.SlotID, "err", err)
		t = kvstore.Tick{Schedule: j.id, Workflow: j.workflow, SlotID: d.SlotID,
			Owner: w.e.cfg.Instance, At: w.e.cfg.Clock.Now().UTC()}
	}
	if t.Slot.IsZero() {
		// The slot's time is in its id, a trigger's or a backfill's
		// ("<id>.<kind>-<ms>") as well as a regular slot's.
		if _, kind, slot, perr := slotid.ParseAny(d.SlotID); perr == nil {
			t.Slot = slot
			if kind == "" && kvstore.SlotID(j.id, slot) == d.SlotID {
				t.SlotID = ""
			}
		}
	}
	want := cmp.Or(t.Workflow, j.workflow)
	if d.Workflow != "" && d.Workflow != want {
		w.e.step(StepReportRefused)
		w.e.log.Warn("completion report refused: its subject names another workflow than the slot's",
			"slot", d.SlotID, "subject_workflow", d.Workflow, "slot_workflow", want, "worker", d.Worker)
		return kvstore.Tick{}, false
	}
	return t, true
}

// parseDone reads a report on <prefix>.done.<workflow>.<schedule id>, or
// on the deprecated <prefix>.done.<schedule id> (still read for one
// release). The prefix is one token (kvstore.ValidatePrefix), and so are
// workflows and ids, so the token count tells the forms apart. A report
// whose slot is not one of the subject's schedule is refused: the subject
// is what permissions scope, so it must be what the report is about.
func parseDone(m *nats.Msg) (doneReport, bool) {
	tokens := strings.Split(m.Subject, ".")
	var d doneReport
	switch len(tokens) {
	case 3:
		d.Schedule = tokens[2]
	case 4:
		d.Workflow, d.Schedule = tokens[2], tokens[3]
	default:
		return doneReport{}, false
	}
	if d.Schedule == "" || len(tokens) == 4 && d.Workflow == "" {
		return doneReport{}, false
	}
	if err := json.Unmarshal(m.Data, &d.DoneReport); err != nil || !strings.HasPrefix(d.SlotID, d.Schedule+".") {
		return doneReport{}, false
	}
	switch d.Outcome {
	case kvstore.OutcomeCompleted, kvstore.OutcomeFailed, kvstore.OutcomeStarted, kvstore.OutcomeCancelled:
	default:
		return doneReport{}, false
	}
	d.At = time.Now()
	return d, true
}

// subscribeDones feeds completion reports to dones until ctx ends. The
// first report on the deprecated subject form is logged at warn, once per
// subscription.
func (e *Engine) subscribeDones(ctx context.Context, dones chan<- doneReport) (*nats.Subscription, error) {
	subject := e.store.Layout().DoneSubjects()
	var legacy sync.Once
	sub, err := e.store.JetStream().Conn().Subscribe(subject, func(m *nats.Msg) {
		d, ok := parseDone(m)
		if !ok {
			e.step(StepReportIgnored)
			e.log.Debug("completion report ignored: not <prefix>.done.<workflow>.<schedule id> with a known outcome and a slot of that schedule",
				"subject", m.Subject)
			return
		}
		if d.Workflow == "" {
			e.step(StepReportLegacy)
			legacy.Do(func() {
				e.log.Warn("completion report on a deprecated subject: report on <prefix>.done.<workflow>.<schedule id>; the old form is read for one more release",
					"subject", m.Subject, "worker", d.Worker)
			})
		}
		select {
		case dones <- d:
		case <-ctx.Done():
		}
	})
	if err != nil {
		return nil, fmt.Errorf("fire: subscribe %s: %w", subject, err)
	}
	return sub, nil
}

// applyDones records completion reports: the slot's ledger entry gets the
// outcome, and a matching Running ends (the overlap policies go on).
func (w worker) applyDones(ctx context.Context, j slotJob, r *slotResult) {
	for _, d := range j.dones {
		running := r.state != nil && r.state.Running != nil && r.state.Running.SlotID == d.SlotID
		t, ok := w.doneTick(ctx, j, d, running)
		if !ok {
			continue
		}
		switch d.Outcome {
		case kvstore.OutcomeCompleted:
			t.Status = kvstore.TickCompleted
		case kvstore.OutcomeFailed:
			t.Status = kvstore.TickFailed
		case kvstore.OutcomeCancelled:
			t.Status = kvstore.TickCancelled
		default:
			t.Status = kvstore.TickStarted
		}
		t.Outcome, t.DoneAt = d.Error, d.At.UTC()
		if d.Worker != "" {
			t.Outcome = strings.TrimSpace(d.Worker + " " + d.Error)
		}
		if err := w.e.store.PutTick(ctx, t); err != nil {
			w.e.log.Warn("record completion", "slot", d.SlotID, "err", err)
		}
		if d.Outcome == kvstore.OutcomeStarted {
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
