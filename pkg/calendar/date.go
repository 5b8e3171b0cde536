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
func (d date) add(n int) date { return dateOfDays(d.unixDays() + int64(n)) }

// addYears returns the date n years later, normalising 29 February to
// 1 March.
func (d date) addYears(n int) date { return dateOfDays(daysOf(d.y+n, d.m, d.d)) }

// weekday is the date's day of the week.
func (d date) weekday() time.Weekday { return weekdayOfDays(d.unixDays()) }

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
func (d date) unixDays() int64 { return daysOf(d.y, d.m, d.d) }

// daysOf is the number of days from 1970-01-01 to y-m-d in the proleptic
// Gregorian calendar; a day past the month's end counts on into the next
// months, as time.Date normalises it. It is integer arithmetic (H.
// Hinnant's days_from_civil): working-time arithmetic calls it for every
// day it passes.
func daysOf(y int, m time.Month, d int) int64 {
	yy := int64(y)
	if m <= time.February {
		yy--
	}
	era := floorDiv(yy, 400)
	yoe := yy - era*400
	mp := (int64(m) + 9) % 12
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// dateOfDays is the date n days after 1970-01-01 (days_from_civil's
// inverse).
func dateOfDays(n int64) date {
	z := n + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
	}
	y := yoe + era*400
	if m <= 2 {
		y++
	}
	return date{int(y), time.Month(m), int(d)}
}

// weekdayOfDays is the day of the week n days after 1970-01-01, a
// Thursday.
func weekdayOfDays(n int64) time.Weekday { return time.Weekday(floorMod(n+4, 7)) }

// floorDiv is a/b rounded down (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// floorMod is a mod b in [0, b) (b > 0).
func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// String formats the date as YYYY-MM-DD.
func (d date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.y, int(d.m), d.d) }

// monthDay formats the date's month and day as MM-DD.
func monthDay(m time.Month, d int) string { return fmt.Sprintf("%02d-%02d", int(m), d) }

// isLeap reports whether y is a Gregorian leap year.
func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// daysIn is the number of days in month m of year y.
func daysIn(y int, m time.Month) int {
	switch m {
	case time.February:
		if isLeap(y) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}

const secondsPerDay = 24 * 60 * 60

// horizonYears bounds every search for working time or business days.
const horizonYears = 10
