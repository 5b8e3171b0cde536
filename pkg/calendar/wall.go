package calendar

import (
	"math"
	"time"
)

// Working hours are wall-clock readings. To turn a date's readings into
// instants, the instants near the date are split into periods of constant
// UTC offset; within a period a reading r is the instant r - offset. A
// reading that no period holds lies in a DST gap, and one that two periods
// hold lies in an overlap.

// period is a span of unix seconds [start, end) with a constant offset.
type period struct {
	start, end int64
	off        int64
}

// periods lists the periods covering every instant whose wall-clock date
// is d, in order.
func (c *Calendar) periods(d date) []period {
	l0 := d.unixDays() * secondsPerDay
	// No UTC offset exceeds 26 hours: start before and end after the date.
	from, to := l0-30*3600, l0+54*3600
	var out []period
	for t := from; ; {
		p := c.zonePeriod(t)
		out = append(out, p)
		if p.end >= to || p.end <= t {
			return out
		}
		t = p.end
	}
}

// zonePeriod is the period holding unix second t. Past a zone's last
// listed transition Go derives periods from the zone's rule one UTC year
// at a time, cutting them at the new year (where the offset does not
// change), and during the last UTC day of a leap year it reports an end
// that is not after t: the offset then holds until the next UTC midnight
// (as cronx's zoneEnd has it). Without that, 31 December of a leap year
// after 2037 lost its working hours in every zone with DST.
func (c *Calendar) zonePeriod(t int64) period {
	tt := time.Unix(t, 0).In(c.loc)
	_, off := tt.Zone()
	s, e := tt.ZoneBounds()
	p := period{start: math.MinInt64, end: math.MaxInt64, off: int64(off)}
	if !s.IsZero() {
		p.start = s.Unix()
	}
	if !e.IsZero() {
		p.end = e.Unix()
	}
	if p.end <= t {
		p.start, p.end = t, (floorDiv(t, secondsPerDay)+1)*secondsPerDay
	}
	return p
}

// span is a working interval [start, end) of instants.
type span struct{ start, end time.Time }

// workSpans lists the working intervals of date d as instants, sorted and
// merged: none on a holiday or a day without working hours, a half day's
// own hours on a half day.
func (c *Calendar) workSpans(d date) []span {
	hours := c.hours[d.weekday()]
	if len(hours) == 0 {
		return nil
	}
	if _, ok := c.holidayOn(d); ok {
		return nil
	}
	if i, ok := c.halfDayOn(d); ok {
		hours = c.rules[i].half
	}
	return c.spansOf(d, hours)
}

// spansOf maps a date's wall-clock intervals to instants.
func (c *Calendar) spansOf(d date, hours []clockSpan) []span {
	l0 := d.unixDays() * secondsPerDay
	var out []span
	var lastEnd int64
	for _, p := range c.periods(d) {
		for _, h := range hours {
			u1 := max(l0+int64(h.start)-p.off, p.start)
			u2 := min(l0+int64(h.end)-p.off, p.end)
			if u1 >= u2 {
				continue
			}
			if n := len(out); n > 0 && lastEnd >= u1 {
				lastEnd = max(lastEnd, u2)
				out[n-1].end = time.Unix(lastEnd, 0).In(c.loc)
				continue
			}
			lastEnd = u2
			out = append(out, span{time.Unix(u1, 0).In(c.loc), time.Unix(u2, 0).In(c.loc)})
		}
	}
	return out
}

// atWall is the first instant reading sec seconds (plus nsec) after
// midnight on date d; a reading in a DST gap becomes the instant the gap
// ends.
func (c *Calendar) atWall(d date, sec int, nsec int) time.Time {
	l := d.unixDays()*secondsPerDay + int64(sec)
	ps := c.periods(d)
	for _, p := range ps {
		if u := l - p.off; p.start <= u && u < p.end {
			return time.Unix(u, int64(nsec)).In(c.loc)
		}
	}
	for _, p := range ps {
		if p.start != math.MinInt64 && p.start+p.off > l {
			return time.Unix(p.start, 0).In(c.loc)
		}
	}
	return time.Date(d.y, d.m, d.d, 0, 0, sec, nsec, c.loc) // not reached
}

// local is t's date and wall-clock reading in the calendar's zone.
func (c *Calendar) local(t time.Time) (d date, sec, nsec int) {
	t = t.In(c.loc)
	h, m, s := t.Clock()
	return dateOf(t), h*3600 + m*60 + s, t.Nanosecond()
}
