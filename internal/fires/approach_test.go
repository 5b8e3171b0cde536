package fires_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/control"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// These tests hold back the pass that compiles, after Ready, the specs
// left uncompiled at the initial load (fires.CompileOnApproach), so that
// what is compiled on approach and what by that pass is seen on any
// machine.

// uncompiled is e's count of specs not compiled yet.
func uncompiled(t *testing.T, e *fires.Engine) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h, err := e.Health(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return h.Uncompiled
}

// TestCompiledOnApproach: a schedule whose state record says its slot is
// an hour away is indexed at the start without its spec compiled, and is
// compiled as its slot approaches: it fires on its slot while the pass that
// compiles the rest is held back, and that pass, let go, compiles the rest.
func TestCompiledOnApproach(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	slot := time.Now().UTC().Truncate(time.Hour).Add(2 * time.Hour)
	const n = 5
	for i := range n {
		id := fmt.Sprintf("s%d", i)
		plan := mustPlan(t, id)
		h.put(id, hourlySpec())
		// Written after the spec, as a fire leaves it: the spec is not newer.
		st := kvstore.State{Plan: plan, Next: slot, Fires: 3, UpdatedAt: time.Now().UTC()}
		if i > 0 {
			st.Next = slot.Add(time.Hour) // due an hour after s0
		}
		if _, err := h.store.CreateState(ctx, id, st); err != nil {
			t.Fatal(err)
		}
	}
	clk, f := clock.NewFake(slot.Add(-time.Minute))
	release := make(chan struct{})
	defer close(release)
	cfg, onApproach := fires.Config{Clock: clk, LeaseTTL: 2 * time.Hour}, fires.CompileOnApproach(30*time.Second, release)
	e := h.engine(cfg, onApproach)
	if got := uncompiled(t, e); got != n {
		t.Fatalf("%d specs uncompiled at Ready, want all %d (each due beyond the lead)", got, n)
	}
	f.Set(slot)
	got := h.waitFires("s0", 10*time.Second, atLeast(1))
	if !got[0].meta.ScheduledAt.Equal(slot) {
		t.Fatalf("s0 fired slot %s, want %s", got[0].meta.ScheduledAt, slot)
	}
	if got := uncompiled(t, e); got != n-1 {
		t.Fatalf("%d specs uncompiled after s0 fired, want %d (only s0 compiled, on approach)", got, n-1)
	}
	testwait.Eventually(t, 10*time.Second, "s0's record of its fire", func() bool {
		st, _ := h.record("s0")
		return st.Fires > 3 && st.Next.Equal(slot.Add(time.Hour))
	})
}

// TestCompilePassChecksForgedRecords: a state record forged before the
// start with a next slot in 2099 is not believed for long: the pass after
// Ready compiles its spec, and its plausibility check re-plans it (an
// event says why), so that it fires on its cadence again. A spec that
// decodes but cannot compile (a cron that never fires, written straight
// into the bucket), whose record says it is due in a day, is reported
// invalid by the same pass.
func TestCompilePassChecksForgedRecords(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	replanned, err := h.js.Conn().SubscribeSync("sched.event.replanned.>")
	if err != nil {
		t.Fatal(err)
	}
	invalid, err := h.js.Conn().SubscribeSync("sched.event.invalid.>")
	if err != nil {
		t.Fatal(err)
	}
	specs, err := h.js.KeyValue(ctx, h.store.Layout().WithDefaults().SpecsBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := specs.Put(ctx, "never", []byte(`{"workflow":"wf","cron":"0 0 30 2 *"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.CreateState(ctx, "never", kvstore.State{Plan: "forged", Next: time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second),
		UpdatedAt: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	spec := kvstore.Spec{Workflow: "wf", Every: "1s", Align: kvstore.AlignEpoch} // (its plan is the one this test writes)
	c, err := compile.Compile(spec, "forged", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.put("forged", spec)
	far := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := h.store.CreateState(ctx, "forged", kvstore.State{Plan: c.Plan, Next: far, UpdatedAt: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	e := h.engine(fires.Config{}, fires.CompileOnApproach(fires.DefaultCompileLead, release))
	if got := uncompiled(t, e); got != 2 {
		t.Fatalf("%d specs uncompiled at Ready, want 2: their records made them look far away", got)
	}
	close(release)
	if ev := nextEvent(t, invalid, 15*time.Second, "never: invalid event"); ev.Schedule != "never" || ev.Field != "cron" {
		t.Fatalf("invalid event %+v, want never's cron named", ev)
	}
	ev := nextEvent(t, replanned, 15*time.Second, "forged: replanned event")
	if ev.Schedule != "forged" || !strings.Contains(ev.Reason, "beyond the recurrence's next slot") {
		t.Fatalf("replanned event %+v, want forged's far next slot named", ev)
	}
	h.firesAfter("forged", time.Now(), 10*time.Second)
	testwait.Eventually(t, 10*time.Second, "every spec compiled", func() bool { return uncompiled(t, e) == 0 })
}

// TestChangedSpecsAreCompiledAtLoad: what may not wait for its slot's
// approach is compiled at the load even with the pass held back: a spec
// written after its state record (its plan changed while no instance ran:
// re-planned, it fires every second at once), a record with an operator's
// trigger on it, and a lazy schedule triggered after Ready.
func TestChangedSpecsAreCompiledAtLoad(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	spec, plan := hourlySpec(), mustPlan(t, "changed")
	// The next hour, unless it is so near that the engine would compile
	// later on approach (DefaultCompileLead) before this test looks: run
	// at 12:59:45, the next hour's slot was within the lead at Ready.
	slot := time.Now().UTC().Truncate(time.Hour).Add(time.Hour)
	if time.Until(slot) < 10*time.Minute {
		slot = slot.Add(time.Hour)
	}
	for _, id := range []string{"changed", "triggered", "later"} {
		st := kvstore.State{Plan: plan, Next: slot, UpdatedAt: time.Now().Add(-time.Minute).UTC()}
		if id == "triggered" {
			st.Triggers = []kvstore.Trigger{{At: time.Now().UTC(), Note: "operator"}}
		}
		if id != "changed" {
			st.Plan, st.UpdatedAt = mustPlan(t, id), time.Now().Add(time.Minute).UTC() // after the spec's write
			h.put(id, spec)
		}
		if _, err := h.store.CreateState(ctx, id, st); err != nil {
			t.Fatal(err)
		}
	}
	h.put("changed", kvstore.Spec{Workflow: "wf", Every: "1s"}) // after its record
	release := make(chan struct{})
	defer close(release)
	e := h.engine(fires.Config{}, fires.CompileOnApproach(fires.DefaultCompileLead, release))
	if got := uncompiled(t, e); got != 1 {
		t.Fatalf("%d specs uncompiled at Ready, want 1 (later)", got)
	}
	h.waitFires("changed", 10*time.Second, atLeast(2))
	h.waitFires("triggered", 10*time.Second, atLeast(1))
	if _, err := (control.Control{Store: h.store}).Trigger(ctx, "later", "operator, after Ready"); err != nil {
		t.Fatal(err)
	}
	h.waitFires("later", 10*time.Second, atLeast(1))
	if got := uncompiled(t, e); got != 0 {
		t.Fatalf("%d specs uncompiled after later was triggered, want none", got)
	}
}

// TestCalendarSpecsCompiledOnApproach: a spec that names a calendar is
// left uncompiled at the load too, unless a calendar was written after its
// state record (it may have changed the plan while no instance ran: it is
// compiled, and re-planned, at the load). A lazy one is compiled on
// approach, with its calendar, and fires on its slot; a change of a
// calendar compiles the lazy ones at once, as if they had not been lazy,
// with the pass held back all along.
func TestCalendarSpecsCompiledOnApproach(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	allDay := map[string]any{"zone": "UTC", "hours": map[string]any{"mon-sun": []string{"00:00-24:00"}}}
	putCalendar(t, h, "open", allDay)
	putCalendar(t, h, "later", allDay)
	slot := time.Now().UTC().Truncate(time.Hour).Add(2 * time.Hour)
	ids := []string{"stale", "cal0", "cal1"}
	plans := map[string]string{}
	for _, id := range ids {
		spec := hourlySpec()
		spec.Calendar = "open"
		if id == "stale" {
			spec.Calendar = "later"
		}
		h.put(id, spec)
		stored, err := h.store.GetSpec(ctx, id) // with the calendar's zone the store fills in
		if err != nil {
			t.Fatal(err)
		}
		c, err := compile.Compile(stored.Spec, id, h.store.CalendarSource(ctx), nil)
		if err != nil {
			t.Fatal(err)
		}
		plans[id] = c.Plan
	}
	holiday := map[string]any{"name": "Far off", "dates": []string{"2098-12-25"}}
	later := map[string]any{"zone": "UTC", "hours": allDay["hours"], "holidays": []any{holiday}}
	next := map[string]time.Time{"cal0": slot, "cal1": slot.Add(time.Hour), "stale": slot.Add(2 * time.Hour)}
	for _, id := range ids {
		st := kvstore.State{Plan: plans[id], Next: next[id], UpdatedAt: time.Now().UTC()}
		if _, err := h.store.CreateState(ctx, id, st); err != nil {
			t.Fatal(err)
		}
		if id == "stale" {
			putCalendar(t, h, "later", later) // after stale's record, before the others'
		}
	}

	clk, f := clock.NewFake(slot.Add(-time.Minute))
	release := make(chan struct{})
	defer close(release)
	e := h.engine(fires.Config{Clock: clk, LeaseTTL: 3 * time.Hour}, fires.CompileOnApproach(30*time.Second, release))
	if got := uncompiled(t, e); got != 2 {
		t.Fatalf("%d specs uncompiled at Ready, want 2 (cal0 and cal1; stale's calendar is newer than its record)", got)
	}
	replanned := func(id string) func() bool {
		return func() bool {
			st, _ := h.record(id)
			return st.Plan != "" && st.Plan != plans[id]
		}
	}
	testwait.Eventually(t, 10*time.Second, "stale re-planned at the load (its calendar's new plan)", replanned("stale"))
	f.Set(slot)
	got := h.waitFires("cal0", 10*time.Second, atLeast(1))
	if !got[0].meta.ScheduledAt.Equal(slot) {
		t.Fatalf("cal0 fired slot %s, want %s", got[0].meta.ScheduledAt, slot)
	}
	if got := uncompiled(t, e); got != 1 {
		t.Fatalf("%d specs uncompiled after cal0 fired, want 1 (cal1)", got)
	}
	putCalendar(t, h, "open", later)
	testwait.Eventually(t, 10*time.Second, "cal1 compiled on the calendar's change", func() bool { return uncompiled(t, e) == 0 })
	testwait.Eventually(t, 10*time.Second, "cal1 re-planned with the calendar's change", replanned("cal1"))
}
