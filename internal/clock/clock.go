// Package clock is the one source of "now" for jetsched's time-driven code.
//
// The zero Clock is the real clock. Tests of pure logic run under
// testing/synctest, where the real clock is the bubble's fake one; tests of
// a fleet inject skew with Offset to show that claims stay exactly-once when
// instances disagree about the time.
package clock

import "time"

// Clock tells the time. The zero value is the system clock.
type Clock struct {
	// Offset is added to the system time: a Clock with Offset 2s runs two
	// seconds ahead.
	Offset time.Duration
}

// Now returns the current time (with the monotonic reading stripped when
// an offset is applied, as time.Time.Add keeps it).
func (c Clock) Now() time.Time { return time.Now().Add(c.Offset) }

// Until is the duration from now until t.
func (c Clock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }
