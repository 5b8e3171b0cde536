package calendar

import (
	"fmt"
	"time"
)

// date is a civil (wall-calendar) date, independent of any zone.
type date struct {
	y int
	m time.Month
	d int
}

// dateOf is the date of t's wall clock in t's own location.
func dateOf(t time.Time) date {
	y, m, d := t.Date()
	return date{y, m, d}
}

// utc is the date at 00:00 UTC, used for calendar arithmetic.
func (d date) utc() time.Time { return time.Date(d.y, d.m, d.d, 0, 0, 0, 0, time.UTC) }

// add returns the date n days later (n may be negative).
func (d date) add(n int) date { return dateOf(time.Date(d.y, d.m, d.d+n, 0, 0, 0, 0, time.UTC)) }

// addYears returns the date n years later, normalising 29 February.
func (d date) addYears(n int) date { return dateOf(time.Date(d.y+n, d.m, d.d, 0, 0, 0, 0, time.UTC)) }

// weekday is the date's day of the week.
func (d date) weekday() time.Weekday { return d.utc().Weekday() }

// before reports whether d is earlier than o.
func (d date) before(o date) bool {
	if d.y != o.y {
		return d.y < o.y
	}
	if d.m != o.m {
		return d.m < o.m
	}
	return d.d < o.d
}

// unixDays is the number of days from 1970-01-01 to d.
func (d date) unixDays() int64 { return d.utc().Unix() / secondsPerDay }

// String formats the date as YYYY-MM-DD.
func (d date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.y, int(d.m), d.d) }

// monthDay formats the date's month and day as MM-DD.
func monthDay(m time.Month, d int) string { return fmt.Sprintf("%02d-%02d", int(m), d) }

// isLeap reports whether y is a Gregorian leap year.
func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// daysIn is the number of days in month m of year y.
func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

const secondsPerDay = 24 * 60 * 60

// horizonYears bounds every search for working time or business days.
const horizonYears = 10
