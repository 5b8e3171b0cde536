// Package clock is the one source of "now", and of timers, for jetsched's
// time-driven code: the engines' loops, leases, claims and publish
// deadlines read the time and arm their timers through a Clock.
//
// The zero Clock is the system clock. Offset runs it ahead or behind (the
// fault tests and `scheduler run --clock-offset` skew instances this way).
// NewFake returns a Clock whose time moves only when the test says, so that
// misfires, pause ends, claim expiries and lease expiries are tested
// without waiting. Pure logic can also run under testing/synctest, where
// the system clock is the bubble's.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and makes timers. The zero value is the system
// clock.
type Clock struct {
	// Offset is added to the time: a Clock with Offset 2s runs two seconds
	// ahead.
	Offset time.Duration
	fake   *Fake
}

// Now returns the current time (with the monotonic reading stripped when
// an offset is applied, as time.Time.Add keeps it).
func (c Clock) Now() time.Time {
	if c.fake != nil {
		return c.fake.Now().Add(c.Offset)
	}
	return time.Now().Add(c.Offset)
}

// Until is the duration from now until t.
func (c Clock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

// Since is the duration since t.
func (c Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// IsFake reports whether the clock is a test's fake one.
func (c Clock) IsFake() bool { return c.fake != nil }

// NewTimer returns a timer that sends the time on its channel once d has
// passed on this clock.
func (c Clock) NewTimer(d time.Duration) *Timer {
	if c.fake != nil {
		return c.fake.newTimer(d)
	}
	t := time.NewTimer(d)
	return &Timer{C: t.C, t: t}
}

// After is time.After on this clock (use it only where the timer cannot
// leak: a select that always waits for it or for a context that ends).
func (c Clock) After(d time.Duration) <-chan time.Time { return c.NewTimer(d).C }

// WithDeadline is context.WithDeadline with the deadline read on this
// clock: it ends when the clock reaches deadline (or ctx ends).
func (c Clock) WithDeadline(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	if c.fake == nil {
		// The system clock (with an offset): the same instant on the
		// process's own clock.
		return context.WithDeadline(ctx, time.Now().Add(c.Until(deadline)))
	}
	cctx, cancel := context.WithCancelCause(ctx)
	t := c.NewTimer(c.Until(deadline))
	stop := context.AfterFunc(cctx, func() { t.Stop() })
	go func() {
		select {
		case <-t.C:
			cancel(context.DeadlineExceeded)
		case <-cctx.Done():
		}
	}()
	return cctx, func() { stop(); t.Stop(); cancel(context.Canceled) }
}

// Timer is a Clock's timer. Its channel has a buffer of one, as
// time.Timer's.
type Timer struct {
	C <-chan time.Time
	t *time.Timer
	f *fakeTimer
}

// Stop prevents the timer from firing; it reports whether it stopped a
// pending timer.
func (t *Timer) Stop() bool {
	if t.f != nil {
		return t.f.fake.stop(t.f)
	}
	return t.t.Stop()
}

// Reset makes the timer fire d from now (on its clock); it reports whether
// the timer was pending.
func (t *Timer) Reset(d time.Duration) bool {
	if t.f != nil {
		return t.f.fake.reset(t.f, d)
	}
	return t.t.Reset(d)
}
