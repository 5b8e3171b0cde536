package calendar

import "time"

// hitKind says how a date came to be a holiday.
type hitKind uint8

const (
	hitActual     hitKind = iota // the rule's own date
	hitObserved                  // the "observed" shift of the rule's date
	hitSubstitute                // the "substitute" for the rule's date
	hitBridge                    // a "between_holidays" day
)

// hit is a holiday on a date: the rule, how, and for an observed shift or
// a substitute the rule's actual date.
type hit struct {
	rule   int
	kind   hitKind
	actual date
}

// shifted reports whether the date stands in for the rule's actual date.
func (h hit) shifted() bool { return h.kind == hitObserved || h.kind == hitSubstitute }

// yearInfo is what the cache knows of one calendar year.
type yearInfo struct {
	// days are the year's holidays.
	days map[date]hit
	// derived are the year's substitutes and bridge days, in date order
	// (they are in days too).
	derived []datedHit
	// half are the year's half days (rule indexes), not holidays; halfDays
	// are their unix days, sorted.
	half     map[date]int
	halfDays []int64
}

// datedHit is a holiday and its date.
type datedHit struct {
	d date
	h hit
}

// maxCachedYears bounds the holiday cache; past it the cache starts over.
const maxCachedYears = 512

// holidayOn finds the holiday on d, if any.
func (c *Calendar) holidayOn(d date) (hit, bool) {
	if len(c.rules) == 0 {
		return hit{}, false
	}
	h, ok := c.year(d.y).days[d]
	return h, ok
}

// halfDayOn finds the half-day rule on d, if any. A holiday on d wins:
// callers ask only of dates that are not holidays.
func (c *Calendar) halfDayOn(d date) (int, bool) {
	if !c.halves {
		return 0, false
	}
	i, ok := c.year(d.y).half[d]
	return i, ok
}

// year is the cached information of calendar year y.
func (c *Calendar) year(y int) *yearInfo {
	c.mu.RLock()
	info, ok := c.years[y]
	c.mu.RUnlock()
	if ok {
		return info
	}
	info = c.computeYear(y)
	c.mu.Lock()
	if c.years == nil || len(c.years) >= maxCachedYears {
		c.years = make(map[int]*yearInfo)
	}
	c.years[y] = info
	c.mu.Unlock()
	return info
}

// computeYear lists the holidays and half days falling in calendar year y.
// A date that several rules name belongs to the first of them in the
// calendar's order, an actual date takes precedence over an observed
// shift, and substitutes and bridge days only take dates that are free.
func (c *Calendar) computeYear(y int) *yearInfo {
	info := &yearInfo{}
	add := func(d date, h hit) {
		if info.days == nil {
			info.days = make(map[date]hit)
		}
		if _, taken := info.days[d]; !taken {
			info.days[d] = h
		}
	}
	c.eachBaseRun(y, false, nil, func(run dayRun, h hit) {
		for d := run.from; !run.to.before(d); d = d.add(1) {
			add(d, h)
		}
	})
	if c.derives {
		info.derived = c.derive(y)
		for _, dh := range info.derived {
			add(dh.d, dh.h)
		}
	}
	if c.halves {
		c.halfDaysOf(y, info)
	}
	return info
}

// eachHolidayRun calls fn with the holidays falling in calendar year y, as
// runs of dates within y (a date may come more than once): first the
// rules' actual dates, then their observed shifts, each in the calendar's
// order of rules, then the substitutes and bridge days. It is the one
// definition of which dates are holidays, for the cache and for
// working-time jumps. buf is scratch space, returned for reuse.
func (c *Calendar) eachHolidayRun(y int, buf []dayRun, fn func(run dayRun, h hit)) []dayRun {
	buf = c.eachBaseRun(y, false, buf, fn)
	if c.derives {
		for _, dh := range c.year(y).derived {
			fn(dayRun{dh.d, dh.d}, dh.h)
		}
	}
	return buf
}

// eachBaseRun is eachHolidayRun without the substitutes and bridge days:
// the rules' actual dates (pass 0), then their observed shifts (pass 1).
// Rule years y-1 and y+1 count too: ranges, Easter offsets and observed
// shifts cross the new year. Half-day rules give no holidays: with half
// set, it gives their dates instead (which have no observed shifts).
func (c *Calendar) eachBaseRun(y int, half bool, buf []dayRun, fn func(run dayRun, h hit)) []dayRun {
	first, last := date{y, time.January, 1}, date{y, time.December, 31}
	for pass := range 2 {
		for i := range c.rules {
			r := &c.rules[i]
			if (r.half != nil) != half || (pass == 1 && r.observed == observedNone) {
				continue
			}
			for ry := y - 1; ry <= y+1; ry++ {
				if !r.inYears(ry) {
					continue
				}
				buf = r.occurrences(ry, buf[:0])
				for _, run := range buf {
					if pass == 0 {
						if run.from.before(first) {
							run.from = first
						}
						if last.before(run.to) {
							run.to = last
						}
						if !run.to.before(run.from) {
							fn(run, hit{rule: i})
						}
						continue
					}
					for d := run.from; !run.to.before(d); d = d.add(1) {
						if o, ok := r.observedDate(d); ok && o.y == y {
							fn(dayRun{o, o}, hit{rule: i, kind: hitObserved, actual: d})
						}
					}
				}
			}
		}
	}
	return buf
}
