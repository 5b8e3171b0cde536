package fires_test

import (
	"context"
	"errors"
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

// These tests drive the engine on a fake clock against a real server:
// misfires, the end of a pause and a takeover at claim expiry happen when
// the test moves the time, not after waiting for it. They take well under
// a second each and are not parallel: they run before the parallel tests
// start, not among them (their timers race a busy engine less).

// armedAt waits until the fake clock has a timer armed for exactly at: the
// engine has indexed what the test wrote and set its next wake-up.
//
// A timer armed for earlier than quiet, an instant before which nothing
// the test looks for can come due, is a retry (a window check that timed
// out on a loaded box is retried a second later) or a deferred record: in
// real time it would come due first, and the engine arms at's timer only
// after it. So the clock is moved to it, as time would move, rather than
// the wait failing on a clock that never gets there. A timer between
// quiet and at is left alone: it can be a slot the test has just paused,
// whose pause the engine has not seen yet.
func armedAt(t *testing.T, f *clock.Fake, at, quiet time.Time) {
	t.Helper()
	err := testwait.Until(10*time.Second, "a timer armed for "+at.Format(time.TimeOnly), func() error {
		if f.ArmedFor(at) {
			return nil
		}
		next, ok := f.Next()
		if ok && next.Before(quiet) && next.After(f.Now()) {
			t.Logf("fake clock moved to %s, a timer armed before %s", next.Format(time.TimeOnly), quiet.Format(time.TimeOnly))
			f.Set(next)
		}
		if !ok {
			return errors.New("no timer armed")
		}
		return fmt.Errorf("the earliest timer armed is for %s", next.Format(time.TimeOnly))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// fakeEngine starts an engine on a fake clock and returns the clock's
// controls and start, the next whole minute: the clock reads 30 s before
// start, so no every-minute slot is due until the test moves the time.
// The shard leases last an hour: the minutes the tests jump stay within
// their 90% guard, so the engine owns its shards throughout and no lease
// round runs in between (lease_test.go tests the guard itself).
func fakeEngine(t *testing.T, h *harness, cfg fires.Config) (*clock.Fake, time.Time) {
	t.Helper()
	start := time.Now().UTC().Truncate(time.Minute).Add(time.Minute)
	c, f := clock.NewFake(start.Add(-30 * time.Second))
	cfg.Clock, cfg.LeaseTTL = c, time.Hour
	h.engine(cfg)
	return f, start
}

// TestFakeClockMisfire: a schedule every minute, and ten minutes pass at
// once: the slots later than the threshold are recorded missed, the ones
// within it fire, and the schedule goes on.
func TestFakeClockMisfire(t *testing.T) {
	h := setup(t)
	f, start := fakeEngine(t, h, fires.Config{MisfireThreshold: 90 * time.Second})
	h.put("m", kvstore.Spec{Workflow: "wf", Every: "1m", Align: kvstore.AlignEpoch})
	armedAt(t, f, start, start) // the engine waits for the first slot
	f.Set(start.Add(9 * time.Minute))
	// Slots start .. start+7m are more than 90 s late; start+8m and
	// start+9m are within it and fire, in order.
	got := h.waitFires("m", 10*time.Second, atLeast(2))
	for i, want := range []time.Time{start.Add(8 * time.Minute), start.Add(9 * time.Minute)} {
		if !got[i].meta.ScheduledAt.Equal(want) {
			t.Fatalf("fire %d for %v, want %v (the slots within the threshold, oldest first)", i, got[i].meta.ScheduledAt, want)
		}
	}
	err := testwait.Until(10*time.Second, "2 fires and 8 missed counted", func() error {
		st, _, err := h.store.GetState(context.Background(), "m")
		if err == nil && (st.Fires != 2 || st.Missed != 8) {
			err = fmt.Errorf("fires %d, missed %d", st.Fires, st.Missed)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	armedAt(t, f, start.Add(10*time.Minute), start.Add(10*time.Minute)) // and goes on
}

// TestFakeClockPauseUntil: a pause until a time ends at that time on the
// engine's clock; the slots that fell due while paused are skipped.
func TestFakeClockPauseUntil(t *testing.T) {
	h := setup(t)
	f, start := fakeEngine(t, h, fires.Config{})
	h.put("p", kvstore.Spec{Workflow: "wf", Every: "1m", Align: kvstore.AlignEpoch})
	until := start.Add(5*time.Minute + 30*time.Second)
	c := control.Control{Store: h.store, Clock: f.Clock()}
	if _, err := c.Pause(context.Background(), "p", "maintenance", until); err != nil {
		t.Fatal(err)
	}
	armedAt(t, f, until, start) // the engine waits for the pause's end (the unpaused slot at start is armed until it sees the pause)
	f.Set(until)                // slots start .. start+5m fell due while paused
	want := start.Add(6 * time.Minute)
	armedAt(t, f, want, want) // then for the first slot after it
	f.Set(want)
	if got := h.waitFires("p", 10*time.Second, atLeast(1)); !got[0].meta.ScheduledAt.Equal(want) {
		t.Fatalf("first fire after the pause %v, want %v", got[0].meta.ScheduledAt, want)
	}
	testwait.Eventually(t, 10*time.Second, "the six slots due while paused skipped", func() bool {
		hist, err := h.store.History(context.Background(), "p")
		if err != nil {
			return false
		}
		paused := 0
		for _, tick := range hist {
			if tick.Status == kvstore.TickSkipped && strings.Contains(tick.Reason, "paused") {
				paused++
			}
		}
		return paused == 6
	})
}

// TestFakeClockTakeover: a claim left by a dead instance (its fire never
// published) is taken over when it expires on the engine's clock, and its
// slot fires once, marked takeover.
func TestFakeClockTakeover(t *testing.T) {
	h := setup(t)
	ctx := context.Background()
	start := time.Now().UTC().Truncate(time.Minute).Add(time.Minute)
	made := start.Add(-30 * time.Second) // what the fake clock reads first
	slot := made.Add(-time.Second)
	h.put("t", kvstore.Spec{Workflow: "wf", Every: "1h", Align: kvstore.AlignEpoch})
	// A dead instance's claim on a slot, made just now, expiring in 30 s.
	dead := kvstore.Claim{Slot: slot, Token: "dead", Owner: "gone", At: made, Expires: made.Add(30 * time.Second)}
	if _, err := h.store.CreateState(ctx, "t", kvstore.State{Plan: mustPlan(t, "t"), Next: start.Truncate(time.Hour).Add(time.Hour),
		Claim: &dead, Fires: 1, UpdatedAt: start}); err != nil {
		t.Fatal(err)
	}
	f, _ := fakeEngine(t, h, fires.Config{ClaimTTL: 30 * time.Second})
	armedAt(t, f, dead.Expires, dead.Expires)
	f.Set(dead.Expires)
	got := h.waitFires("t", 10*time.Second, atLeast(1))
	if got[0].meta.SlotID != kvstore.SlotID("t", slot) || got[0].meta.Reason != kvstore.ReasonTakeover {
		t.Fatalf("fire %+v, want slot %s re-published as takeover", got[0].meta, kvstore.SlotID("t", slot))
	}
}

// hourlySpec is an hourly schedule on the epoch's hours: its plan depends
// on its id alone (mustPlan), not on when its spec was written.
func hourlySpec() kvstore.Spec {
	return kvstore.Spec{Workflow: "wf", Every: "1h", Align: kvstore.AlignEpoch}
}

// mustPlan is the plan string the engine compiles for schedule id.
func mustPlan(t *testing.T, id string) string {
	t.Helper()
	c, err := compile.Compile(hourlySpec(), id, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.Plan
}

// stepsTo is a StepHook that sends each step to steps, dropping it when
// steps is full (a hook must not block).
func stepsTo(steps chan<- fires.Step) func(fires.Step) {
	return func(s fires.Step) {
		select {
		case steps <- s:
		default:
		}
	}
}

// waitStep waits until the engine reports step want on steps (the steps
// before it are passed over).
func waitStep(t *testing.T, timeout time.Duration, steps <-chan fires.Step, want fires.Step) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		select {
		case s := <-steps:
			if s == want {
				return
			}
		case <-deadline.C:
			t.Fatalf("step %q not reported within %s", want, timeout)
		}
	}
}
