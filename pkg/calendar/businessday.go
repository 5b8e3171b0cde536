package calendar

import "time"

// BusinessDay is a recurrence: the N-th business day of each month (N >= 1;
// -1 the last, -2 the second to last, ...) at Hour:Minute:Second wall-clock
// time in the calendar's zone (a time in a DST gap fires when the gap
// ends, one in an overlap at its first occurrence). A month with fewer
// than |N| business days has no fire. It never fires with a nil Calendar,
// N == 0, a time of day out of range, or when no month within 10 years
// has a fire.
type BusinessDay struct {
	Calendar             *Calendar
	N                    int
	Hour, Minute, Second int
}

// Next returns the first fire time strictly after after, or the zero time.
func (b BusinessDay) Next(after time.Time) time.Time {
	c := b.Calendar
	if c == nil || b.N == 0 || b.Hour < 0 || b.Hour > 23 || b.Minute < 0 || b.Minute > 59 || b.Second < 0 || b.Second > 59 {
		return time.Time{}
	}
	sec := b.Hour*3600 + b.Minute*60 + b.Second
	day, _, _ := c.local(after)
	y, m := day.y, day.m
	for range horizonYears*12 + 2 {
		if d, ok := c.nthBusinessDay(y, m, b.N); ok {
			if t := c.atWall(d, sec, 0); t.After(after) {
				return t
			}
		}
		if m++; m > time.December {
			y, m = y+1, time.January
		}
	}
	return time.Time{}
}

// nthBusinessDay is the n-th business day of a month (n < 0: from the
// end).
func (c *Calendar) nthBusinessDay(y int, m time.Month, n int) (date, bool) {
	days := daysIn(y, m)
	step, d := 1, 1
	if n < 0 {
		step, d, n = -1, days, -n
	}
	for ; d >= 1 && d <= days; d += step {
		if c.isBusinessDate(date{y, m, d}) {
			if n--; n == 0 {
				return date{y, m, d}, true
			}
		}
	}
	return date{}, false
}
