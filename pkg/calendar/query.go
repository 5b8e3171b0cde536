package calendar

import (
	"fmt"
	"time"
)

// Holiday is a holiday on a date, as found by [Calendar.Holiday].
type Holiday struct {
	// Name is the rule's name, such as "Christmas Day".
	Name string
	// Rule describes the rule, such as "fixed 12-25, observed nearest" or
	// "last Monday of May".
	Rule string
	// Date is the date, at 00:00 in the calendar's zone (or when a DST
	// gap that swallows midnight ends).
	Date time.Time
	// Observed is true when the date stands in for the rule's actual date:
	// its observed shift (a Saturday holiday observed on the Friday
	// before) or its substitute (the next free weekday).
	Observed bool
}

// Holiday reports the holiday on t's date in the calendar's zone. Both the
// actual date and the observed date of a shifted rule count. When several
// rules name the date, an actual date wins over an observed shift, then
// the first rule in the calendar's order.
func (c *Calendar) Holiday(t time.Time) (Holiday, bool) {
	d, _, _ := c.local(t)
	h, ok := c.holidayOn(d)
	if !ok {
		return Holiday{}, false
	}
	r := &c.rules[h.rule]
	return Holiday{
		Name:     r.name,
		Rule:     r.describe(),
		Date:     c.atWall(d, 0, 0),
		Observed: h.shifted(),
	}, true
}

// HalfDay reports the half-day rule (a rule with "hours") that shortens
// t's date in the calendar's zone: a business day that works only the
// rule's hours. It is false on a holiday and on a day without working
// hours, which a half day leaves closed. Observed is always false.
func (c *Calendar) HalfDay(t time.Time) (Holiday, bool) {
	d, _, _ := c.local(t)
	if len(c.hours[d.weekday()]) == 0 {
		return Holiday{}, false
	}
	if _, holiday := c.holidayOn(d); holiday {
		return Holiday{}, false
	}
	i, ok := c.halfDayOn(d)
	if !ok {
		return Holiday{}, false
	}
	r := &c.rules[i]
	return Holiday{Name: r.name, Rule: r.describe(), Date: c.atWall(d, 0, 0)}, true
}

// IsBusinessDay reports whether t's date in the calendar's zone is a
// business day: not a holiday, and, when the calendar gives "hours" (or a
// "weekend"), a day with working hours. A calendar of holidays only makes
// every other day a business day, weekends included.
func (c *Calendar) IsBusinessDay(t time.Time) bool {
	d, _, _ := c.local(t)
	return c.isBusinessDate(d)
}

// isBusinessDate is IsBusinessDay for a date: the days schedules skip and
// roll over.
func (c *Calendar) isBusinessDate(d date) bool {
	if c.dayOff(d) {
		return false
	}
	_, holiday := c.holidayOn(d)
	return !holiday
}

// dayOff reports whether d is a weekend day of a calendar that has them.
func (c *Calendar) dayOff(d date) bool {
	return c.ownHours && len(c.hours[d.weekday()]) == 0
}

// IsWorkingDay reports whether t's date in the calendar's zone has working
// hours and is not a holiday: the days [Calendar.AddWorkingDaysContext] counts.
// It differs from IsBusinessDay only in a calendar of holidays only, whose
// working days are Monday to Friday (the default hours) while every day
// but a holiday is a business day.
func (c *Calendar) IsWorkingDay(t time.Time) bool {
	d, _, _ := c.local(t)
	return c.isWorkingDate(d)
}

// isWorkingDate reports whether d has working hours (the default Monday
// to Friday in a calendar without its own) and is no holiday: the days
// working-time arithmetic counts.
func (c *Calendar) isWorkingDate(d date) bool {
	if len(c.hours[d.weekday()]) == 0 {
		return false
	}
	_, holiday := c.holidayOn(d)
	return !holiday
}

// NonWorkingReason explains why t's date is not a business day (see
// [Calendar.IsBusinessDay]), for example `holiday "Christmas Day" (fixed
// 12-25)` or `no working hours on Saturday`; it is "" on a business day. A holiday is named even when its
// date has no working hours anyway.
func (c *Calendar) NonWorkingReason(t time.Time) string {
	d, _, _ := c.local(t)
	return c.reasonFor(d)
}

// reasonFor is NonWorkingReason for a date.
func (c *Calendar) reasonFor(d date) string {
	if h, ok := c.holidayOn(d); ok {
		return c.holidayReason(h)
	}
	if c.dayOff(d) {
		return "no working hours on " + d.weekday().String()
	}
	return ""
}

// workReason explains why d has no working time (for working-time
// arithmetic, where a calendar of holidays only works Monday to Friday):
// the holiday, else the weekday without hours; "" on a working day.
func (c *Calendar) workReason(d date) string {
	if h, ok := c.holidayOn(d); ok {
		return c.holidayReason(h)
	}
	if len(c.hours[d.weekday()]) == 0 {
		return "no working hours on " + d.weekday().String()
	}
	return ""
}

// holidayReason names a holiday's rule: `holiday "Christmas Day" (fixed
// 12-25)`, with the actual date of an observed shift.
func (c *Calendar) holidayReason(h hit) string {
	r := &c.rules[h.rule]
	s := fmt.Sprintf("holiday %q (%s)", r.name, r.describe())
	switch h.kind {
	case hitObserved:
		s += fmt.Sprintf(", observed for %s %s", h.actual.weekday(), h.actual)
	case hitSubstitute:
		s += fmt.Sprintf(", substitute for %s %s", h.actual.weekday(), h.actual)
	}
	return s
}

// IsWorkingTime reports whether t is on a business day and inside one of
// its working intervals (start inclusive, end exclusive).
func (c *Calendar) IsWorkingTime(t time.Time) bool {
	d, _, _ := c.local(t)
	for _, s := range c.workSpans(d) {
		if !t.Before(s.start) && t.Before(s.end) {
			return true
		}
	}
	return false
}

// NextWorkingStart returns t itself when it is working time, else the start
// of the next working interval, in the calendar's zone. The error wraps
// [ErrNoWorkingTime] when there is none within 10 years.
func (c *Calendar) NextWorkingStart(t time.Time) (time.Time, error) {
	day, _, _ := c.local(t)
	if c.hours.hasWork() {
		limit := day.addYears(horizonYears)
		for ; !limit.before(day); day = day.add(1) {
			for _, s := range c.workSpans(day) {
				if !s.end.After(t) {
					continue
				}
				if !t.Before(s.start) {
					return t, nil
				}
				return s.start, nil
			}
		}
	}
	return time.Time{}, noWorkingTime(t)
}

// noWorkingTime wraps ErrNoWorkingTime with the instant searched from.
func noWorkingTime(t time.Time) error {
	return fmt.Errorf("%w after %s", ErrNoWorkingTime, t.Format(time.RFC3339))
}
