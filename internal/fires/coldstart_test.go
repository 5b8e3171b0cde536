package fires_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// These tests hold the engine's initial load back after a few records
// (fires.HoldSpecs, fires.HoldStates), so that what an instance does while
// its index is still loading is seen on any machine, fast or slow.

// startLoading starts an engine without waiting for its index, on the
// harness's store unless cfg names one (its own connection's, to crash).
func (h *harness) startLoading(cfg fires.Config, hooks ...fires.Hook) *fires.Engine {
	h.t.Helper()
	if cfg.Store == nil {
		cfg.Store = h.store
	}
	e, err := fires.NewWith(cfg, hooks...)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = e.Stop(context.Background()) })
	return e
}

// releaseAndWaitReady lets a held load go on and waits for the index.
func releaseAndWaitReady(t *testing.T, e *fires.Engine, release chan struct{}) {
	t.Helper()
	if isReady(e) {
		t.Fatal("the index was complete while its load was held back")
	}
	close(release)
	testwait.Done(t, 10*time.Second, "the engine's index after the load was released", e.Ready())
}

func isReady(e *fires.Engine) bool {
	select {
	case <-e.Ready():
		return true
	default:
		return false
	}
}

// dueRecurring writes an hourly schedule id whose state record says its
// slot at hour is due (its last fire an hour before).
func (h *harness) dueRecurring(id string, hour time.Time) {
	h.t.Helper()
	recurring := kvstore.Spec{Workflow: "wf", Every: "1h", Align: kvstore.AlignEpoch, MisfireThreshold: "2h"}
	h.put(id, recurring)
	c, err := compile.Compile(recurring, id, nil, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.store.CreateState(context.Background(), id, kvstore.State{Plan: c.Plan, Next: hour, UpdatedAt: hour.Add(-time.Hour)}); err != nil {
		h.t.Fatal(err)
	}
}

// TestDueWorkFiresBeforeTheIndexIsComplete: an instance starting on many
// schedules fires the ones already due while the rest of the index is
// still loading: a new one-shot (no state record), whose spec has come,
// and a recurring schedule whose state record says its slot is due, whose
// spec is held back in the watch (it is fetched ahead of it).
func TestDueWorkFiresBeforeTheIndexIsComplete(t *testing.T) {
	h := setup(t)
	now := time.Now().UTC()
	hour := now.Truncate(time.Hour)
	// Written first and second: the spec watch delivers the one-shot,
	// then is held.
	h.put("oneshot", kvstore.Spec{Workflow: "wf", At: &now})
	h.dueRecurring("recurring", hour)
	for i := range 50 {
		h.put(fmt.Sprintf("later%02d", i), kvstore.Spec{Workflow: "wf", Every: "24h", Anchor: new(now.Add(12 * time.Hour))})
	}
	release := make(chan struct{})
	e := h.startLoading(fires.Config{}, fires.HoldSpecs(1, release))

	one := h.waitFires("oneshot", 10*time.Second, atLeast(1))
	rec := h.waitFires("recurring", 10*time.Second, atLeast(1))
	if !rec[0].meta.ScheduledAt.Equal(hour) {
		t.Fatalf("recurring fired %s, want its due slot %s", rec[0].meta.ScheduledAt, hour)
	}
	releaseAndWaitReady(t, e, release)
	if len(h.of("oneshot")) != 1 || len(h.of("recurring")) != 1 || one[0].meta.SlotID != kvstore.SlotID("oneshot", now) {
		t.Fatalf("fires %d and %d, want one each", len(h.of("oneshot")), len(h.of("recurring")))
	}
}

// TestDueWorkFiresBeforeTheSpecsWatchStarts: the specs' watch starts
// beside the run (starting it takes the server a walk of every spec's
// last revision: 0.7 s at a million), so a schedule whose state record says
// it is due fires before that watch has started, its spec fetched ahead of
// it; the index is ready only once the watch has started and loaded.
func TestDueWorkFiresBeforeTheSpecsWatchStarts(t *testing.T) {
	h := setup(t)
	hour := time.Now().UTC().Truncate(time.Hour)
	h.dueRecurring("recurring", hour)
	release := make(chan struct{})
	e := h.startLoading(fires.Config{}, fires.HoldSpecsWatch(release))

	rec := h.waitFires("recurring", 10*time.Second, atLeast(1))
	if !rec[0].meta.ScheduledAt.Equal(hour) {
		t.Fatalf("recurring fired %s, want its due slot %s", rec[0].meta.ScheduledAt, hour)
	}
	releaseAndWaitReady(t, e, release)
	if n := len(h.of("recurring")); n != 1 {
		t.Fatalf("recurring fired %d times, want once", n)
	}
}

// claimCounter is an Observer that counts claim CASes.
type claimCounter struct{ won, lost atomic.Int64 }

func (c *claimCounter) Fired(string, time.Duration, string) {}
func (c *claimCounter) NotFired(string, string, int)        {}
func (c *claimCounter) Leases(int)                          {}
func (c *claimCounter) GuardsClosed(int)                    {}
func (c *claimCounter) Event(kvstore.EventKind)             {}
func (c *claimCounter) PublishError(string)                 {}
func (c *claimCounter) PublishBlocked(string, bool)         {}
func (c *claimCounter) Claimed(conflict bool) {
	if conflict {
		c.lost.Add(1)
	} else {
		c.won.Add(1)
	}
}

// TestSpecBeforeItsStateIsNotTakenForNew: while the state records are
// still loading, a schedule whose spec has come but whose state record has
// not is not planned as new. Planned as new, its slot (claimed and settled
// already, as its held-back state says) would be due and claimed again; it
// waits instead, and fires its next slot once, with no claim lost.
func TestSpecBeforeItsStateIsNotTakenForNew(t *testing.T) {
	h := setup(t)
	ctx := context.Background()
	// slot is the next whole hour; the engine's clock reads 10 s past it.
	slot := time.Now().UTC().Truncate(time.Hour).Add(time.Hour)
	spec := kvstore.Spec{Workflow: "wf", Every: "1h", Align: kvstore.AlignEpoch}
	plan := mustPlan(t, "b")
	// b's spec comes before a's, so the loop has taken b's spec in when a
	// fires; b's state record comes after a's, and is held back.
	h.put("b", spec)
	h.put("a", spec)
	if _, err := h.store.CreateState(ctx, "a", kvstore.State{Plan: plan, Next: slot, UpdatedAt: slot.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	claimed := kvstore.Claim{Slot: slot, Token: "done", Owner: "gone", At: slot, Expires: slot.Add(30 * time.Second)}
	if _, err := h.store.CreateState(ctx, "b", kvstore.State{Plan: plan, Next: slot.Add(time.Hour), Claim: &claimed, Fires: 1, UpdatedAt: slot}); err != nil {
		t.Fatal(err)
	}
	if err := h.store.PutTick(ctx, kvstore.Tick{Schedule: "b", Workflow: "wf", Slot: slot, Status: kvstore.TickDispatched, Owner: "gone", At: slot}); err != nil {
		t.Fatal(err)
	}
	clk, f := clock.NewFake(slot.Add(10 * time.Second))
	obs := &claimCounter{}
	release := make(chan struct{})
	// Leases of two hours: the hour the test jumps stays within their 90%
	// guard (see fakeEngine).
	e := h.startLoading(fires.Config{Clock: clk, Observer: obs, LeaseTTL: 2 * time.Hour}, fires.HoldStates(1, release))

	h.waitFires("a", 10*time.Second, atLeast(1)) // due, spec and state in: fires
	releaseAndWaitReady(t, e, release)
	f.Set(slot.Add(time.Hour))
	got := h.waitFires("b", 10*time.Second, atLeast(1))
	if want := kvstore.SlotID("b", slot.Add(time.Hour)); got[0].meta.SlotID != want || len(got) != 1 {
		t.Fatalf("b fired %d times, first %s, want once: %s (its next slot)", len(got), got[0].meta.SlotID, want)
	}
	if n := obs.lost.Load(); n != 0 {
		t.Fatalf("%d claims lost their CAS: b was planned as new before its state record came", n)
	}
}

// TestStatesLoadedAtStart: of the state records in the bucket when the
// engine starts, a valid one is taken as it is (its schedule fires on its
// cadence, its fire count carried on) and an undecodable one is re-planned
// and fires, its record rewritten readable.
func TestStatesLoadedAtStart(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	h.put("kept", kvstore.Spec{Workflow: "wf", Every: "1s"})
	h.put("garbled", kvstore.Spec{Workflow: "wf", Every: "1s"})
	if _, err := h.store.CreateState(ctx, "kept", kvstore.State{Next: time.Now().Add(-time.Second).Truncate(time.Second), Fires: 41}); err != nil {
		t.Fatal(err)
	}
	kv, err := h.js.KeyValue(ctx, h.store.Layout().WithDefaults().StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "garbled", []byte("\x00 not a state record")); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	h.engine(fires.Config{})
	h.firesAfter("kept", started, 10*time.Second)
	h.firesAfter("garbled", started, 10*time.Second)
	if st, _ := h.record("kept"); st.Fires <= 41 {
		t.Errorf("kept: %d fires recorded, want the 41 loaded plus this run's", st.Fires)
	}
	testwait.Eventually(t, 10*time.Second, "garbled's record rewritten readable", func() bool {
		_, _, err := h.store.GetState(ctx, "garbled")
		return err == nil
	})
}
