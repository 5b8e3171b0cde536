package fires_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestNeverFiredScheduleOwesItsSlots is issue 51's first case: a
// schedule indexed by a running scheduler (planned in memory, no state
// record yet), then every scheduler stopped before its first fire, and
// one started again 20 s later. The slots in between had no fire, no
// ledger entry and no event, under every misfire policy. Now each is owed
// from the spec's write: fire_all fires every one of them once, in order;
// skip records the ones late past the threshold missed and fires the
// rest; fire_once fires one catch-up for the late ones and the rest on
// time.
func TestNeverFiredScheduleOwesItsSlots(t *testing.T) {
	for _, policy := range []kvstore.MisfirePolicy{kvstore.MisfireFireAll, kvstore.MisfireSkip, kvstore.MisfireFireOnce} {
		t.Run(string(policy), func(t *testing.T) {
			h := setup(t)
			ctx := context.Background()
			h.put("edge", kvstore.Spec{Workflow: "w", Every: "5s", Align: kvstore.AlignEpoch, Misfire: policy, MisfireThreshold: "2s"})
			e, err := h.store.GetSpec(ctx, "edge")
			if err != nil {
				t.Fatal(err)
			}
			written := e.Written
			first := written.Truncate(5 * time.Second).Add(5 * time.Second)

			// The first scheduler indexes it and waits for its first slot.
			c1, f1 := clock.NewFake(written.Add(10 * time.Millisecond))
			e1 := h.engine(fires.Config{Clock: c1, LeaseTTL: time.Hour, Instance: "one"})
			armedAt(t, f1, first, first)
			if _, _, err := h.store.GetState(ctx, "edge"); err == nil {
				t.Fatal("a state record before the first fire: the test needs a schedule planned in memory only")
			}
			if err := e1.Stop(ctx); err != nil {
				t.Fatal(err)
			}

			// 20 s later (past the 2 s threshold by several slots) another
			// starts.
			back := first.Add(20*time.Second + 500*time.Millisecond)
			c2, _ := clock.NewFake(back)
			h.engine(fires.Config{Clock: c2, LeaseTTL: time.Hour, Instance: "two"})

			var owed []time.Time // first .. back, every 5 s
			for s := first; !s.After(back); s = s.Add(5 * time.Second) {
				owed = append(owed, s)
			}
			late := func(s time.Time) bool { return back.Sub(s) > 2*time.Second }
			var wantFired, wantMissed []time.Time
			switch policy {
			case kvstore.MisfireFireAll:
				wantFired = owed
			case kvstore.MisfireSkip:
				for _, s := range owed {
					if late(s) {
						wantMissed = append(wantMissed, s)
					} else {
						wantFired = append(wantFired, s)
					}
				}
			case kvstore.MisfireFireOnce:
				lastLate := -1
				for i, s := range owed {
					if late(s) {
						lastLate = i
					}
				}
				wantMissed = owed[:lastLate]
				wantFired = owed[lastLate:]
			}
			got := h.waitFires("edge", 10*time.Second, atLeast(len(wantFired)))
			if len(got) != len(wantFired) {
				t.Fatalf("%d fires, want %d", len(got), len(wantFired))
			}
			for i, f := range got {
				if !f.meta.ScheduledAt.Equal(wantFired[i]) {
					t.Fatalf("fire %d is slot %s, want %s", i, f.meta.ScheduledAt, wantFired[i])
				}
			}
			err = testwait.Until(10*time.Second, "every slot not fired in the ledger", func() error {
				for _, s := range wantMissed {
					tick, err := h.store.SlotEntry(ctx, kvstore.SlotID("edge", s))
					if err != nil {
						return fmt.Errorf("slot %s: %w", s.Format(time.TimeOnly), err)
					}
					if tick.Status != kvstore.TickMissed || !strings.HasPrefix(tick.Reason, "misfire: ") {
						return fmt.Errorf("slot %s: %s %q, want missed by the misfire policy", s.Format(time.TimeOnly), tick.Status, tick.Reason)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDeletedRecordIsCaughtUpFromTheStream: a schedule without a state
// record is planned from its spec's write, so a record deleted by hand
// (nats kv del sched_state <id>) would have its fired slots decided again:
// fired twice where the duplicate window has forgotten them, or recorded
// missed although they fired. Before it decides a plan reaching further
// back than the window, the engine reads the schedule's last fire from
// the stream and starts after it.
func TestDeletedRecordIsCaughtUpFromTheStream(t *testing.T) {
	h := setup(t)
	ctx := context.Background()
	h.put("lost", kvstore.Spec{Workflow: "w", Every: "1m", Align: kvstore.AlignEpoch})
	e, err := h.store.GetSpec(ctx, "lost")
	if err != nil {
		t.Fatal(err)
	}
	start := e.Written.Truncate(time.Minute).Add(time.Minute)
	c1, f1 := clock.NewFake(e.Written.Add(10 * time.Millisecond))
	e1 := h.engine(fires.Config{Clock: c1, LeaseTTL: time.Hour, Instance: "one"})
	for i := range 3 {
		slot := start.Add(time.Duration(i) * time.Minute)
		armedAt(t, f1, slot, slot)
		f1.Set(slot)
		h.waitFires("lost", 10*time.Second, atLeast(i+1))
	}
	if err := e1.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	_, rev, err := h.store.GetState(ctx, "lost")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.store.DeleteState(ctx, "lost", rev); err != nil {
		t.Fatal(err)
	}

	// 2.5 minutes after the first slot: a plan from the spec's write reaches
	// back past the 90 s the default duplicate window covers.
	steps := make(chan fires.Step, 1024)
	c2, _ := clock.NewFake(start.Add(2*time.Minute + 30*time.Second))
	h.engine(fires.Config{Clock: c2, LeaseTTL: time.Hour, Instance: "two", StepHook: stepsTo(steps)})
	waitStep(t, 10*time.Second, steps, fires.StepCaughtUp)
	err = testwait.Until(10*time.Second, "the record written anew from the stream's last fire", func() error {
		st, _, err := h.store.GetState(ctx, "lost")
		if err != nil {
			return err
		}
		if want := start.Add(3 * time.Minute); !st.Next.Equal(want) || st.Claim == nil || !st.Claim.Slot.Equal(start.Add(2*time.Minute)) {
			return fmt.Errorf("next %s, claim %+v; want next %s after the claim on the last fire", st.Next, st.Claim, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	hist, err := h.store.History(ctx, "lost")
	if err != nil {
		t.Fatal(err)
	}
	for _, tick := range hist {
		if tick.Status != kvstore.TickDispatched {
			t.Errorf("slot %s recorded %s (%s) although it fired", tick.Slot, tick.Status, tick.Reason)
		}
	}
	if n := len(h.of("lost")); n != 3 {
		t.Errorf("%d fires in the stream, want the 3 before the delete", n)
	}
}
