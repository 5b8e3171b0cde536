package calendar

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// dayRun is a run of consecutive dates, from to to, both included (empty
// when to is before from).
type dayRun struct{ from, to date }

// occurrences appends the rule's actual dates for rule year ry (the year
// its date, its nth weekday, its Easter or the start of its range falls
// in), ignoring "years": a range as one run, every other date as a run of
// one.
func (r *rule) occurrences(ry int, out []dayRun) []dayRun {
	switch r.kind {
	case kindRange:
		from := date{ry, r.month, r.day}
		if from.d > daysIn(ry, from.m) { // 02-29 in a common year starts on 03-01
			from = date{ry, time.March, 1}
		}
		toYear := ry
		if r.toMonth < r.month || (r.toMonth == r.month && r.toDay < r.day) {
			toYear++
		}
		to := date{toYear, r.toMonth, min(r.toDay, daysIn(toYear, r.toMonth))}
		if !to.before(from) {
			out = append(out, dayRun{from, to})
		}
	case kindDates: // sorted: the year's dates are a run
		i, _ := slices.BinarySearchFunc(r.dates, ry, func(d date, y int) int { return d.y - y })
		for ; i < len(r.dates) && r.dates[i].y == ry; i++ {
			out = append(out, dayRun{r.dates[i], r.dates[i]})
		}
	case kindBridge: // derived from the other rules' dates (see derive)
	default:
		if d, ok := r.dateIn(ry); ok {
			out = append(out, dayRun{d, d})
		}
	}
	return out
}

// dateIn is the date of a rule naming one date a year (see singleDate) in
// rule year ry, if it has one.
func (r *rule) dateIn(ry int) (date, bool) {
	switch r.kind {
	case kindDate:
		return date{ry, r.month, r.day}, r.day <= daysIn(ry, r.month)
	case kindNth:
		return nthWeekday(ry, r.month, r.weekday, r.nth)
	case kindEaster:
		return easterSunday(ry).add(r.easter), true
	case kindJulianEaster:
		return julianEasterSunday(ry).add(r.easter), true
	case kindEquinox:
		return equinoxDate(ry, r.month, r.loc), true
	case kindRelative:
		a, ok := r.anchor.dateIn(ry)
		if !ok {
			return date{}, false
		}
		return a.add(r.rel.shift(a.weekday(), r.weekday)), true
	}
	return date{}, false
}

// shift is the number of days from an anchor on weekday from to the
// weekday wd the relation names.
func (rel relation) shift(from, wd time.Weekday) int {
	back, ahead := int(from-wd+7)%7, int(wd-from+7)%7
	switch rel {
	case relBefore:
		if back == 0 {
			back = 7
		}
		return -back
	case relAfter:
		if ahead == 0 {
			ahead = 7
		}
		return ahead
	case relOnOrBefore:
		return -back
	}
	return ahead
}

// nthWeekday is the n-th (n < 0: from the end) weekday wd of a month.
func nthWeekday(y int, m time.Month, wd time.Weekday, n int) (date, bool) {
	days := daysIn(y, m)
	var day int
	if n > 0 {
		first := date{y, m, 1}.weekday()
		day = 1 + int(wd-first+7)%7 + (n-1)*7
	} else {
		last := date{y, m, days}.weekday()
		day = days - int(last-wd+7)%7 + (n+1)*7
	}
	if day < 1 || day > days {
		return date{}, false
	}
	return date{y, m, day}, true
}

// observedDate is the weekday a holiday on d is also observed on; ok is
// false when the rule does not shift d.
func (r *rule) observedDate(d date) (date, bool) {
	wd := d.weekday()
	switch {
	case r.observed == observedNearest && wd == time.Saturday:
		return d.add(-1), true
	case r.observed == observedNearest && wd == time.Sunday:
		return d.add(1), true
	case r.observed == observedMonday && wd == time.Saturday:
		return d.add(2), true
	case r.observed == observedMonday && wd == time.Sunday:
		return d.add(1), true
	case r.observed == observedSundayToMonday && wd == time.Sunday:
		return d.add(1), true
	}
	return date{}, false
}

// inYears reports whether the rule applies in rule year ry.
func (r *rule) inYears(ry int) bool {
	return !r.hasYears || (ry >= r.fromYear && ry <= r.toYear)
}

// describe is the human description of the rule, such as
// "fixed 12-25, observed nearest" or "last Monday of May".
func (r *rule) describe() string {
	var b strings.Builder
	switch r.kind {
	case kindDate:
		b.WriteString("fixed " + monthDay(r.month, r.day))
	case kindNth:
		b.WriteString(ordinal(r.nth) + " " + r.weekday.String() + " of " + r.month.String())
	case kindRange:
		b.WriteString("from " + monthDay(r.month, r.day) + " to " + monthDay(r.toMonth, r.toDay))
	case kindEaster:
		b.WriteString("Easter Sunday" + daysText(r.easter))
	case kindDates:
		if len(r.dates) == 1 {
			b.WriteString("date " + r.dates[0].String())
		} else {
			fmt.Fprintf(&b, "%d dates from %s to %s", len(r.dates), r.dates[0], r.dates[len(r.dates)-1])
		}
	default:
		b.WriteString(r.describeExt())
	}
	if r.observed != observedNone {
		b.WriteString(", observed " + observedNames[r.observed])
	}
	b.WriteString(r.describeOptions())
	if r.hasYears {
		if r.fromYear == r.toYear {
			fmt.Fprintf(&b, ", in %d", r.fromYear)
		} else {
			fmt.Fprintf(&b, ", %d to %d", r.fromYear, r.toYear)
		}
	}
	return b.String()
}

// daysText is an offset in days for descriptions: "", " +1 day", " -2 days".
func daysText(n int) string {
	switch {
	case n == 1 || n == -1:
		return fmt.Sprintf(" %+d day", n)
	case n != 0:
		return fmt.Sprintf(" %+d days", n)
	}
	return ""
}

// ordinal names the n-th: "1st", "2nd", "last", "2nd to last".
func ordinal(n int) string {
	if n == -1 {
		return "last"
	}
	if n < 0 {
		return ordinal(-n) + " to last"
	}
	switch n {
	case 1:
		return "1st"
	case 2:
		return "2nd"
	case 3:
		return "3rd"
	}
	return fmt.Sprintf("%dth", n)
}
