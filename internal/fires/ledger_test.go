package fires_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/fires"
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
	st := kvstore.State{Next: now.Truncate(time.Second).Add(2 * time.Second), Plan: spec.Plan(), Claim: claim, Fires: 1}
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
