package skew

import (
	"sync"
	"time"
)

// MaxPlausible is how far a record's writer-chosen time (a lease or member
// record's "renewed") may be from the server's time of the write (the KV
// entry's Created) before the record is not believed at all. It is far
// past any clock the watcher merely warns about (DefaultTolerance) and the
// ±30 s the fault harness runs instances with, so only a forged record, or
// a writer whose clock is broken beyond what its fires could survive,
// crosses it (docs/protocol.md, "Records judged by the server's clock").
const MaxPlausible = 10 * time.Minute

// Plausible reports whether claimed, the time a writer put in its record,
// is within MaxPlausible of stored, the server's time of the write. A zero
// claimed time is not plausible.
func Plausible(claimed, stored time.Time) bool {
	if claimed.IsZero() {
		return false
	}
	d := claimed.Sub(stored)
	return d <= MaxPlausible && d >= -MaxPlausible
}

// ServerClock estimates the NATS server's current time from this
// process's own writes: the server's time of a write (its KV entry's
// Created) plus the time since its acknowledgement came back, measured on
// the process's monotonic clock. The estimate trails the server's time by
// at most the write's round trip, never leads it: an age judged by it is
// never more than the record's true age. The zero value knows nothing.
//
// It reads the process's clock, not an injected one, on purpose: the
// server's per-key TTLs run in real time whatever a test's fake clock
// says.
type ServerClock struct {
	mu     sync.Mutex
	stored time.Time // the server's time of the latest write observed
	acked  time.Time // when its acknowledgement came (monotonic)
}

// Observe records a write of this process: stored is the server's time of
// it (a KV entry's Created), acked when its acknowledgement came back, as
// time.Now returned it (with its monotonic reading). An observation that
// would put the server's time earlier than one already made is kept out.
func (c *ServerClock) Observe(stored, acked time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// At any instant the two estimates are stored + (now - acked) and
	// c.stored + (now - c.acked): the later one has the larger offset.
	if !c.acked.IsZero() && stored.Sub(c.stored) <= acked.Sub(c.acked) {
		return
	}
	c.stored, c.acked = stored, acked
}

// Now is the server's time as this process knows it, at least floor (a
// server time known to have passed: the latest Created of a listing); the
// zero time when nothing was observed and floor is zero.
func (c *ServerClock) Now(floor time.Time) time.Time { return c.nowAt(floor, time.Now()) }

// nowAt is Now when this process's clock reads at (with its monotonic
// reading, as time.Now returns it).
func (c *ServerClock) nowAt(floor, at time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.acked.IsZero() {
		return floor
	}
	now := c.stored.Add(at.Sub(c.acked))
	if floor.After(now) {
		return floor
	}
	return now
}

// StaleGrace is added to a record's TTL before it is judged stale: the
// servers of a cluster stamp writes by their own clocks.
const StaleGrace = time.Second

// MaxHonouredTTL bounds the TTL a record may claim beyond its reader's
// own: a writer configured with a longer TTL renews less often and is
// honoured up to it.
const MaxHonouredTTL = 5 * time.Minute

// Stale reports whether a record written at created (the server's time
// of the write), whose writer claims a TTL of claimed (a Go duration, as
// lease records carry it), was not rewritten within its TTL by now, the
// server's time: it is older than the longer of own (the reader's TTL)
// and claimed (honoured up to MaxHonouredTTL, or own if longer), plus
// StaleGrace. Nothing is stale while now is unknown (zero).
func Stale(created, now time.Time, claimed string, own time.Duration) bool {
	if now.IsZero() {
		return false
	}
	ttl := own
	if d, err := time.ParseDuration(claimed); err == nil && d > own {
		ttl = min(d, max(own, MaxHonouredTTL))
	}
	return now.Sub(created) > ttl+StaleGrace
}
