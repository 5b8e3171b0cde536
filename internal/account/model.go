package account

import (
	"time"

	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
)

// The reference model: what a schedule owes, written plainly and slowly
// from the rules of docs/calendar.md and docs/protocol.md, with none of
// the engine's shortcuts (no runs passed in one step, no resumption from a
// state record). The engine's plan is checked against it (property tests),
// and `schedule account` uses it to list what a schedule owed: an engine
// bug then shows as an occurrence without evidence instead of hiding in
// the tool that looks for it.

// Recurrence is a compiled schedule taken apart: the recurrence before
// any calendar, the calendar's rules, and the bounds.
type Recurrence struct {
	// Base is the recurrence itself (cron, interval, one-shot,
	// business_day), before any calendar.
	Base cronx.Schedule
	// Calendar, Roll and BusinessHoursOnly apply a calendar (nil: none).
	Calendar          *calendar.Calendar
	Roll              calendar.Roll
	BusinessHoursOnly bool
	// Start, End and Limit bound the fires (zero: unbounded).
	Start, End time.Time
	Limit      int
}

// RecurrenceOf takes a compiled schedule (compile.Compiled.Schedule)
// apart.
func RecurrenceOf(s cronx.Schedule) Recurrence {
	var r Recurrence
	if b, ok := s.(*cronx.Bounded); ok {
		r.Start, r.End, r.Limit = b.Start, b.End, b.Count
		s = b.Schedule
	}
	if c, ok := s.(calendar.Schedule); ok {
		r.Calendar, r.Roll, r.BusinessHoursOnly = c.Calendar, c.Roll, c.BusinessHoursOnly
		s = c.Base
	}
	r.Base = s
	return r
}

// OwedFrom is when a schedule begins to owe its slots (less a
// nanosecond: an occurrence at the instant written is owed): the write of
// its spec, or a one-shot's time if that is earlier (a one-shot is owed
// its slot however late it is written).
func OwedFrom(at *time.Time, written time.Time) time.Time {
	from := written.Add(-time.Nanosecond)
	if at != nil && at.Add(-time.Nanosecond).Before(from) {
		from = at.Add(-time.Nanosecond)
	}
	return from
}

// Fate is what the recurrence's rules make of one occurrence.
type Fate int

// Fates.
const (
	// Fires: the occurrence is a slot, fired at At (moved there from its
	// own time when Moved is set).
	Fires Fate = iota
	// Merged: its adjusted time is not after the latest fire before it
	// (At), into which it merges.
	Merged
	// Skipped: the calendar drops it (Reason names the rule).
	Skipped
)

func (f Fate) String() string { return [...]string{"fires", "merged", "skipped"}[f] }

// Occurrence is one occurrence of a recurrence and its fate.
type Occurrence struct {
	// Nominal is the recurrence's own time for it.
	Nominal time.Time
	Fate    Fate
	// At is the slot: the fire time (Fires), or the fire it merged into
	// (Merged); zero for Skipped.
	At time.Time
	// Moved is set when At is not Nominal (Fires).
	Moved bool
	// Reason names the calendar rule that skipped or moved it.
	Reason string
}

// giveUp ends a recurrence whose occurrences have not fired for 10
// years, as the calendar gives up (a calendar that came to remove every
// occurrence).
const giveUp = 10 * 366 * 24 * time.Hour

// maxRollDays bounds the search for a business day to roll to, as the
// calendar does (10 years).
const maxRollDays = 3660

// Walk calls fn with every occurrence whose nominal time is after from,
// in the recurrence's order, until fn returns false, the recurrence ends,
// or max occurrences were walked. An occurrence adjusted to from or
// before it merges into a fire at from (a plan starting at from: the
// engine's first step). A limit of n fires ends the recurrence at its
// n-th fire from Start (walked from there, the same way).
func (r Recurrence) Walk(from time.Time, max int, fn func(Occurrence) bool) {
	var last time.Time
	if r.Limit > 0 {
		fires := 0
		r.walk(r.Start.Add(-time.Nanosecond), time.Time{}, func(o Occurrence) bool {
			if o.Fate == Fires {
				fires++
				last = o.At
			}
			return fires < r.Limit
		})
		if fires < r.Limit {
			last = time.Time{} // fewer fires than the limit: the recurrence's own end
		}
	}
	walked := 0
	r.walk(from, last, func(o Occurrence) bool {
		walked++
		return fn(o) && walked < max
	})
}

// walk is Walk without the limit: every occurrence after from, ending
// at a fire after last (when set) or after End.
func (r Recurrence) walk(from, last time.Time, fn func(Occurrence) bool) {
	hw := from // the latest fire so far
	n := from
	if !r.Start.IsZero() && n.Before(r.Start) {
		n = r.Start.Add(-time.Nanosecond)
	}
	lastFire := from
	for {
		next := r.Base.Next(n)
		if next.IsZero() || !next.After(n) || next.Sub(lastFire) > giveUp {
			return
		}
		n = next
		o, stuck := r.adjust(n)
		if stuck {
			return
		}
		if o.Fate != Skipped {
			if o.At.After(hw) {
				if !r.End.IsZero() && o.At.After(r.End) || !last.IsZero() && o.At.After(last) {
					return
				}
				hw, lastFire = o.At, n
			} else {
				o.Fate, o.At, o.Moved = Merged, hw, false
			}
		}
		if !fn(o) {
			return
		}
	}
}

// adjust applies the calendar to occurrence n (docs/calendar.md, "Applied
// to schedules"); stuck: no business day or working time is left.
func (r Recurrence) adjust(n time.Time) (o Occurrence, stuck bool) {
	o = Occurrence{Nominal: n, Fate: Fires, At: n}
	c := r.Calendar
	if c == nil {
		return o, false
	}
	loc := c.Location()
	local := n.In(loc)
	_, holiday := c.Holiday(n)
	if !c.IsBusinessDay(n) && !(r.Roll == calendar.RollSkip && r.BusinessHoursOnly && !holiday) {
		why := c.NonWorkingReason(n)
		var target time.Time
		var ok bool
		switch r.Roll {
		case calendar.RollNext:
			target, ok = businessDay(c, local, 1)
		case calendar.RollPrevious:
			target, ok = businessDay(c, local, -1)
		case calendar.RollModifiedFollowing:
			target, ok = businessDay(c, local, 1)
			if ok && target.Month() != local.Month() {
				if prev, okPrev := businessDay(c, local, -1); okPrev {
					target = prev
				}
			}
		case calendar.RollModifiedPreceding:
			target, ok = businessDay(c, local, -1)
			if ok && target.Month() != local.Month() {
				if next, okNext := businessDay(c, local, 1); okNext {
					target = next
				}
			}
		default:
			return Occurrence{Nominal: n, Fate: Skipped, Reason: why}, false
		}
		if !ok {
			return o, true
		}
		h, m, s := local.Clock()
		o.At = wallTime(target.Year(), target.Month(), target.Day(), h, m, s, local.Nanosecond(), loc)
		o.Reason = why
	}
	if r.BusinessHoursOnly && !c.IsWorkingTime(o.At) {
		w, err := c.NextWorkingStart(o.At)
		if err != nil {
			return o, true
		}
		o.At = w
	}
	o.Moved = !o.At.Equal(n)
	return o, false
}

// businessDay is the first business day after (dir 1) or before (dir -1)
// local's date, at noon in its zone, within 10 years.
func businessDay(c *calendar.Calendar, local time.Time, dir int) (time.Time, bool) {
	for i := 1; i <= maxRollDays; i++ {
		d := time.Date(local.Year(), local.Month(), local.Day()+dir*i, 12, 0, 0, 0, local.Location())
		if c.IsBusinessDay(d) {
			return d, true
		}
	}
	return time.Time{}, false
}

// wallTime is the first instant that reads the given wall clock in loc; a
// reading in a DST gap is the instant the gap ends (docs/cron.md, the
// calendar's rule for a moved occurrence). Found by looking, not by
// arithmetic: the earliest of the instants a few hours around the naive
// one that reads it, else the first instant after the gap.
func wallTime(y int, mo time.Month, d, h, mi, s, ns int, loc *time.Location) time.Time {
	want := time.Date(y, mo, d, h, mi, s, ns, time.UTC) // the reading, as a UTC value to compare
	reads := func(t time.Time) time.Time {
		l := t.In(loc)
		return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
	}
	guess := time.Date(y, mo, d, h, mi, s, ns, loc)
	var best time.Time
	for off := -3 * time.Hour; off <= 3*time.Hour; off += 15 * time.Minute {
		if t := guess.Add(off); reads(t).Equal(want) && (best.IsZero() || t.Before(best)) {
			best = t
		}
	}
	if !best.IsZero() {
		return best
	}
	// In a gap: the first instant whose reading is past the one wanted.
	lo, hi := guess.Add(-3*time.Hour), guess.Add(3*time.Hour)
	for hi.Sub(lo) > time.Nanosecond {
		mid := lo.Add(hi.Sub(lo) / 2)
		if reads(mid).After(want) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
