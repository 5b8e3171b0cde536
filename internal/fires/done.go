package fires

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/pipeline"
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

// applyDones records completion reports: the slot's tick gets the
// outcome, and a matching Running ends (the overlap policies go on).
func (w worker) applyDones(ctx context.Context, j job, r *result) {
	for _, d := range j.dones {
		t, terr := w.e.store.GetTick(ctx, d.SlotID)
		want := j.workflow // the slot's own workflow when its tick says (the spec may have changed since)
		if terr == nil && t.Workflow != "" {
			want = t.Workflow
		}
		if d.Workflow != "" && d.Workflow != want {
			w.e.step(StepReportRefused)
			w.e.log.Warn("completion report refused: its subject names another workflow than the slot's",
				"slot", d.SlotID, "subject_workflow", d.Workflow, "slot_workflow", want, "worker", d.Worker)
			continue
		}
		status := kvstore.TickStarted
		switch d.Outcome {
		case kvstore.OutcomeCompleted:
			status = kvstore.TickCompleted
		case kvstore.OutcomeFailed:
			status = kvstore.TickFailed
		case kvstore.OutcomeCancelled:
			status = kvstore.TickCancelled
		}
		if errors.Is(terr, kvstore.ErrNotFound) && time.Since(d.At) < w.e.cfg.ClaimTTL+pipeline.AckWait {
			// The worker was faster than the slot's dispatched tick (it
			// is sent after the publish is acknowledged): record the
			// outcome once the tick is there. Running ends now.
			r.requeue = append(r.requeue, d)
		}
		if terr == nil {
			t.Status, t.Outcome, t.DoneAt = status, d.Error, d.At.UTC()
			if d.Worker != "" {
				t.Outcome = strings.TrimSpace(d.Worker + " " + d.Error)
			}
			if err := w.e.store.PutTick(ctx, t); err != nil {
				w.e.log.Warn("record completion", "slot", d.SlotID, "err", err)
			}
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
