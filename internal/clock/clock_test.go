package clock_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/testwait"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFakeTimersFireInOrderWhenTimeMoves(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	c, f := clock.NewFake(start)
	a, b := c.NewTimer(2*time.Second), c.NewTimer(time.Second)
	if got := f.Pending(); got != 2 {
		t.Fatalf("%d timers armed, want 2", got)
	}
	if !f.ArmedFor(start.Add(2*time.Second)) || f.ArmedFor(start.Add(3*time.Second)) {
		t.Fatal("ArmedFor does not tell the armed deadlines")
	}
	if next, ok := f.Next(); !ok || !next.Equal(start.Add(time.Second)) {
		t.Fatalf("next deadline %v, %v", next, ok)
	}
	select {
	case <-a.C:
		t.Fatal("fired before the time moved")
	case <-b.C:
		t.Fatal("fired before the time moved")
	default:
	}
	f.Advance(time.Second)
	if got := <-b.C; !got.Equal(start.Add(time.Second)) {
		t.Fatalf("b fired at %v", got)
	}
	if a.Stop() != true || f.Pending() != 0 {
		t.Fatal("stopping the pending timer a")
	}
	f.Advance(time.Hour)
	select {
	case <-a.C:
		t.Fatal("a stopped timer fired")
	default:
	}
	a.Reset(0) // due at once
	if got := <-a.C; !got.Equal(start.Add(time.Hour + time.Second)) {
		t.Fatalf("reset to 0 fired at %v", got)
	}
	if !c.Now().Equal(start.Add(time.Hour+time.Second)) || c.Until(start) != -(time.Hour+time.Second) {
		t.Fatalf("now %v", c.Now())
	}
}

func TestOffsetClock(t *testing.T) {
	c := clock.Clock{Offset: time.Hour}
	if d := c.Now().Sub(time.Now()); d < 59*time.Minute || d > 61*time.Minute {
		t.Fatalf("offset clock is %v ahead", d)
	}
	skewed, _ := clock.NewFake(time.Unix(0, 0))
	skewed.Offset = -2 * time.Second
	if got := skewed.Now(); !got.Equal(time.Unix(-2, 0)) {
		t.Fatalf("skewed fake now %v", got)
	}
}

// WithDeadline ends when the fake clock reaches the deadline, not before.
func TestFakeDeadline(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	c, f := clock.NewFake(start)
	ctx, cancel := c.WithDeadline(context.Background(), start.Add(30*time.Second))
	defer cancel()
	testwait.Done(t, 10*time.Second, "the deadline's timer armed", f.Armed())
	f.Advance(29 * time.Second)
	select {
	case <-ctx.Done():
		t.Fatal("ended before its deadline")
	default:
	}
	f.Advance(time.Second)
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("did not end at its deadline")
	}
	if !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		t.Fatalf("cause %v, want deadline exceeded", context.Cause(ctx))
	}
}

// The system clock's timers and deadlines run on real time; under synctest
// that is the bubble's fake time, so this runs instantly.
func TestSystemClockUnderSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c clock.Clock
		start := c.Now()
		tm := c.NewTimer(time.Hour)
		<-tm.C
		if got := c.Since(start); got != time.Hour {
			t.Fatalf("timer fired after %v", got)
		}
		ctx, cancel := c.WithDeadline(context.Background(), c.Now().Add(time.Minute))
		defer cancel()
		<-ctx.Done()
		if got := c.Since(start); got != time.Hour+time.Minute {
			t.Fatalf("deadline after %v", got)
		}
	})
}
