package calendar

import (
	"fmt"
	"time"
)

// AddWorking returns the instant at which d of working time has elapsed,
// counting from t (or from [Calendar.NextWorkingStart] of t when t is not
// working time). Working time is elapsed time inside working intervals, so
// a 00:00-24:00 day counts 23 or 25 hours when the clocks change. When the
// count ends exactly at an interval's end, the result is that end, not the
// next interval's start. d == 0 returns t unchanged; d < 0 is an error.
// The error wraps [ErrNoWorkingTime] when 10 years pass without working
// time. The result is in the calendar's zone.
func (c *Calendar) AddWorking(t time.Time, d time.Duration) (time.Time, error) {
	return c.addWorking(t, d, nil)
}

// addWorking is AddWorking, recording in ex (when not nil) the working
// time it used and the days it passed over.
func (c *Calendar) addWorking(t time.Time, d time.Duration, ex *Explanation) (time.Time, error) {
	if d < 0 {
		return time.Time{}, fmt.Errorf("calendar: AddWorking: negative duration %v", d)
	}
	if d == 0 {
		return t, nil
	}
	day, _, _ := c.local(t)
	lastWork := day
	cur, rem := t, d
	for {
		spans := c.workSpans(day)
		for _, s := range spans {
			if !s.end.After(cur) {
				continue
			}
			start := s.start
			if cur.After(start) {
				start = cur
			}
			avail := s.end.Sub(start)
			if rem <= avail {
				end := start.Add(rem).In(c.loc)
				ex.used(start, end)
				return end, nil
			}
			ex.used(start, s.end)
			rem -= avail
			cur = s.end
		}
		if len(spans) > 0 {
			lastWork = day
		} else {
			ex.skip(c, day)
		}
		if day = day.add(1); lastWork.addYears(horizonYears).before(day) {
			return time.Time{}, noWorkingTime(cur)
		}
	}
}

// AddWorkingDays returns the same wall-clock time n working days later: a
// working day has working hours and is no holiday (in a calendar of
// holidays only, Monday to Friday). Counting starts with the first working
// day after t's date in the
// calendar's zone, so Friday 17:00 + 1 is Monday 17:00 and Saturday 10:00
// + 1 is Monday 10:00. A wall-clock time in a DST gap becomes the instant
// the gap ends; one in an overlap, its first occurrence. n == 0 returns t
// unchanged; n < 0 is an error. The error wraps [ErrNoWorkingTime] when 10
// years pass without a business day.
func (c *Calendar) AddWorkingDays(t time.Time, n int) (time.Time, error) {
	return c.addWorkingDays(t, n, nil)
}

// addWorkingDays is AddWorkingDays, recording in ex (when not nil) the
// days it counted and the days it passed over.
func (c *Calendar) addWorkingDays(t time.Time, n int, ex *Explanation) (time.Time, error) {
	if n < 0 {
		return time.Time{}, fmt.Errorf("calendar: AddWorkingDays: negative count %d", n)
	}
	if n == 0 {
		return t, nil
	}
	day, sec, nsec := c.local(t)
	last := day
	for n > 0 {
		if day = day.add(1); c.isWorkingDate(day) {
			n--
			last = day
			ex.count(c, day)
			continue
		}
		ex.skip(c, day)
		if last.addYears(horizonYears).before(day) {
			return time.Time{}, noWorkingTime(t)
		}
	}
	return c.atWall(day, sec, nsec), nil
}

// maxMonths bounds AddWorkingMonths (and AddWorkingYears): 10,000 years.
const maxMonths = 12 * 10000

// AddWorkingMonths returns the same wall-clock time n calendar months
// later (the day clamped to the month's end: 31 January + 1 is 28 or 29
// February), rolled forward to the next working day (as in
// [Calendar.AddWorkingDays]) when that date is not one. With n == 0 only
// the roll applies; t is returned unchanged when its own date is a working
// day. n < 0 or more than 10,000 years is an error, and so (wrapping
// [ErrNoWorkingTime]) is no working day within 10 years.
func (c *Calendar) AddWorkingMonths(t time.Time, n int) (time.Time, error) {
	return c.addWorkingMonths(t, n, nil)
}

// addWorkingMonths is AddWorkingMonths, recording in ex (when not nil) the
// days the result was rolled over.
func (c *Calendar) addWorkingMonths(t time.Time, n int, ex *Explanation) (time.Time, error) {
	if n < 0 || n > maxMonths {
		return time.Time{}, fmt.Errorf("calendar: AddWorkingMonths: count %d out of range 0-%d", n, maxMonths)
	}
	day, sec, nsec := c.local(t)
	m := int(day.m) - 1 + n
	y := day.y + m/12
	mon := time.Month(m%12 + 1)
	target := date{y, mon, min(day.d, daysIn(y, mon))}
	rolled, ok := c.dateFrom(target, 1, c.isWorkingDate)
	if !ok {
		return time.Time{}, noWorkingTime(t)
	}
	for d := target; d.before(rolled); d = d.add(1) {
		ex.skip(c, d)
	}
	if rolled == day {
		return t, nil
	}
	return c.atWall(rolled, sec, nsec), nil
}

// AddWorkingYears is AddWorkingMonths with 12*n months: the same date n
// years later (29 February becomes 28 February in a common year), rolled
// forward to the next business day.
func (c *Calendar) AddWorkingYears(t time.Time, n int) (time.Time, error) {
	if n < 0 || n > maxMonths/12 {
		return time.Time{}, fmt.Errorf("calendar: AddWorkingYears: count %d out of range 0-%d", n, maxMonths/12)
	}
	return c.AddWorkingMonths(t, 12*n)
}

// businessDateFrom returns d if it is a business day, else the nearest one
// after it (dir 1) or before it (dir -1), searching 10 years.
func (c *Calendar) businessDateFrom(d date, dir int) (date, bool) {
	return c.dateFrom(d, dir, c.isBusinessDate)
}

// dateFrom returns d if ok(d), else the nearest date after it (dir 1) or
// before it (dir -1) that is, searching 10 years.
func (c *Calendar) dateFrom(d date, dir int, ok func(date) bool) (date, bool) {
	if !c.hours.hasWork() {
		return date{}, false
	}
	limit := d.addYears(dir * horizonYears)
	for ; ; d = d.add(dir) {
		if ok(d) {
			return d, true
		}
		if (dir > 0 && limit.before(d)) || (dir < 0 && d.before(limit)) {
			return date{}, false
		}
	}
}
