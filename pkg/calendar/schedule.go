package calendar

import (
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

// Compile-time checks that the recurrences implement cronx.Schedule.
var (
	_ cronx.Schedule = Schedule{}
	_ cronx.Schedule = BusinessDay{}
)

// maxPassedOver bounds the consecutive occurrences a Schedule passes over
// before giving up.
const maxPassedOver = 10000

// maxListedSkips bounds Step.Skipped.
const maxListedSkips = 100

// Schedule applies a calendar to a recurrence. Each occurrence of Base is
// adjusted in two steps:
//
//  1. on a non-business day (a holiday, or, in a calendar that gives
//     hours or a weekend, a day with no working hours; see
//     [Calendar.IsBusinessDay]) it is handled by Roll: dropped (RollSkip),
//     or moved to the same wall-clock time on another business day. One
//     exception: with RollSkip and BusinessHoursOnly, a day that merely
//     has no working hours (a weekend, not a holiday) is left to step 2,
//     so that a Saturday 02:00 fire moves to Monday 09:00 as the seed's
//     business-hours mode does, while a holiday is still skipped;
//  2. then, if BusinessHoursOnly, an occurrence outside working hours moves
//     to [Calendar.NextWorkingStart] (02:00 to 09:00 the same day), without
//     being checked against the recurrence again.
//
// Next(after) is the adjusted time of the first occurrence after after
// whose adjusted time is strictly after after; occurrences that are
// skipped, or whose adjusted time is not after after (merged into an
// earlier fire), are passed over. After 10,000 consecutive ones, or when
// no working time or business day is left within 10 years, Next returns
// the zero time. Fire times are in the calendar's zone. A Schedule with a
// nil Base or Calendar never fires; a Roll outside the defined values
// skips.
type Schedule struct {
	Base              cronx.Schedule
	Calendar          *Calendar
	Roll              Roll
	BusinessHoursOnly bool
}

// Step is one fire of a [Schedule], with its explanation.
type Step struct {
	At      time.Time // the fire time (zero: none)
	Nominal time.Time // the recurrence's occurrence it came from
	// Moved says why At != Nominal, for example `rolled to the next
	// business day: holiday "Christmas Day" (fixed 12-25)` or `outside
	// working hours: moved to the next working start`, or both joined by
	// "; "; "" when not moved.
	Moved string
	// Skipped lists occurrences passed over before this fire, at most
	// 100; SkippedCount counts all of them.
	Skipped      []Skip
	SkippedCount int
}

// Skip is an occurrence a [Schedule] passed over.
type Skip struct {
	Nominal time.Time
	// Reason names the rule, such as `holiday "Christmas Day" (fixed
	// 12-25)`, or says `merged into the fire at 2026-01-05T09:00:00-05:00`.
	Reason string
}

// Explain is Plan in cronx's terms, so that the scheduler (and cronx's
// wrappers such as Bounded) can record what moved and what was skipped.
func (s Schedule) Explain(after time.Time) cronx.Step {
	p := s.plan(after, true)
	st := cronx.Step{At: p.At, Nominal: p.Nominal, Moved: p.Moved, SkippedCount: p.SkippedCount}
	for _, sk := range p.Skipped {
		st.Skipped = append(st.Skipped, cronx.Skip{Nominal: sk.Nominal, Reason: sk.Reason})
	}
	return st
}

var _ cronx.Explainer = Schedule{}

// Next returns the first fire time strictly after after, or the zero time.
func (s Schedule) Next(after time.Time) time.Time { return s.plan(after, false).At }

// Plan is Next with the explanation: the occurrence the fire came from,
// why it moved, and the occurrences passed over on the way.
func (s Schedule) Plan(after time.Time) Step { return s.plan(after, true) }

// plan walks the recurrence; explain records the texts.
func (s Schedule) plan(after time.Time, explain bool) Step {
	var st Step
	if s.Base == nil || s.Calendar == nil {
		return st
	}
	n := after
	for range maxPassedOver {
		next := s.Base.Next(n)
		if next.IsZero() || !next.After(n) {
			return st
		}
		n = next
		a := s.adjust(n, explain)
		switch {
		case a.stuck:
			return st
		case !a.skipped && a.at.After(after):
			st.At, st.Nominal, st.Moved = a.at, n, a.moved
			return st
		case !a.skipped && explain:
			a.reason = "merged into the fire at " + a.at.Format(time.RFC3339Nano)
		}
		st.SkippedCount++
		if explain && len(st.Skipped) < maxListedSkips {
			st.Skipped = append(st.Skipped, Skip{Nominal: n, Reason: a.reason})
		}
		if a.day {
			// Every later occurrence that day goes the same way: go on
			// from the day's end (one Skip stands for the day), so that a
			// schedule firing every second does not give up on a holiday.
			d, _, _ := s.Calendar.local(n)
			if end := s.Calendar.atWall(d.add(1), 0, 0).Add(-time.Nanosecond); end.After(n) {
				n = end
			}
		}
	}
	return Step{Skipped: st.Skipped, SkippedCount: st.SkippedCount}
}

// adjusted is one occurrence after the calendar is applied.
type adjusted struct {
	at      time.Time
	moved   string // why at differs from the occurrence (explain only)
	skipped bool
	reason  string // why it was skipped (explain only)
	stuck   bool   // no business day or working time left: stop
	day     bool   // the day decided it (skipped or rolled): the rest of the day follows
}

// adjust applies the roll, then the working hours, to occurrence n.
func (s Schedule) adjust(n time.Time, explain bool) adjusted {
	c := s.Calendar
	a := adjusted{at: n.In(c.loc)}
	day, sec, nsec := c.local(n)
	_, holiday := c.holidayOn(day)
	if holiday || !c.isBusinessDate(day) && !(s.Roll == RollSkip && s.BusinessHoursOnly) {
		var why string
		if explain {
			why = c.reasonFor(day)
		}
		target, ok, how := c.roll(day, s.Roll)
		switch {
		case how == "":
			return adjusted{skipped: true, reason: why, day: true}
		case !ok:
			return adjusted{stuck: true}
		}
		a.at, a.day = c.atWall(target, sec, nsec), true
		if explain {
			a.moved = how + ": " + why
		}
	}
	if s.BusinessHoursOnly && !c.IsWorkingTime(a.at) {
		w, err := c.NextWorkingStart(a.at)
		if err != nil {
			return adjusted{stuck: true}
		}
		a.at = w
		if explain {
			if a.moved != "" {
				a.moved += "; "
			}
			a.moved += "outside working hours: moved to the next working start"
		}
	}
	return a
}

// roll finds the business day an occurrence on non-business day d moves
// to; how describes the move, "" when the roll skips.
func (c *Calendar) roll(d date, r Roll) (target date, ok bool, how string) {
	switch r {
	case RollNext:
		target, ok = c.businessDateFrom(d, 1)
		return target, ok, "rolled to the next business day"
	case RollPrevious:
		target, ok = c.businessDateFrom(d, -1)
		return target, ok, "rolled to the previous business day"
	case RollModifiedFollowing:
		target, ok = c.businessDateFrom(d, 1)
		if ok && target.y == d.y && target.m == d.m {
			return target, true, "rolled to the next business day"
		}
		if prev, okPrev := c.businessDateFrom(d, -1); okPrev {
			return prev, true, "rolled to the previous business day (modified following: the next one is in another month)"
		}
		return target, ok, "rolled to the next business day"
	}
	return date{}, false, ""
}
