package fires_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/control"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// A schedule removed while this instance's spec watch lags its state
// watch: a removal deletes the spec, then the state record, and the
// record's delete can come in first (the specs go through a decoder, the
// records do not). Taken for a
// record deleted by hand, the schedule was planned anew from the spec
// still held, owed its slots from the misfire threshold back, and fired
// one of them after its removal (the 1-hour soak of 5 December: a slot
// 59.6 s late, 3 ms after the removal). Now the spec is read first, and
// nothing fires until the watch brings its delete.
func TestRemovalSeenRecordFirstFiresNothing(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	spec := kvstore.Spec{Workflow: "wf", Every: "1s"}
	h.put("gone", spec)  // first: the held spec watch delivers it
	h.put("stays", spec) // second: held back until the release
	// Paused, so that nothing of it fires before the removal.
	if _, err := (control.Control{Store: h.store}).Pause(ctx, "gone", "", time.Time{}); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	steps := make(chan fires.Step, 4096)
	e := h.startLoading(fires.Config{StepHook: stepsTo(steps)}, fires.HoldSpecs(1, release))
	// The engine owns the schedule's shard and has decided its record: it
	// planned the pause's record.
	err := testwait.Until(20*time.Second, "the paused record planned by the engine", func() error {
		st, _, err := h.store.GetState(ctx, "gone")
		if err == nil && st.Plan == "" {
			err = errors.New("not planned yet")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// The removal (client.Unschedule): the spec deleted, its delete held
	// back in the watch, then the record.
	if err := h.store.DeleteSpec(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(20 * time.Second)
	for stale := false; !stale; {
		select {
		case s := <-steps:
			stale = s == fires.StepSpecStale
		case <-h.added:
			if fs := h.of("gone"); len(fs) > 0 {
				t.Fatalf("removed, it fired slot %s at %s", fs[0].meta.ScheduledAt.Format(time.TimeOnly), fs[0].meta.DispatchedAt.Format(time.TimeOnly))
			}
		case <-deadline:
			t.Fatal("no sign within 20s that the engine checked the removed schedule's spec")
		}
	}
	releaseAndWaitReady(t, e, release)
	h.waitFires("stays", 20*time.Second, atLeast(2))
	h.allFires()
	if fs := h.of("gone"); len(fs) > 0 {
		t.Errorf("removed, it fired %d slots, the first %s", len(fs), fs[0].meta.ScheduledAt.Format(time.TimeOnly))
	}
}
