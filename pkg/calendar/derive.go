package calendar

import (
	"slices"
	"time"
)

// Substitutes and bridge days depend on the other rules' dates, so a
// year's are derived once its neighbours' actual holidays are known:
// derive looks at the years y-1 to y+1 through bit sets of their days.

// maxSubstituteDays bounds the search for a substitute: a holiday whose
// next 31 days hold no free weekday gets none.
const maxSubstituteDays = 31

// noteRules completes the rules once the calendar is parsed: the zone
// equinoxes are read in, and whether any rule derives dates or gives half
// days.
func (c *Calendar) noteRules() {
	for i := range c.rules {
		r := &c.rules[i]
		r.loc = c.loc
		c.derives = c.derives || r.subst || r.kind == kindBridge
		c.halves = c.halves || r.half != nil
	}
}

// daySet is a set of days, as bits from a first unix day.
type daySet struct {
	first int64
	bits  []uint64
}

func newDaySet(first, end int64) daySet {
	return daySet{first: first, bits: make([]uint64, (end-first+63)/64)}
}

func (s daySet) has(d date) bool { return s.hasDay(d.unixDays()) }

// hasDay is has for unix day x.
func (s daySet) hasDay(x int64) bool {
	x -= s.first
	return x >= 0 && x < int64(len(s.bits))*64 && s.bits[x/64]&(1<<(x%64)) != 0
}

func (s daySet) add(d date) { s.addDays(d.unixDays(), d.unixDays()) }

// addDays adds the unix days from lo to hi, both included.
func (s daySet) addDays(lo, hi int64) {
	for x := max(lo, s.first) - s.first; x <= hi-s.first && x < int64(len(s.bits))*64; x++ {
		s.bits[x/64] |= 1 << (x % 64)
	}
}

// derive computes year y's substitutes and bridge days, in date order.
//
// Substitutes: the single-date rules with "substitute" are taken in order
// of their actual dates (then of the rules) from 1 January of y-1; one
// falling on a weekday it substitutes for is also kept on the first later
// day within maxSubstituteDays that has working hours, is not one of the
// weekdays substituted for, and is neither a holiday (actual or observed)
// nor an earlier substitute. Starting a year early makes the cascade the
// same whichever year is asked first: a chain of substitutes cannot span
// a year.
//
// Bridge days: a day of y that is no holiday or substitute, between two
// actual holidays, is a holiday of the first "between_holidays" rule
// whose years hold y.
func (c *Calendar) derive(y int) []datedHit {
	first, end := daysOf(y-1, time.January, 1), daysOf(y+2, time.January, 1)
	actual, holiday, taken := newDaySet(first, end), newDaySet(first, end), newDaySet(first, end)
	var buf []dayRun
	for yy := y - 1; yy <= y+1; yy++ {
		buf = c.eachBaseRun(yy, false, buf, func(run dayRun, h hit) {
			lo, hi := run.from.unixDays(), run.to.unixDays()
			holiday.addDays(lo, hi)
			if h.kind == hitActual {
				actual.addDays(lo, hi)
			}
		})
	}
	var out []datedHit
	for _, o := range c.substituteDates(y) {
		r := &c.rules[o.h.rule]
		if !c.substitutesFor(r, o.d.weekday()) {
			continue
		}
		for k := 1; k <= maxSubstituteDays; k++ {
			s := o.d.add(k)
			if holiday.has(s) || taken.has(s) || len(c.hours[s.weekday()]) == 0 || r.substOn&(1<<s.weekday()) != 0 {
				continue
			}
			taken.add(s)
			if s.y == y {
				out = append(out, datedHit{s, hit{rule: o.h.rule, kind: hitSubstitute, actual: o.d}})
			}
			break
		}
	}
	for i := range c.rules {
		r := &c.rules[i]
		if r.kind != kindBridge || !r.inYears(y) {
			continue
		}
		for x := daysOf(y, time.January, 1); x < daysOf(y+1, time.January, 1); x++ {
			if actual.hasDay(x-1) && actual.hasDay(x+1) && !holiday.hasDay(x) && !taken.hasDay(x) {
				taken.addDays(x, x)
				out = append(out, datedHit{dateOfDays(x), hit{rule: i, kind: hitBridge}})
			}
		}
	}
	slices.SortFunc(out, func(a, b datedHit) int { return cmpInt(a.d.unixDays(), b.d.unixDays()) })
	return out
}

// substituteDates lists the actual dates from 1 January of y-1 to 31
// December of y of the rules with "substitute", by date then rule.
func (c *Calendar) substituteDates(y int) []datedHit {
	from, to := date{y - 1, time.January, 1}, date{y, time.December, 31}
	var out []datedHit
	for i := range c.rules {
		r := &c.rules[i]
		if !r.subst {
			continue
		}
		for ry := y - 2; ry <= y+1; ry++ {
			if d, ok := r.dateIn(ry); ok && r.inYears(ry) && !d.before(from) && !to.before(d) {
				out = append(out, datedHit{d, hit{rule: i}})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b datedHit) int { return cmpInt(a.d.unixDays(), b.d.unixDays()) })
	return out
}

// substitutesFor reports whether a holiday of r on weekday wd gets a
// substitute: wd is in "substitute_on", or by default has no working
// hours.
func (c *Calendar) substitutesFor(r *rule, wd time.Weekday) bool {
	if r.substOn != 0 {
		return r.substOn&(1<<wd) != 0
	}
	return len(c.hours[wd]) == 0
}

// halfDaysOf fills in year y's half days: the dates of the rules with
// "hours", the first rule in the calendar's order naming each.
func (c *Calendar) halfDaysOf(y int, info *yearInfo) {
	c.eachBaseRun(y, true, nil, func(run dayRun, h hit) {
		for d := run.from; !run.to.before(d); d = d.add(1) {
			if _, dup := info.half[d]; dup {
				continue
			}
			if info.half == nil {
				info.half = make(map[date]int)
			}
			info.half[d] = h.rule
			info.halfDays = append(info.halfDays, d.unixDays())
		}
	})
	slices.Sort(info.halfDays)
}

// withHalfDays merges year y's half days into the sorted unix days
// irregular: working-time jumps walk them, as their hours are not their
// weekday's.
func (c *Calendar) withHalfDays(y int, irregular []int64) []int64 {
	if !c.halves {
		return irregular
	}
	irregular = append(irregular, c.year(y).halfDays...)
	slices.Sort(irregular)
	return slices.Compact(irregular)
}
