package fires_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/control"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestCompletionReportsAreScopedByWorkflow: a report counts only on
// sched.done.<the slot's workflow>.<its schedule>, since that subject is
// what a worker's permissions scope; the deprecated sched.done.<id> form is
// still read (with a warning).
func TestCompletionReportsAreScopedByWorkflow(t *testing.T) {
	t.Parallel()
	h := setup(t)
	steps := make(chan fires.Step, 64)
	h.engine(fires.Config{StepHook: stepsTo(steps)})
	h.put("ov", kvstore.Spec{Workflow: "wf", Every: "1s", Overlap: kvstore.OverlapSkip, CompletionTimeout: "1h"})
	first := h.waitFires("ov", 10*time.Second, atLeast(1))[0]
	h.waitTick(first.meta.SlotID)
	report := func(subject, slot string) {
		t.Helper()
		data, _ := json.Marshal(kvstore.DoneReport{SlotID: slot, Outcome: kvstore.OutcomeFailed, Worker: "test"})
		if err := h.js.Conn().Publish(subject, data); err != nil {
			t.Fatal(err)
		}
	}
	waitSignal := func(s fires.Step) { t.Helper(); waitStep(t, 10*time.Second, steps, s) }
	// Another workflow's worker forges a report for this slot: refused.
	report("sched.done.payroll.ov", first.meta.SlotID)
	waitSignal(fires.StepReportRefused)
	// A report on this schedule's subject about another schedule's slot:
	// ignored.
	report("sched.done.wf.ov", "other.1796025876000")
	waitSignal(fires.StepReportIgnored)
	if tick, _ := h.store.SlotEntry(context.Background(), first.meta.SlotID); tick.Status != kvstore.TickDispatched {
		t.Fatalf("tick %s after forged reports, want dispatched", tick.Status)
	}
	// The genuine report ends the run: the next slot fires.
	report("sched.done.wf.ov", first.meta.SlotID)
	second := h.waitFires("ov", 10*time.Second, atLeast(2))[1]
	testwait.Eventually(t, 5*time.Second, "the first slot's tick failed", func() bool {
		tick, _ := h.store.SlotEntry(context.Background(), first.meta.SlotID)
		return tick.Status == kvstore.TickFailed
	})
	// The deprecated form still counts, with a warning.
	h.waitTick(second.meta.SlotID)
	report("sched.done.ov", second.meta.SlotID)
	waitSignal(fires.StepReportLegacy)
	testwait.Eventually(t, 5*time.Second, "the second slot's tick failed", func() bool {
		tick, _ := h.store.SlotEntry(context.Background(), second.meta.SlotID)
		return tick.Status == kvstore.TickFailed
	})
}

// TestCompletionBeforeTheTickIsRecorded: a worker that reports before the
// slot's dispatched tick is written (it is sent after the publish's
// acknowledgement; a core subscriber sees the fire first) still gets its
// outcome into the ledger.
func TestCompletionBeforeTheTickIsRecorded(t *testing.T) {
	t.Parallel()
	h := setup(t)
	nc := h.js.Conn()
	slots := make(chan string, 64)
	sub, err := nc.Subscribe("sched.fire.fast.>", func(m *nats.Msg) {
		slot := m.Header.Get(kvstore.HeaderMsgID)
		data, _ := json.Marshal(kvstore.DoneReport{SlotID: slot, Outcome: kvstore.OutcomeCompleted, Worker: "quick"})
		_ = nc.Publish("sched.done.fast.quick", data) // at once: before the tick, as often as not
		slots <- slot
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	h.engine(fires.Config{})
	h.put("quick", kvstore.Spec{Workflow: "fast", Every: "1s"})
	for range 3 {
		slot := testwait.Receive(t, 10*time.Second, "a fire of quick", slots)
		testwait.Eventually(t, 10*time.Second, "the slot's tick completed", func() bool {
			tick, err := h.store.SlotEntry(context.Background(), slot)
			return err == nil && tick.Status == kvstore.TickCompleted
		})
	}
}

// TestCompletionAfterTheWorkflowChanged: a slot fired for workflow "old"
// is reported on sched.done.old.<id> after the spec moved to workflow
// "new": the stream shows the slot fired for "old", so the report counts
// (its ledger entry gets the outcome), while "new"'s workers cannot
// report on it.
func TestCompletionAfterTheWorkflowChanged(t *testing.T) {
	t.Parallel()
	h := setup(t)
	steps := make(chan fires.Step, 64)
	h.engine(fires.Config{StepHook: stepsTo(steps)})
	spec := kvstore.Spec{Workflow: "old", Every: "1s", Overlap: kvstore.OverlapSkip, CompletionTimeout: "1h"}
	h.put("wc", spec)
	first := h.waitFires("wc", 10*time.Second, atLeast(1))[0]
	spec.Workflow = "new"
	h.put("wc", spec)
	report := func(subject string) {
		t.Helper()
		data, _ := json.Marshal(kvstore.DoneReport{SlotID: first.meta.SlotID, Outcome: kvstore.OutcomeCompleted, Worker: "w"})
		if err := h.js.Conn().Publish(subject, data); err != nil {
			t.Fatal(err)
		}
	}
	// The engine holds the new spec once it skips a slot (the first one
	// still runs) under the new workflow.
	testwait.Eventually(t, 10*time.Second, "a slot skipped under the new workflow", func() bool {
		hist, _ := h.store.History(context.Background(), "wc")
		for _, tk := range hist {
			if tk.Status == kvstore.TickSkipped && tk.Workflow == "new" {
				return true
			}
		}
		return false
	})
	report("sched.done.new.wc")
	waitStep(t, 10*time.Second, steps, fires.StepReportRefused)
	report("sched.done.old.wc")
	testwait.Eventually(t, 10*time.Second, "the slot completed in the ledger", func() bool {
		tick, err := h.store.SlotEntry(context.Background(), first.meta.SlotID)
		return err == nil && tick.Status == kvstore.TickCompleted && tick.Workflow == "old"
	})
}

// TestCompletionOfExtraSlots (issue 51): a worker's report on a trigger's
// slot ("<id>.trigger-<ms>") or a backfill's ("<id>.backfill-<ms>")
// completes its ledger entry at the slot's time, never the zero time, and
// the history shows each such slot once, with the fire's stream position
// and reason and the worker's outcome.
func TestCompletionOfExtraSlots(t *testing.T) {
	t.Parallel()
	h := setup(t)
	h.engine(fires.Config{})
	ctx := context.Background()
	h.put("ex", kvstore.Spec{Workflow: "wf", Every: "1h"})
	c := control.Control{Store: h.store}
	if _, err := c.Trigger(ctx, "ex", "by hand"); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, err := c.Backfill(ctx, "ex", now.Add(-150*time.Minute), now.Add(-30*time.Minute), 100, ""); err != nil {
		t.Fatal(err)
	}
	extra := func(fs []fireMsg) []fireMsg {
		var out []fireMsg
		for _, f := range fs {
			if f.meta.Reason == kvstore.ReasonTrigger || f.meta.Reason == kvstore.ReasonBackfill {
				out = append(out, f)
			}
		}
		return out
	}
	fired := extra(h.waitFires("ex", 10*time.Second, func(fs []fireMsg) bool { return len(extra(fs)) >= 3 }))
	for _, f := range fired {
		data, _ := json.Marshal(kvstore.DoneReport{SlotID: f.meta.SlotID, Outcome: kvstore.OutcomeCompleted, Worker: "w1"})
		if err := h.js.Conn().Publish("sched.done.wf.ex", data); err != nil {
			t.Fatal(err)
		}
	}
	ticks, err := h.js.KeyValue(ctx, "sched_ticks")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fired {
		testwait.Eventually(t, 10*time.Second, "the completion of "+f.meta.SlotID+" in the ledger", func() bool {
			tick, err := h.store.SlotEntry(ctx, f.meta.SlotID)
			return err == nil && tick.Status == kvstore.TickCompleted
		})
		e, err := ticks.Get(ctx, f.meta.SlotID)
		if err != nil {
			t.Fatal(err)
		}
		tick, err := kvstore.DecodeTick(e.Value())
		if err != nil || !tick.Slot.Equal(f.meta.ScheduledAt) || tick.SlotID != f.meta.SlotID {
			t.Errorf("sched_ticks/%s = %s (%v); want slot %s", f.meta.SlotID, e.Value(), err, f.meta.ScheduledAt.UTC().Format(time.RFC3339Nano))
		}
	}
	hist, err := h.store.History(ctx, "ex")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fired {
		var rows []kvstore.Tick
		for _, tk := range hist {
			if tk.Key() == f.meta.SlotID {
				rows = append(rows, tk)
			}
		}
		if len(rows) != 1 {
			t.Errorf("history of %s: %d rows, want 1: %+v", f.meta.SlotID, len(rows), rows)
			continue
		}
		r := rows[0]
		if !r.Slot.Equal(f.meta.ScheduledAt) || r.Status != kvstore.TickCompleted || r.Outcome != "w1" || r.Seq != f.seq || r.Reason == "" {
			t.Errorf("history of %s = %+v; want completed by w1 at %s, seq %d, with the fire's reason", f.meta.SlotID, r, f.meta.ScheduledAt, f.seq)
		}
	}
	for _, tk := range hist {
		if tk.Slot.IsZero() {
			t.Errorf("history row %s at the zero time: %+v", tk.Key(), tk)
		}
	}
}

// TestCompletionWhileItsScheduleIsBusy: a report that comes in while a
// worker of the engine holds its schedule (here, claiming the next of two
// triggers) is recorded once that worker is done, not at the schedule's
// next slot an hour later.
func TestCompletionWhileItsScheduleIsBusy(t *testing.T) {
	t.Parallel()
	h := setup(t)
	var claims atomic.Int32
	held, release := make(chan struct{}), make(chan struct{})
	h.engine(fires.Config{StepHook: func(s fires.Step) {
		if s == fires.StepAfterClaim && claims.Add(1) == 2 {
			close(held)
			<-release // the second trigger's worker holds the schedule
		}
	}})
	ctx := context.Background()
	h.put("busy", kvstore.Spec{Workflow: "wf", Every: "1h"})
	c := control.Control{Store: h.store}
	for range 2 {
		if _, err := c.Trigger(ctx, "busy", ""); err != nil {
			t.Fatal(err)
		}
	}
	first := h.waitFires("busy", 10*time.Second, atLeast(1))[0]
	testwait.Done(t, 10*time.Second, "the second trigger's claim", held)
	data, _ := json.Marshal(kvstore.DoneReport{SlotID: first.meta.SlotID, Outcome: kvstore.OutcomeCompleted, Worker: "w1"})
	if err := h.js.Conn().Publish("sched.done.wf.busy", data); err != nil {
		t.Fatal(err)
	}
	if err := h.js.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the report reaches the engine while its worker is held
	close(release)
	testwait.Eventually(t, 10*time.Second, "the first trigger completed in the ledger", func() bool {
		tick, err := h.store.SlotEntry(ctx, first.meta.SlotID)
		return err == nil && tick.Status == kvstore.TickCompleted
	})
}
