package cronx

import (
	"fmt"
	"sync"
	"time"
)

// At fires once, at t.
func At(t time.Time) Once { return Once{At: t} }

// Bounded limits a Schedule to fire times in [Start, End] and to its first
// Count fire times at or after Start. Zero Start, End or Count leave that
// side unbounded. Count needs Start (the runs are counted from it).
//
// Counting walks the schedule from Start once, to its Count-th fire; every
// call after that does constant work.
type Bounded struct {
	Schedule Schedule
	Start    time.Time
	End      time.Time
	Count    int

	mu   sync.Mutex
	last struct {
		done bool
		at   time.Time // the Count-th fire from Start (zero: fewer)
	}
}

// NewBounded validates the bounds.
func NewBounded(s Schedule, start, end time.Time, count int) (*Bounded, error) {
	switch {
	case s == nil:
		return nil, &ParseError{Field: "schedule", Reason: "missing"}
	case count < 0:
		return nil, &ParseError{Field: "count", Value: fmt.Sprint(count), Reason: "must not be negative"}
	case count > 0 && start.IsZero():
		return nil, &ParseError{Field: "count", Value: fmt.Sprint(count), Reason: "a run count needs a start time to count from"}
	case !start.IsZero() && !end.IsZero() && end.Before(start):
		return nil, &ParseError{Field: "end", Value: end.Format(time.RFC3339), Reason: "before the start"}
	}
	return &Bounded{Schedule: s, Start: start, End: end, Count: count}, nil
}

// Next returns the first fire time of the bounded schedule strictly after
// after, or zero.
func (b *Bounded) Next(after time.Time) time.Time {
	from := after
	if !b.Start.IsZero() && from.Before(b.Start) {
		from = b.Start.Add(-time.Nanosecond)
	}
	var t time.Time
	if b.Count > 0 {
		t = b.nextCounted(from)
	} else {
		t = b.Schedule.Next(from)
	}
	if t.IsZero() || !b.End.IsZero() && t.After(b.End) {
		return time.Time{}
	}
	return t
}

// nextCounted is the first fire time after from, unless it is past the
// Count-th fire from Start.
func (b *Bounded) nextCounted(from time.Time) time.Time {
	t := b.Schedule.Next(from)
	if t.IsZero() || !b.withinCount(t) {
		return time.Time{}
	}
	return t
}

// withinCount reports whether fire t is one of the first Count from
// Start: counted without walking for a Counter (however far Start is in
// the past), else against the Count-th fire.
func (b *Bounded) withinCount(t time.Time) bool {
	if c, ok := b.Schedule.(counter); ok {
		if n, ok := c.Count(b.Start.Add(-time.Nanosecond), t); ok {
			return n <= uint64(b.Count)
		}
	}
	last := b.lastFire()
	return !last.IsZero() && !t.After(last)
}

// lastFire is the Count-th fire from Start (the zero time when the
// schedule has fewer), walked once from fire to fire as ExplainAfter
// chains them, so that a calendar's moved fires count once each. The
// fires of the bounded schedule are those of its schedule up to it.
func (b *Bounded) lastFire() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.last.done {
		return b.last.at
	}
	t, nom := b.Start.Add(-time.Nanosecond), time.Time{}
	for range b.Count {
		st := ExplainAfter(b.Schedule, t, nom)
		if t, nom = st.At, st.Nominal; t.IsZero() {
			break
		}
	}
	b.last.done, b.last.at = true, t
	return t
}
