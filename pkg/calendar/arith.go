package calendar

import (
	"context"
	"fmt"
	"time"
)

// AddWorkingContext returns the instant at which d of working time has elapsed,
// counting from t (or from [Calendar.NextWorkingStart] of t when t is not
// working time). Working time is elapsed time inside working intervals, so
// a 00:00-24:00 day counts 23 or 25 hours when the clocks change. When the
// count ends exactly at an interval's end, the result is that end, not the
// next interval's start. d == 0 returns t unchanged; d < 0 is an error.
// The error wraps [ErrNoWorkingTime] when 10 years pass without working
// time, and [ErrOutOfRange] when the count ends after year 9999. The
// result is in the calendar's zone.
//
// Its cost grows with the years the count spans, not its days: it passes
// whole runs of days at once (a calendar year, cut where the clocks
// change), then whole weeks, and walks only the days the clocks change on
// and the week the count ends in: about ten thousand steps to reach year
// 9999 from year 1, whatever the calendar. Past a budget of steps (which a
// calendar with a great many holiday dates can exhaust) the error wraps
// [ErrOverBudget]; when ctx ends first, it wraps ctx's error.
func (c *Calendar) AddWorkingContext(ctx context.Context, t time.Time, d time.Duration) (time.Time, error) {
	if d < 0 {
		return time.Time{}, fmt.Errorf("calendar: AddWorking: negative duration %v", d)
	}
	if d == 0 {
		return t, nil
	}
	return c.addWorkingJump(newMeter(ctx, "AddWorking", jumpBudget), t, d)
}

// addWorkingWalk is AddWorking a day at a time, recording in ex how it
// counted: the explanation needs every day.
func (c *Calendar) addWorkingWalk(ctx context.Context, t time.Time, d time.Duration, ex *Explanation) (time.Time, error) {
	if d < 0 {
		return time.Time{}, fmt.Errorf("calendar: AddWorking: negative duration %v", d)
	}
	if d == 0 {
		return t, nil
	}
	return newWorkWalk(c, t, d, ex).walk(newExplainMeter(ctx, "AddWorking"))
}

// AddWorkingDaysContext returns the same wall-clock time n working days later: a
// working day has working hours and is no holiday (in a calendar of
// holidays only, Monday to Friday). Counting starts with the first working
// day after t's date in the
// calendar's zone, so Friday 17:00 + 1 is Monday 17:00 and Saturday 10:00
// + 1 is Monday 10:00. A wall-clock time in a DST gap becomes the instant
// the gap ends; one in an overlap, its first occurrence. n == 0 returns t
// unchanged; n < 0 is an error. The error wraps [ErrNoWorkingTime] when 10
// years pass without a business day, and [ErrOutOfRange] when the result
// is after year 9999; when ctx ends first, it wraps ctx's error. Like
// [Calendar.AddWorkingContext] it passes whole years, then weeks, and
// walks the week the count ends in.
func (c *Calendar) AddWorkingDaysContext(ctx context.Context, t time.Time, n int) (time.Time, error) {
	if n < 0 {
		return time.Time{}, fmt.Errorf("calendar: AddWorkingDays: negative count %d", n)
	}
	if n == 0 {
		return t, nil
	}
	return c.addWorkingDaysJump(newMeter(ctx, "AddWorkingDays", jumpBudget), t, n)
}

// addWorkingDaysWalk is AddWorkingDays a day at a time, recording in ex
// the days it counted and the days it passed over.
func (c *Calendar) addWorkingDaysWalk(ctx context.Context, t time.Time, n int, ex *Explanation) (time.Time, error) {
	if n < 0 {
		return time.Time{}, fmt.Errorf("calendar: AddWorkingDays: negative count %d", n)
	}
	if n == 0 {
		return t, nil
	}
	return newDayWalk(c, t, n, ex).walk(newExplainMeter(ctx, "AddWorkingDays"))
}

// maxMonths bounds AddWorkingMonths (and AddWorkingYears): 10,000 years.
const maxMonths = 12 * 10000

// AddWorkingMonths returns the same wall-clock time n calendar months
// later (the day clamped to the month's end: 31 January + 1 is 28 or 29
// February), rolled forward to the next working day (as in
// [Calendar.AddWorkingDaysContext]) when that date is not one. With n == 0 only
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
