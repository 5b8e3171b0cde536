package jsstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/slotid"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestLedgerFromTheStream: the fire stream is the ledger of dispatched
// slots. Published answers for a schedule's last fire only; SlotEntry and
// History merge the stream with sched_ticks (an outcome a worker reported,
// a skipped slot, a trigger's extra slot id), oldest slot first; a fire of
// another schedule, or on the workflow-only subject of older schedulers,
// is not this schedule's.
func TestLedgerFromTheStream(t *testing.T) {
	t.Parallel()
	_, s := natstest.Start(t).Store(t)
	ctx := context.Background()
	base := time.UnixMilli(1_800_000_000_000).UTC()
	publish := func(subject, schedule, slotID string, slot time.Time, reason string) uint64 {
		t.Helper()
		return natstest.PublishFire(t, s.JetStream(), natstest.Fire{Subject: subject, Schedule: schedule, Workflow: "wf",
			SlotID: slotID, At: slot, Reason: reason, Instance: "i1"})
	}
	if _, ok, err := s.Published(ctx, "a", kvstore.SlotID("a", base)); err != nil || ok {
		t.Fatalf("Published before any fire: %v, %v", ok, err)
	}
	if _, err := s.LastFired(ctx, "a"); !errors.Is(err, kvstore.ErrNotFound) {
		t.Fatalf("LastFired before any fire: %v", err)
	}
	s1 := publish("sched.fire.wf.a", "a", kvstore.SlotID("a", base), base, "")
	trigger := slotid.Extra("a", "trigger", base.Add(1500*time.Millisecond))
	s2 := publish("sched.fire.wf.a", "a", trigger, base.Add(1500*time.Millisecond), kvstore.ReasonTrigger)
	publish("sched.fire.wf.ab", "ab", kvstore.SlotID("ab", base), base, "")                                             // another schedule
	publish("sched.fire.wf", "a", kvstore.SlotID("a", base.Add(time.Hour)), base.Add(time.Hour), "")                    // the workflow-only form
	s3 := publish("sched.fire.other.a", "a", kvstore.SlotID("a", base.Add(3*time.Second)), base.Add(3*time.Second), "") // the workflow changed

	last, err := s.LastFired(ctx, "a")
	if err != nil || last.Seq != s3 || last.SlotID != kvstore.SlotID("a", base.Add(3*time.Second)) {
		t.Fatalf("LastFired = %+v, %v; want seq %d", last, err, s3)
	}
	if _, ok, _ := s.Published(ctx, "a", kvstore.SlotID("a", base)); ok {
		t.Fatal("Published answers for an earlier fire than the schedule's last")
	}
	if f, ok, err := s.Published(ctx, "a", last.SlotID); err != nil || !ok || f.Seq != s3 {
		t.Fatalf("Published(last) = %+v, %v, %v", f, ok, err)
	}
	// Ledger entries the stream cannot hold: an outcome, a skipped slot.
	done := kvstore.Tick{Schedule: "a", Workflow: "wf", Slot: base, Status: kvstore.TickCompleted, Outcome: "billing", At: base}
	skipped := kvstore.Tick{Schedule: "a", Workflow: "wf", Slot: base.Add(time.Second), Status: kvstore.TickSkipped, Reason: "paused", At: base}
	for _, tk := range []kvstore.Tick{done, skipped} {
		if err := s.PutTick(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	e, err := s.SlotEntry(ctx, kvstore.SlotID("a", base))
	if err != nil || e.Status != kvstore.TickCompleted || e.Seq != s1 || e.Stream != "SCHED_FIRES" {
		t.Fatalf("SlotEntry of a completed fire = %+v, %v; want completed at seq %d", e, err, s1)
	}
	if e, err := s.SlotEntry(ctx, trigger); err != nil || e.Status != kvstore.TickDispatched || e.Seq != s2 || e.SlotID != trigger || e.Reason != kvstore.ReasonTrigger {
		t.Fatalf("SlotEntry of a trigger = %+v, %v", e, err)
	}
	if _, err := s.SlotEntry(ctx, kvstore.SlotID("a", base.Add(time.Minute))); !errors.Is(err, kvstore.ErrNotFound) {
		t.Fatalf("SlotEntry of a slot never fired: %v", err)
	}
	hist, err := s.History(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		status kvstore.TickStatus
		seq    uint64
	}{{kvstore.TickCompleted, s1}, {kvstore.TickSkipped, 0}, {kvstore.TickDispatched, s2}, {kvstore.TickDispatched, s3}}
	if len(hist) != len(want) {
		t.Fatalf("History = %+v, want %d entries", hist, len(want))
	}
	for i, w := range want {
		if hist[i].Status != w.status || hist[i].Seq != w.seq || hist[i].Schedule != "a" {
			t.Errorf("History[%d] = %+v, want %s at seq %d", i, hist[i], w.status, w.seq)
		}
	}
}

// TestLedgerEntryWithoutASlotTime (issue 51): schedulers before the fix
// wrote a worker's outcome on a trigger's or a backfill's slot with the
// zero time. Readers show the slot's time instead, from its fire in the
// stream or else from its id, one row per slot with the worker's outcome,
// in slot order.
func TestLedgerEntryWithoutASlotTime(t *testing.T) {
	t.Parallel()
	js, s := natstest.Start(t).Store(t)
	ctx := context.Background()
	base := time.UnixMilli(1_800_000_000_000).UTC()
	trigger := slotid.Extra("z", "trigger", base.Add(1500*time.Millisecond))
	backfill := slotid.Extra("z", "backfill", base.Add(-time.Hour)) // its fire aged out of the stream
	seq := natstest.PublishFire(t, js, natstest.Fire{Schedule: "z", Workflow: "wf", SlotID: trigger, At: base.Add(1500 * time.Millisecond),
		Reason: kvstore.ReasonTrigger, Instance: "i1"})
	natstest.PublishFire(t, js, natstest.Fire{Schedule: "z", Workflow: "wf", At: base, Instance: "i1"})
	natstest.PutZeroSlotTick(t, js, "z", trigger)
	natstest.PutZeroSlotTick(t, js, "z", backfill)
	want := map[string]time.Time{trigger: base.Add(1500 * time.Millisecond), backfill: base.Add(-time.Hour)}
	for id, at := range want {
		if tk, err := s.GetTick(ctx, id); err != nil || !tk.Slot.Equal(at) || tk.Key() != id {
			t.Errorf("GetTick(%s) = %+v, %v; want slot %s", id, tk, err, at)
		}
		if tk, err := s.SlotEntry(ctx, id); err != nil || !tk.Slot.Equal(at) || tk.Status != kvstore.TickCompleted || tk.Outcome != "w1" {
			t.Errorf("SlotEntry(%s) = %+v, %v; want completed by w1 at %s", id, tk, err, at)
		}
	}
	hist, err := s.History(ctx, "z")
	if err != nil {
		t.Fatal(err)
	}
	order := []string{backfill, kvstore.SlotID("z", base), trigger}
	if len(hist) != len(order) {
		t.Fatalf("History = %+v, want %d rows", hist, len(order))
	}
	for i, id := range order {
		h := hist[i]
		switch {
		case h.Key() != id:
			t.Errorf("History[%d] is %s, want %s", i, h.Key(), id)
		case id == trigger && (!h.Slot.Equal(want[id]) || h.Status != kvstore.TickCompleted || h.Outcome != "w1" || h.Seq != seq || h.Reason != kvstore.ReasonTrigger):
			t.Errorf("History[%d] = %+v; want the trigger completed by w1 at %s, seq %d", i, h, want[id], seq)
		case id == backfill && (!h.Slot.Equal(want[id]) || h.Status != kvstore.TickCompleted || h.Outcome != "w1"):
			t.Errorf("History[%d] = %+v; want the backfill completed by w1 at %s", i, h, want[id])
		}
	}
}

// TestFiresOfLeavesNoConsumer: reading a schedule's fires deletes the
// consumer it read them with, so that reading the ledgers of many
// schedules at once (audit slots, issue 51) does not fill the fire
// stream's consumers (1,000 per stream by default).
func TestFiresOfLeavesNoConsumer(t *testing.T) {
	t.Parallel()
	_, s := natstest.Start(t).Store(t)
	ctx := context.Background()
	base := time.UnixMilli(1_800_000_000_000).UTC()
	natstest.PublishFire(t, s.JetStream(), natstest.Fire{Schedule: "a", Workflow: "wf", At: base})
	for range 3 {
		n := 0
		if err := s.FiresOf(ctx, "a", func(jsstore.Fired) bool { n++; return true }); err != nil || n != 1 {
			t.Fatalf("FiresOf: %d fires, %v", n, err)
		}
		if _, err := s.Ledger(ctx, "b"); err != nil { // no fire at all
			t.Fatal(err)
		}
	}
	stream, err := s.JetStream().Stream(ctx, "SCHED_FIRES")
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Consumers != 0 {
		t.Fatalf("%d consumers left on SCHED_FIRES after reading fires 6 times", info.State.Consumers)
	}
}
