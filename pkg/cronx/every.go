package cronx

import (
	"fmt"
	"sync"
	"time"
)

// Unit is the unit of Every.
type Unit int

// Units for Every.
const (
	Second Unit = iota
	Minute
	Hour
	Day
	Month
)

// Every fires every n units aligned to clock marks in loc (nil: UTC), as
// the cron step "*/n" on that unit's field: every 30 minutes fires at :00
// and :30, every 6 hours at 00:00, 06:00, 12:00 and 18:00. Like cron, the
// count restarts at each larger unit: every 7 minutes fires at :56 then
// :00, and every 2 days on the 1st, 3rd, ... 31st and again on the 1st
// (use Interval for a continuous period that ignores the calendar).
func Every(n int, unit Unit, loc *time.Location) (*Cron, error) {
	var expr string
	switch unit {
	case Second:
		expr = fmt.Sprintf("*/%d * * * * *", n)
	case Minute:
		expr = fmt.Sprintf("0 */%d * * * *", n)
	case Hour:
		expr = fmt.Sprintf("0 0 */%d * * *", n)
	case Day:
		expr = fmt.Sprintf("0 0 0 */%d * *", n)
	case Month:
		expr = fmt.Sprintf("0 0 0 1 */%d *", n)
	default:
		return nil, &ParseError{Field: "every", Value: fmt.Sprint(unit), Reason: "unknown unit"}
	}
	return ParseCron(expr, loc)
}

// DailyAt fires every day at hour:minute in loc (nil: UTC), with the
// natural DST policies: on a spring-forward day a time in the gap fires
// when the gap ends, and on a fall-back day a time in the overlap fires
// once.
func DailyAt(hour, minute int, loc *time.Location) (*Cron, error) {
	return ParseCron(fmt.Sprintf("%d %d * * *", minute, hour), loc)
}

// At fires once, at t.
func At(t time.Time) Once { return Once{At: t} }

// Bounded limits a Schedule to fire times in [Start, End] and to its first
// Count fire times at or after Start. Zero Start, End or Count leave that
// side unbounded. Count needs Start (the runs are counted from it).
//
// Counting walks the schedule from Start; the position of the last call is
// remembered, so a scheduler calling Next with each previous result does
// constant work per call.
type Bounded struct {
	Schedule Schedule
	Start    time.Time
	End      time.Time
	Count    int

	mu   sync.Mutex
	memo struct {
		at time.Time // a fire time
		n  int       // its 1-based position from Start
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

// nextCounted walks from Start (or from the remembered position) to the
// first fire time after from, giving up past Count.
func (b *Bounded) nextCounted(from time.Time) time.Time {
	if c, ok := b.Schedule.(Counter); ok {
		// Counted without walking: however far Start is in the past.
		if n, ok := c.Count(b.Start.Add(-time.Nanosecond), from); ok {
			if n >= uint64(b.Count) {
				return time.Time{}
			}
			return b.Schedule.Next(from)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t, n := b.Start.Add(-time.Nanosecond), 0
	if !b.memo.at.IsZero() && !b.memo.at.After(from) {
		t, n = b.memo.at, b.memo.n
	}
	for n < b.Count {
		t = b.Schedule.Next(t)
		if t.IsZero() {
			return t
		}
		n++
		if t.After(from) {
			b.memo.at, b.memo.n = t, n
			return t
		}
	}
	return time.Time{}
}
