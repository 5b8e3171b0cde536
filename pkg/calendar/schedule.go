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
//
// A fire may come from an occurrence earlier than the fire before it: a
// Thursday 17:30 occurrence moved to Tuesday 09:00 (Friday and Monday
// holidays) comes before Friday's, rolled to Tuesday 17:30. So the fire
// after a moved fire is found from the occurrence that fire came from
// (ExplainAfter, cronx.ExplainAfter), not from its time: every
// occurrence after it is considered, and those whose adjusted time is
// not after the fire merge into it (docs/calendar.md, "Every occurrence
// accounted for").
type Schedule struct {
	Base              cronx.Schedule
	Calendar          *Calendar
	Roll              Roll
	BusinessHoursOnly bool
}

// Explain is Next with the explanation: the occurrence the fire came
// from, why it moved (Moved: for example `rolled to the next business
// day: holiday "Christmas Day" (fixed 12-25)` or `outside working hours:
// moved to the next working start`, or both joined by "; "), and the
// occurrences passed over on the way (a cronx.Skip's Reason names the
// rule, such as `holiday "Christmas Day" (fixed 12-25)`, or says `merged
// into the fire at 2026-01-05T09:00:00-05:00`; its Through ends a run of
// them: a holiday's every occurrence, the occurrences of a night merged
// into the next working start).
func (s Schedule) Explain(after time.Time) cronx.Step {
	return s.plan(after, after, true, false)
}

// ExplainAfter is the step after a fire at at that came from occurrence
// nominal (earlier than at when the calendar moved it): the occurrences
// after nominal are considered, and those whose adjusted time is not
// after at merge into the fire at at.
func (s Schedule) ExplainAfter(at, nominal time.Time) cronx.Step {
	return s.plan(nominal, at, true, true)
}

var (
	_ cronx.Explainer = Schedule{}
	_ cronx.Resumer   = Schedule{}
)

// Next returns the first fire time strictly after after, or the zero time.
func (s Schedule) Next(after time.Time) time.Time { return s.plan(after, after, false, false).At }

// plan walks the recurrence's occurrences after from and returns the
// first whose adjusted time is after after; explain records the texts.
// An occurrence adjusted to after or before it merges into the fire at
// after. fired says after is known to be a fire time (ExplainAfter); a
// plan from any other time (a new plan, a preview from a given time) is
// walked without the runs of business hours below, since after need not
// be a working time.
//
// Runs of occurrences that go the same way are passed in one step, so
// that a schedule firing every second neither gives up on a holiday nor
// walks a night of business-hours-only occurrences one by one: a
// skipped day, from the occurrence to the day's end; an occurrence
// merged into the fire at after, up to the last occurrence of its day
// whose adjusted time cannot be later (its own time on a business day;
// the wall-clock time of after's on a day rolled to after's date).
func (s Schedule) plan(from, after time.Time, explain, fired bool) cronx.Step {
	var st cronx.Step
	if s.Base == nil || s.Calendar == nil {
		return st
	}
	n := from
	for range maxPassedOver {
		next, baseMoved := s.Base.Next(n), ""
		if explain {
			// The recurrence's own move (a cron's DST gap) is said too.
			base := cronx.Explain(s.Base, n)
			next, baseMoved = base.At, base.Moved
		}
		if next.IsZero() || !next.After(n) {
			return st
		}
		n = next
		a := s.adjust(n, explain)
		switch {
		case a.stuck:
			return st
		case !a.skipped && a.at.After(after):
			st.At, st.Nominal, st.Moved = a.at, n, joinMoves(baseMoved, a.moved)
			return st
		}
		sk := cronx.Skip{Nominal: n, Reason: a.reason}
		if !a.skipped && explain {
			sk.Reason = "merged into the fire at " + after.In(s.Calendar.loc).Format(time.RFC3339Nano)
		}
		own := !a.skipped && n.Equal(after) // an occurrence at the fire's own time: that fire stands for it
		if end := s.runEnd(n, a, after, fired); end.After(n) {
			if more := s.Base.Next(n); !more.IsZero() && !more.After(end) {
				if own {
					sk.Nominal, own = more, false // the run's others are named from the next one
				}
				if more.Before(end) || !sk.Nominal.Equal(more) {
					sk.Through = end // the run holds more than its first
				}
			}
			n = end
		}
		if own {
			// Named by no Skip: its ledger entry is its fire's, under the
			// same slot id, which a skipped entry would overwrite.
			continue
		}
		st.SkippedCount++
		if explain && len(st.Skipped) < maxListedSkips {
			st.Skipped = append(st.Skipped, sk)
		}
	}
	return cronx.Step{Skipped: st.Skipped, SkippedCount: st.SkippedCount}
}

// runEnd is the end of the run of occurrences from n, adjusted as a
// and not fired (skipped, or not after after), that go the same way: the
// walk goes on from there. n itself when no run can be told.
func (s Schedule) runEnd(n time.Time, a adjusted, after time.Time, fired bool) time.Time {
	if !a.skipped && !fired && s.BusinessHoursOnly {
		// after is not a fire, so not a working time: an occurrence before
		// it may move past it to the next working start. One by one.
		return n
	}
	c := s.Calendar
	d, _, _ := c.local(n)
	dayEnd := c.atWall(d.add(1), 0, 0).Add(-time.Nanosecond)
	switch {
	case a.skipped:
		// Every occurrence of a skipped day is skipped.
		return dayEnd
	case a.day:
		// A day rolled to another: each occurrence at its own wall-clock
		// time there, so those not later than after's on after's date
		// merge too; every one of them when after is on a later date.
		target, _, _ := c.local(a.at)
		ad, asec, ansec := c.local(after)
		switch {
		case target.before(ad):
			return dayEnd
		case target == ad:
			x := c.atWall(d, asec, ansec)
			if _, xsec, xnsec := c.local(x); xsec != asec || xnsec != ansec {
				// That reading is in a DST gap on d: x is the gap's end,
				// whose occurrences read later than after's. Up to the
				// gap only.
				x = x.Add(-time.Nanosecond)
			}
			return earlier(x, dayEnd)
		}
		return n
	}
	// A business day: an occurrence not later than after (its own time,
	// or the working start business hours move it to) merges into it.
	return earlier(after, dayEnd)
}

// joinMoves joins the recurrence's move of an occurrence and the
// calendar's, either of which may be "".
func joinMoves(base, cal string) string {
	switch {
	case base == "":
		return cal
	case cal == "":
		return base
	}
	return base + "; " + cal
}

// earlier is the earlier of a and b.
func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
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
