package calendar

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
// and an actual date takes precedence over an observed shift. Rule years
// y-1 and y+1 count too: ranges, Easter offsets and observed shifts cross
// the new year.
func (c *Calendar) computeYear(y int) map[date]hit {
	var m map[date]hit
	add := func(d date, h hit) {
		if d.y != y {
			return
		}
		if m == nil {
			m = make(map[date]hit)
		}
		if _, taken := m[d]; !taken {
			m[d] = h
		}
	}
	var buf []date
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
				for _, d := range buf {
					if pass == 0 {
						add(d, hit{rule: i})
					} else if o, ok := r.observedDate(d); ok {
						add(o, hit{rule: i, observed: true, actual: d})
					}
				}
			}
		}
	}
	return m
}
