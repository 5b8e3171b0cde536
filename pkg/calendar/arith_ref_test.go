package calendar

import (
	"time"
)

// The reference walks: AddWorking and AddWorkingDays as they were before
// the jumps (a day at a time, with the 10-year horizon), kept verbatim so
// that the property tests and the fuzz target can hold the fast path to
// them. They are slow on purpose; give them small counts.

// refAddWorking is the day-by-day AddWorking.
func (c *Calendar) refAddWorking(t time.Time, d time.Duration) (time.Time, error) {
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
				return start.Add(rem).In(c.loc), nil
			}
			rem -= avail
			cur = s.end
		}
		if len(spans) > 0 {
			lastWork = day
		}
		if day = day.add(1); lastWork.addYears(horizonYears).before(day) {
			return time.Time{}, noWorkingTime(cur)
		}
	}
}

// refAddWorkingDays is the day-by-day AddWorkingDays.
func (c *Calendar) refAddWorkingDays(t time.Time, n int) (time.Time, error) {
	if n == 0 {
		return t, nil
	}
	day, sec, nsec := c.local(t)
	last := day
	for n > 0 {
		if day = day.add(1); c.isWorkingDate(day) {
			n--
			last = day
			continue
		}
		if last.addYears(horizonYears).before(day) {
			return time.Time{}, noWorkingTime(t)
		}
	}
	return c.atWall(day, sec, nsec), nil
}
