package calendar

import "time"

// hit is a holiday on a date: the rule, and whether the date is the
// observed shift of the rule's actual date (then actual is that date).
type hit struct {
	rule     int
	observed bool
	actual   date
}

// maxCachedYears bounds the holiday cache; past it the cache starts over.
const maxCachedYears = 512

// holidayOn finds the holiday on d, if any.
func (c *Calendar) holidayOn(d date) (hit, bool) {
	if len(c.rules) == 0 {
		return hit{}, false
	}
	c.mu.RLock()
	m, ok := c.years[d.y]
	c.mu.RUnlock()
	if !ok {
		m = c.computeYear(d.y)
		c.mu.Lock()
		if c.years == nil || len(c.years) >= maxCachedYears {
			c.years = make(map[int]map[date]hit)
		}
		c.years[d.y] = m
		c.mu.Unlock()
	}
	h, ok := m[d]
	return h, ok
}

// computeYear lists the holidays falling in calendar year y. A date that
// several rules name belongs to the first of them in the calendar's order,
// and an actual date takes precedence over an observed shift.
func (c *Calendar) computeYear(y int) map[date]hit {
	var m map[date]hit
	c.eachHoliday(y, func(d date, h hit) {
		if m == nil {
			m = make(map[date]hit)
		}
		if _, taken := m[d]; !taken {
			m[d] = h
		}
	})
	return m
}

// eachHoliday calls fn with every holiday date falling in calendar year y
// (a date may come more than once), in the order of eachHolidayRun.
func (c *Calendar) eachHoliday(y int, fn func(d date, h hit)) {
	c.eachHolidayRun(y, nil, func(run dayRun, h hit) {
		for d := run.from; !run.to.before(d); d = d.add(1) {
			fn(d, h)
		}
	})
}

// eachHolidayRun calls fn with the holidays falling in calendar year y, as
// runs of dates within y (a date may come more than once): first the
// rules' actual dates, then their observed shifts, each in the calendar's
// order of rules. Rule years y-1 and y+1 count too: ranges, Easter offsets
// and observed shifts cross the new year. It is the one definition of
// which dates are holidays, for the cache and for working-time jumps. buf
// is scratch space, returned for reuse.
func (c *Calendar) eachHolidayRun(y int, buf []dayRun, fn func(run dayRun, h hit)) []dayRun {
	first, last := date{y, time.January, 1}, date{y, time.December, 31}
	for pass := range 2 {
		for i := range c.rules {
			r := &c.rules[i]
			if pass == 1 && r.observed == observedNone {
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
							fn(dayRun{o, o}, hit{rule: i, observed: true, actual: d})
						}
					}
				}
			}
		}
	}
	return buf
}
