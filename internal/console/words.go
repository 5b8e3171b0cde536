package console

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// inWords says a schedule's recurrence in words ("every day at 02:00",
// "every 5 seconds"), or "" when it is a cron form the words do not cover
// (the pages always show the expression too).
func inWords(s kvstore.Spec) string {
	switch {
	case s.Every != "":
		return "every " + durationWords(s.Every)
	case s.At != nil:
		return "once"
	case s.BusinessDay != 0:
		t := s.Time
		if t == "" {
			t = "00:00"
		}
		if s.BusinessDay < 0 {
			if s.BusinessDay == -1 {
				return "the last business day of each month at " + t
			}
			return fmt.Sprintf("the %s-to-last business day of each month at %s", ordinal(-s.BusinessDay), t)
		}
		return fmt.Sprintf("the %s business day of each month at %s", ordinal(s.BusinessDay), t)
	case s.Cron != "":
		if s.Dialect == "quartz" {
			return ""
		}
		return cronWords(s.Cron, s.DomDow == "and")
	}
	return ""
}

// durationWords spells a duration of the grammar of spec fields ("90m",
// "1d 3h", "2 hours"; cronx.ParseDuration) in words ("1 hour 30
// minutes"); text it cannot read is returned as it is.
func durationWords(s string) string {
	d, err := cronx.ParseDuration(s)
	if err != nil || d <= 0 {
		return s
	}
	var parts []string
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}, {time.Millisecond, "millisecond"}} {
		if n := d / u.d; n > 0 {
			parts = append(parts, plural(int(n), u.name))
			d -= n * u.d
		}
	}
	if len(parts) == 0 {
		return s
	}
	if len(parts) == 1 && strings.HasPrefix(parts[0], "1 ") {
		return strings.TrimPrefix(parts[0], "1 ")
	}
	return strings.Join(parts, " ")
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}

// cronWords describes a standard cron expression: 5 fields, 6 with
// seconds first, 7 with a year (the year is not described), or an
// @alias. and says whether a day must match both day fields.
func cronWords(expr string, and bool) string {
	f := strings.Fields(expr)
	if len(f) > 0 && (strings.HasPrefix(f[0], "CRON_TZ=") || strings.HasPrefix(f[0], "TZ=")) {
		f = f[1:]
	}
	if len(f) == 1 {
		switch strings.ToLower(f[0]) {
		case "@yearly", "@annually":
			return "every year on January 1 at 00:00"
		case "@monthly":
			return "on the 1st of every month at 00:00"
		case "@weekly":
			return "every Sunday at 00:00"
		case "@daily", "@midnight":
			return "every day at 00:00"
		case "@hourly":
			return "every hour, on the hour"
		}
		return ""
	}
	if len(f) == 2 && strings.EqualFold(f[0], "@every") {
		return "every " + durationWords(f[1])
	}
	sec := "0"
	switch len(f) {
	case 5:
	case 6, 7:
		sec, f = f[0], f[1:6]
	default:
		return ""
	}
	when := timeWords(sec, f[0], f[1])
	days := dayWords(f[2], f[4], and)
	month := monthWords(f[3])
	if when == "" || days == "?" || month == "?" {
		return ""
	}
	out := when
	if days != "" {
		if at, ok := strings.CutPrefix(out, "every day at "); ok {
			out = "at " + at
		}
		out += " " + days
	}
	if month != "" {
		out += " " + month
	}
	return out
}

// number reads a plain field value within [lo, hi].
func number(s string, lo, hi int) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= lo && n <= hi
}

// timeWords describes the second, minute and hour fields ("" when it
// cannot).
func timeWords(sec, min, hour string) string {
	s, sok := number(sec, 0, 59)
	if !sok {
		if sec == "*" && min == "*" && hour == "*" {
			return "every second"
		}
		if n, ok := step(sec); ok && min == "*" && hour == "*" {
			return "every " + plural(n, "second")
		}
		return ""
	}
	clock := func(h, m int) string {
		if s != 0 {
			return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
		}
		return fmt.Sprintf("%02d:%02d", h, m)
	}
	m, mok := number(min, 0, 59)
	h, hok := number(hour, 0, 23)
	switch {
	case mok && hok:
		return "every day at " + clock(h, m)
	case min == "*" && hour == "*":
		return "every minute"
	case mok && hour == "*":
		return fmt.Sprintf("every hour at minute %d", m)
	}
	if n, ok := step(min); ok && hour == "*" {
		return "every " + plural(n, "minute")
	}
	if n, ok := step(hour); ok && mok {
		return fmt.Sprintf("every %s at minute %d", plural(n, "hour"), m)
	}
	hours, hok := list(hour, 0, 23)
	mins, mok := list(min, 0, 59)
	if hok && mok && len(hours)*len(mins) <= 6 {
		var times []string
		for _, h := range hours {
			for _, m := range mins {
				times = append(times, clock(h, m))
			}
		}
		return "every day at " + joinWords(times)
	}
	if mok && len(mins) == 1 {
		if lo, hi, ok := rangeOf(hour, 0, 23); ok {
			return fmt.Sprintf("every hour from %02d:%02d to %02d:%02d", lo, mins[0], hi, mins[0])
		}
	}
	return ""
}

// step reads "*/n".
func step(s string) (int, bool) {
	v, ok := strings.CutPrefix(s, "*/")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil && n > 0
}

// list reads "a,b,c" of plain numbers.
func list(s string, lo, hi int) ([]int, bool) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		n, ok := number(p, lo, hi)
		if !ok {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// rangeOf reads "a-b".
func rangeOf(s string, lo, hi int) (int, int, bool) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return 0, 0, false
	}
	x, ok1 := number(a, lo, hi)
	y, ok2 := number(b, lo, hi)
	return x, y, ok1 && ok2 && x <= y
}

// dayWords describes the day-of-month and day-of-week fields: "" for
// every day, "?" when it cannot.
func dayWords(dom, dow string, and bool) string {
	anyDom := dom == "*" || dom == "?"
	anyDow := dow == "*" || dow == "?"
	var d, w string
	if !anyDom {
		if d = domWords(dom); d == "" {
			return "?"
		}
	}
	if !anyDow {
		if w = dowWords(dow); w == "" {
			return "?"
		}
	}
	switch {
	case anyDom && anyDow:
		return ""
	case anyDom:
		return w
	case anyDow:
		return d
	case and:
		return d + " if it is " + strings.TrimPrefix(w, "on ")
	}
	return d + " or " + w
}

func domWords(dom string) string {
	if dom == "L" {
		return "on the last day of the month"
	}
	if days, ok := list(dom, 1, 31); ok {
		var ws []string
		for _, d := range days {
			ws = append(ws, ordinal(d))
		}
		return "on the " + joinWords(ws) + " of the month"
	}
	if lo, hi, ok := rangeOf(dom, 1, 31); ok {
		return fmt.Sprintf("on the %s to the %s of the month", ordinal(lo), ordinal(hi))
	}
	return ""
}

func dowWords(dow string) string {
	var names []string
	for _, p := range strings.Split(dow, ",") {
		if a, b, ok := strings.Cut(p, "-"); ok {
			x, ok1 := weekday(a)
			y, ok2 := weekday(b)
			if !ok1 || !ok2 {
				return ""
			}
			if x == 1 && y == 5 {
				names = append(names, "weekdays")
				continue
			}
			names = append(names, time.Weekday(x).String()+" to "+time.Weekday(y).String())
			continue
		}
		x, ok := weekday(p)
		if !ok {
			return ""
		}
		names = append(names, time.Weekday(x).String())
	}
	return "on " + joinWords(names)
}

// weekday reads a day of the week: 0-7 (0 and 7 Sunday) or a name.
func weekday(s string) (int, bool) {
	if n, ok := number(s, 0, 7); ok {
		return n % 7, true
	}
	for i := range 7 {
		name := time.Weekday(i).String()
		if len(s) >= 3 && len(s) <= len(name) && strings.EqualFold(s, name[:len(s)]) {
			return i, true
		}
	}
	return 0, false
}

func monthWords(mon string) string {
	if mon == "*" {
		return ""
	}
	var names []string
	for _, p := range strings.Split(mon, ",") {
		n, ok := month(p)
		if !ok {
			return "?"
		}
		names = append(names, time.Month(n).String())
	}
	return "in " + joinWords(names)
}

func month(s string) (int, bool) {
	if n, ok := number(s, 1, 12); ok {
		return n, true
	}
	for i := 1; i <= 12; i++ {
		name := time.Month(i).String()
		if len(s) >= 3 && len(s) <= len(name) && strings.EqualFold(s, name[:len(s)]) {
			return i, true
		}
	}
	return 0, false
}

// joinWords joins "a", "a and b", "a, b and c".
func joinWords(ws []string) string {
	switch len(ws) {
	case 0:
		return ""
	case 1:
		return ws[0]
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " and " + ws[len(ws)-1]
}
