package fires_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/natstest"
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
// the stream and starts after it. Both ways the first engine may have
// claimed the slots: each on the schedule's record, and on window records
// (a window its owner left behind names a slot of the schedule; with no
// record, that slot is settled by the stream, not made a claim that would
// take the schedule back to it: that was flaky, about half the runs).
func TestDeletedRecordIsCaughtUpFromTheStream(t *testing.T) {
	for _, c := range []struct {
		name        string
		slots, busy int
	}{{"per-slot claims", -1, 0}, {"window claims", 0, -1}} {
		t.Run(c.name, func(t *testing.T) { deletedRecordCaughtUp(t, c.slots, c.busy) })
	}
}

func deletedRecordCaughtUp(t *testing.T, windowSlots, windowBusy int) {
	h := setup(t)
	ctx := context.Background()
	h.put("lost", kvstore.Spec{Workflow: "w", Every: "1m", Align: kvstore.AlignEpoch})
	e, err := h.store.GetSpec(ctx, "lost")
	if err != nil {
		t.Fatal(err)
	}
	start := e.Written.Truncate(time.Minute).Add(time.Minute)
	c1, f1 := clock.NewFake(e.Written.Add(10 * time.Millisecond))
	e1 := h.engine(fires.Config{Clock: c1, LeaseTTL: time.Hour, Instance: "one", WindowSlots: windowSlots, WindowBusy: windowBusy})
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

// TestRestoredRecordBeyondItsRecurrence: a state record put back from an
// old backup, whose claim no scheduler holds and whose next slot lies
// ahead of the slot after that claim (found by `schedule account`, issue
// 51). Taken as it was, the slots between had no fire and no ledger
// entry. The engine looks the slot after the claim up in the ledger when
// it first decides a record it did not write, finds nothing, and plans
// again from the claim: the slots since follow the misfire policy (skip,
// 5 s threshold: the late ones recorded missed, the one within it fired),
// and the claimed slot that fired is not fired again.
func TestRestoredRecordBeyondItsRecurrence(t *testing.T) {
	h := setup(t)
	ctx := context.Background()
	spec := kvstore.Spec{Workflow: "w", Every: "10s", Align: kvstore.AlignEpoch, MisfireThreshold: "5s"}
	h.put("restored", spec)
	e, err := h.store.GetSpec(ctx, "restored")
	if err != nil {
		t.Fatal(err)
	}
	c, err := compile.Compile(spec, "restored", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := e.Written.Truncate(10 * time.Second).Add(20 * time.Second) // the slot last claimed (it fired)
	natstest.PublishFire(t, h.js, natstest.Fire{Schedule: "restored", Workflow: "w", At: s, Instance: "gone"})
	claim := kvstore.Claim{Slot: s, Token: "restored", Owner: "gone", At: s, Expires: s.Add(34 * time.Second)}
	if _, err := h.store.CreateState(ctx, "restored", kvstore.State{Plan: c.Plan, Next: s.Add(50 * time.Second), Claim: &claim,
		Fires: 1, UpdatedAt: s, Owner: "gone"}); err != nil {
		t.Fatal(err)
	}
	replanned, err := h.js.Conn().SubscribeSync("sched.event.replanned.restored")
	if err != nil {
		t.Fatal(err)
	}
	defer replanned.Unsubscribe()
	// Decided at once: its claim, made before this instance's tenure, is
	// settled from the stream, then the record is checked.
	clk, _ := clock.NewFake(s.Add(35 * time.Second))
	h.engine(fires.Config{Clock: clk, LeaseTTL: time.Hour})
	got := h.waitFires("restored", 10*time.Second, atLeast(2))
	if slot, want := got[1].meta.ScheduledAt, s.Add(30*time.Second); !slot.Equal(want) {
		t.Fatalf("the fire after the restored claim's is slot %s, want %s (5 s late, within the threshold)", slot, want)
	}
	for i := 1; i <= 2; i++ {
		late := s.Add(time.Duration(i) * 10 * time.Second)
		tick := h.waitTick(kvstore.SlotID("restored", late))
		if tick.Status != kvstore.TickMissed {
			t.Errorf("slot %s: %s %q, want missed by the misfire policy", late.Format(time.TimeOnly), tick.Status, tick.Reason)
		}
	}
	msg, err := replanned.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatalf("no replanned event: %v", err)
	}
	if !strings.Contains(string(msg.Data), "passes over") {
		t.Errorf("replanned event %s does not say what the record passed over", msg.Data)
	}
	if n := len(h.of("restored")); n != 2 {
		t.Errorf("%d fires, want the restored claim's and the one within the threshold", n)
	}
}
