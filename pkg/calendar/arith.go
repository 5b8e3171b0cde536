package calendar

import (
	"context"
	"fmt"
	"math"
	"time"
)

// AddWorkingContext returns the instant at which d of working time has elapsed,
// counting from t (or from [Calendar.NextWorkingStart] of t when t is not
// working time). Working time is elapsed time inside working intervals, so
// a 00:00-24:00 day counts 23 or 25 hours when the clocks change. The
// result is the earliest instant with exactly d of working time between t
// and it: when the count ends exactly at an interval's end, the result is
// that end, not the next interval's start.
//
// A negative d counts backwards: the result is the latest instant with
// exactly -d of working time between it and t, so a count that ends
// exactly at an interval's start gives that start, not the previous
// interval's end, and t at an interval's end counts that interval while t
// at its start does not (the working time before t is that of [r, t)).
// d == 0 rolls only: t when it is working time, else the next working
// start. The error wraps [ErrNoWorkingTime] when 10 years pass without
// working time, and [ErrOutOfRange] when the count ends after year 9999
// or before year 1. The result is in the calendar's zone.
//
// Its cost grows with the years the count spans, not its days: it passes
// whole runs of days at once (a calendar year, cut where the clocks
// change), then whole weeks, and walks only the days the clocks change on
// and the week the count ends in: about ten thousand steps to reach year
// 9999 from year 1, whatever the calendar. Past a budget of steps (which a
// calendar with a great many holiday dates can exhaust) the error wraps
// [ErrOverBudget]; when ctx ends first, it wraps ctx's error.
func (c *Calendar) AddWorkingContext(ctx context.Context, t time.Time, d time.Duration) (time.Time, error) {
	switch {
	case d == math.MinInt64:
		return time.Time{}, fmt.Errorf("%w: working time %v", ErrOutOfRange, d)
	case d == 0:
		return c.NextWorkingStart(t)
	case d < 0:
		return c.subWorkingJump(newMeter(ctx, "AddWorking", jumpBudget), t, -d)
	}
	return c.addWorkingJump(newMeter(ctx, "AddWorking", jumpBudget), t, d)
}

// addWorkingWalk is AddWorking a day at a time, recording in ex how it
// counted: the explanation needs every day.
func (c *Calendar) addWorkingWalk(ctx context.Context, t time.Time, d time.Duration, ex *Explanation) (time.Time, error) {
	m := newExplainMeter(ctx, "AddWorking")
	switch {
	case d == math.MinInt64:
		return time.Time{}, fmt.Errorf("%w: working time %v", ErrOutOfRange, d)
	case d == 0:
		r, err := c.NextWorkingStart(t)
		if err == nil {
			ex.skipBetween(c, t, r)
		}
		return r, err
	case d < 0:
		return newBackWalk(c, t, -d, ex).walk(m)
	}
	return newWorkWalk(c, t, d, ex).walk(m)
}

// AddWorkingDaysContext returns the same wall-clock time n working days later: a
// working day has working hours and is no holiday (in a calendar of
// holidays only, Monday to Friday). Counting starts with the first working
// day after t's date in the
// calendar's zone, so Friday 17:00 + 1 is Monday 17:00 and Saturday 10:00
// + 1 is Monday 10:00. A negative n counts backwards from the first
// working day before t's date: Monday 10:00 - 1 is Friday 10:00, and so
// is Sunday 10:00 - 1. n == 0 rolls only: t when its date is a working
// day, else the same wall-clock time on the next one. A wall-clock time
// in a DST gap becomes the instant the gap ends; one in an overlap, its
// first occurrence. The error wraps [ErrNoWorkingTime] when 10
// years pass without a business day, and [ErrOutOfRange] when the result
// is after year 9999 or before year 1; when ctx ends first, it wraps ctx's error. Like
// [Calendar.AddWorkingContext] it passes whole years, then weeks, and
// walks the week the count ends in.
func (c *Calendar) AddWorkingDaysContext(ctx context.Context, t time.Time, n int) (time.Time, error) {
	if n == 0 {
		return c.addWorkingMonths(t, 0, nil)
	}
	return c.addWorkingDaysJump(newMeter(ctx, "AddWorkingDays", jumpBudget), t, n)
}

// addWorkingDaysWalk is AddWorkingDays a day at a time, recording in ex
// the days it counted and the days it passed over.
func (c *Calendar) addWorkingDaysWalk(ctx context.Context, t time.Time, n int, ex *Explanation) (time.Time, error) {
	if n == 0 {
		return c.addWorkingMonths(t, 0, ex)
	}
	return newDayWalk(c, t, n, ex).walk(newExplainMeter(ctx, "AddWorkingDays"))
}

// maxMonths bounds AddWorkingMonths (and AddWorkingYears): 10,000 years.
const maxMonths = 12 * 10000

// AddWorkingMonths returns the same wall-clock time n calendar months
// later (the day clamped to the month's end: 31 January + 1 is 28 or 29
// February), rolled forward to the next working day (as in
// [Calendar.AddWorkingDaysContext]) when that date is not one. A negative
// n goes n months back and rolls backward, to the previous working day
// (so the result is at least -n months before t). With n == 0 only
// the roll forward applies; t is returned unchanged when its own date is a working
// day. More than 10,000 years either way is an error, and so (wrapping
// [ErrNoWorkingTime]) is no working day within 10 years, and (wrapping
// [ErrOutOfRange]) a result after year 9999 or before year 1.
func (c *Calendar) AddWorkingMonths(t time.Time, n int) (time.Time, error) {
	return c.addWorkingMonths(t, n, nil)
}

// addWorkingMonths is AddWorkingMonths, recording in ex (when not nil) the
// days the result was rolled over.
func (c *Calendar) addWorkingMonths(t time.Time, n int, ex *Explanation) (time.Time, error) {
	if n < -maxMonths || n > maxMonths {
		return time.Time{}, fmt.Errorf("calendar: AddWorkingMonths: count %d out of range -%d to %d", n, maxMonths, maxMonths)
	}
	day, sec, nsec := c.local(t)
	m := int64(day.m) - 1 + int64(n)
	y := day.y + int(floorDiv(m, 12))
	mon := time.Month(floorMod(m, 12) + 1)
	target := date{y, mon, min(day.d, daysIn(y, mon))}
	dir := 1
	if n < 0 {
		dir = -1
	}
	rolled, ok := c.dateFrom(target, dir, c.isWorkingDate)
	if !ok {
		return time.Time{}, noWorkingTime(t)
	}
	for d := target; d != rolled; d = d.add(dir) {
		ex.skip(c, d)
	}
	if rolled == day {
		return t, nil
	}
	r := c.atWall(rolled, sec, nsec)
	if r.After(maxTime) || r.Before(minTime) {
		return time.Time{}, fmt.Errorf("%w: %d working months from %s", ErrOutOfRange, n, t.Format(time.RFC3339))
	}
	return r, nil
}

// AddWorkingYears is AddWorkingMonths with 12*n months: the same date n
// years later (29 February becomes 28 February in a common year), rolled
// forward to the next business day (backward, to the previous one, when
// n < 0).
func (c *Calendar) AddWorkingYears(t time.Time, n int) (time.Time, error) {
	if n < -maxMonths/12 || n > maxMonths/12 {
		return time.Time{}, fmt.Errorf("calendar: AddWorkingYears: count %d out of range -%d to %d", n, maxMonths/12, maxMonths/12)
	}
	return c.AddWorkingMonths(t, 12*n)
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

// skipBetween records the days without working time from t's date up to
// r's (a roll-only step's), r's excluded.
func (ex *Explanation) skipBetween(c *Calendar, t, r time.Time) {
	if ex == nil {
		return
	}
	from, _, _ := c.local(t)
	to, _, _ := c.local(r)
	for d := from; d.before(to); d = d.add(1) {
		if c.workReason(d) != "" {
			ex.skip(c, d)
		}
	}
}
