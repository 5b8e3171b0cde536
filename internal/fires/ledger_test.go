package fires_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/slotid"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestClaimBeyondTheStreamsRetention: an unsettled claim made longer ago
// than the fire stream keeps its messages cannot be checked (had its slot
// been published, the message would have aged out). It is settled without
// a re-publish, recorded missed with "outcome unknown", and the schedule
// goes on with its next slot.
func TestClaimBeyondTheStreamsRetention(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	spec := kvstore.Spec{Workflow: "wf", Every: "1s", Align: kvstore.AlignEpoch}
	h.put("old", spec)
	now := time.Now().UTC()
	slot := now.Add(-8 * 24 * time.Hour).Truncate(time.Second) // the stream keeps 7 days
	claim := &kvstore.Claim{Slot: slot, Token: "long-gone", Owner: "dead", At: slot, Expires: slot.Add(30 * time.Second)}
	st := kvstore.State{Next: now.Truncate(time.Second).Add(2 * time.Second), Plan: compile.Plan(spec), Claim: claim, Fires: 1}
	if _, err := h.store.CreateState(ctx, "old", st); err != nil {
		t.Fatal(err)
	}
	steps := make(chan fires.Step, 256)
	h.engine(fires.Config{StepHook: stepsTo(steps)})
	waitStep(t, 10*time.Second, steps, fires.StepOutcomeUnknown)
	tick := h.waitTick(kvstore.SlotID("old", slot))
	if tick.Status != kvstore.TickMissed || !strings.Contains(tick.Reason, "outcome unknown") {
		t.Fatalf("ledger entry %+v, want missed with the outcome unknown", tick)
	}
	// The schedule fires on; the old slot never.
	fired := h.waitFires("old", 10*time.Second, atLeast(2))
	for _, f := range fired {
		if f.meta.SlotID == kvstore.SlotID("old", slot) {
			t.Fatalf("the claim's slot of %s was published again", slot)
		}
	}
}

// TestBackfillSlotNotLastFire: a backfill's slot in doubt that the stream
// holds, but not as the schedule's last fire (a backfill run again stores
// nothing: its publishes are duplicates of the first run's), is found
// among the schedule's fires and settled, not published again.
func TestBackfillSlotNotLastFire(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	spec := kvstore.Spec{Workflow: "wf", Every: "1h", Align: kvstore.AlignEpoch}
	h.put("bf", spec)
	now := time.Now().UTC()
	old := now.Truncate(time.Hour).Add(-5 * time.Hour)
	slotID := slotid.Extra("bf", "backfill", old)
	natstest.PublishFire(t, h.js, natstest.Fire{Schedule: "bf", Workflow: "wf", SlotID: slotID, At: old, Reason: kvstore.ReasonBackfill}) // the first run
	natstest.PublishFire(t, h.js, natstest.Fire{Schedule: "bf", Workflow: "wf", At: now.Truncate(time.Hour)})                             // a regular fire since
	// The second run's claim on the same slot, whose owner died.
	claim := &kvstore.Claim{Slot: old, SlotID: slotID, Reason: kvstore.ReasonBackfill, Token: "dead", Owner: "dead",
		At: now.Add(-40 * time.Second), Expires: now.Add(-10 * time.Second)}
	st := kvstore.State{Next: now.Truncate(time.Hour).Add(time.Hour), Plan: compile.Plan(spec), Claim: claim, Fires: 2}
	if _, err := h.store.CreateState(ctx, "bf", st); err != nil {
		t.Fatal(err)
	}
	steps := make(chan fires.Step, 64)
	h.engine(fires.Config{StepHook: stepsTo(steps)})
	waitStep(t, 10*time.Second, steps, fires.StepClaimSettled)
	// Counted by slot: run at the top of an hour, the schedule's next
	// regular slot may come due meanwhile and fire as well.
	got := h.waitFires("bf", 5*time.Second, atLeast(2))
	backfills := 0
	for _, f := range got {
		if f.meta.SlotID == slotID {
			backfills++
		}
	}
	if backfills != 1 {
		t.Fatalf("%d fires of bf's backfill slot %s, want the 1 published before (not again)", backfills, slotID)
	}
}
