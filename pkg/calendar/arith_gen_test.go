package calendar

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// arithZones are the zones random calendars are drawn from: no DST, 1-hour
// DST, negative DST (Dublin), 30-minute DST (Lord Howe), DST at midnight
// (Santiago, Havana, Sao Paulo until 2019), a skipped day (Apia, 2011),
// several changes a year (Casablanca) and odd offsets (Chatham, Tehran,
// St John's, Kolkata).
var arithZones = []string{
	"UTC", "America/New_York", "Europe/London", "Europe/Dublin", "Australia/Lord_Howe", "America/Santiago",
	"America/Havana", "America/Sao_Paulo", "Pacific/Apia", "Africa/Casablanca", "Pacific/Chatham", "Asia/Tehran",
	"America/St_Johns", "Asia/Kolkata",
}

// genClock is a random wall-clock reading for working hours, biased to
// the hours DST changes happen at and to the day's ends.
func genClock(r *rand.Rand) int {
	switch r.IntN(4) {
	case 0:
		return []int{0, 1800, 3600, 5400, 7200, 9000, 10800, 12600, 23 * 3600, 86400}[r.IntN(10)]
	case 1:
		return r.IntN(24*60+1) * 60
	case 2:
		return r.IntN(86401)
	}
	return r.IntN(25) * 3600
}

// genSpans is one day's working hours: one to three disjoint intervals.
func genSpans(r *rand.Rand) []string {
	var pts []int
	for range 2 * (1 + r.IntN(3)) {
		pts = append(pts, genClock(r))
	}
	seen := map[int]bool{}
	var uniq []int
	for _, p := range pts {
		if !seen[p] {
			seen[p] = true
			uniq = append(uniq, p)
		}
	}
	if len(uniq)%2 == 1 {
		uniq = uniq[:len(uniq)-1]
	}
	if len(uniq) == 0 {
		return []string{`"09:00-09:01"`}
	}
	sortInts(uniq)
	var out []string
	for i := 0; i < len(uniq); i += 2 {
		out = append(out, fmt.Sprintf("%q", formatClock(uniq[i])+"-"+formatClock(uniq[i+1])))
	}
	return out
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// genRule is one random holiday rule: every kind, with "observed",
// "substitute" or half-day "hours" where the kind allows them.
func genRule(r *rand.Rand, i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"name": "h%d"`, i)
	md := func() string { return fmt.Sprintf("%02d-%02d", 1+r.IntN(12), 1+r.IntN(28)) }
	kind := r.IntN(10)
	switch kind {
	case 0:
		d := md()
		if r.IntN(8) == 0 {
			d = "02-29"
		}
		fmt.Fprintf(&b, `, "date": %q`, d)
	case 1:
		nth := []int{1, 2, 3, 4, 5, -1, -2}[r.IntN(7)]
		fmt.Fprintf(&b, `, "month": %d, "weekday": %q, "nth": %d`, 1+r.IntN(12), dayNames[r.IntN(7)], nth)
	case 2:
		from, to := md(), md()
		if r.IntN(2) == 0 { // short
			m, d := 1+r.IntN(12), 1+r.IntN(20)
			from, to = fmt.Sprintf("%02d-%02d", m, d), fmt.Sprintf("%02d-%02d", m, d+r.IntN(8))
		}
		fmt.Fprintf(&b, `, "from": %q, "to": %q`, from, to)
	case 3:
		off := r.IntN(7) - 3
		if r.IntN(5) == 0 {
			off = r.IntN(601) - 300
		}
		fmt.Fprintf(&b, `, "easter": %d`, off)
	case 4:
		var ds []string
		for range 1 + r.IntN(6) {
			ds = append(ds, fmt.Sprintf("%q", fmt.Sprintf("%04d-%02d-%02d", 1995+r.IntN(110), 1+r.IntN(12), 1+r.IntN(28))))
		}
		fmt.Fprintf(&b, `, "dates": [%s]`, strings.Join(ds, ", "))
	case 6:
		fmt.Fprintf(&b, `, "julian_easter": %d`, r.IntN(7)-3)
	case 7:
		fmt.Fprintf(&b, `, "equinox": %q`, []string{"march", "september"}[r.IntN(2)])
	case 8:
		anchor := []string{fmt.Sprintf("%q", md()), fmt.Sprintf(`{"month": %d, "weekday": %q, "nth": %d}`, 1+r.IntN(12), dayNames[r.IntN(7)], 1+r.IntN(4)),
			fmt.Sprintf(`{"easter": %d}`, r.IntN(61)-30), fmt.Sprintf(`{"julian_easter": %d}`, r.IntN(11)-5)}[r.IntN(4)]
		fmt.Fprintf(&b, `, "weekday": %q, %q: %s`, dayNames[r.IntN(7)], []string{"before", "after", "on_or_before", "on_or_after"}[r.IntN(4)], anchor)
	case 9:
		b.WriteString(`, "between_holidays": true`)
	default: // a closure of whole years: the 10-year horizon
		fmt.Fprintf(&b, `, "from": "01-01", "to": "12-31"`)
		y := 1990 + r.IntN(110)
		fmt.Fprintf(&b, `, "years": [%d, %d]`, y, y+r.IntN(14))
		b.WriteString("}")
		return b.String()
	}
	single := kind == 0 || kind == 1 || kind == 3 || (kind >= 6 && kind <= 8)
	switch k := r.IntN(6); {
	case single && k <= 1:
		fmt.Fprintf(&b, `, "observed": %q`, []string{"nearest", "monday", "sunday_to_monday"}[r.IntN(3)])
	case single && k == 2:
		b.WriteString(`, "substitute": "next_free_weekday"`)
		if r.IntN(2) == 0 {
			fmt.Fprintf(&b, `, "substitute_on": [%q]`, dayNames[r.IntN(7)])
		}
	case kind != 9 && k == 3: // a half day
		fmt.Fprintf(&b, `, "hours": [%s]`, strings.Join(genSpans(r), ", "))
	}
	if r.IntN(4) == 0 {
		y := 1990 + r.IntN(110)
		fmt.Fprintf(&b, `, "years": [%d, %d]`, y, y+r.IntN(30))
	}
	b.WriteString("}")
	return b.String()
}

// genCalendar is a random calendar's JSON: a zone, working hours (its own,
// a weekend, or the default), and up to five holiday rules.
// zone is the calendar's zone ("" for a random one of arithZones).
func genCalendar(r *rand.Rand, zone string) string {
	if zone == "" {
		zone = arithZones[r.IntN(len(arithZones))]
	}
	var parts []string
	parts = append(parts, fmt.Sprintf(`"zone": %q`, zone))
	switch k := r.IntN(10); {
	case k == 0: // default hours
	case k == 1:
		parts = append(parts, `"weekend": ["sat", "sun"]`)
	case k == 2: // one minute a week
		parts = append(parts, fmt.Sprintf(`"hours": {%q: ["09:00-09:01"]}`, dayNames[r.IntN(7)]))
	default:
		var days []string
		for i, n := range dayNames {
			if r.IntN(2) == 0 || (i == 6 && len(days) == 0) {
				days = append(days, fmt.Sprintf("%q: [%s]", n, strings.Join(genSpans(r), ", ")))
			}
		}
		parts = append(parts, `"hours": {`+strings.Join(days, ", ")+"}")
	}
	if n := r.IntN(6); n > 0 {
		var rules []string
		for i := range n {
			rules = append(rules, genRule(r, i))
		}
		parts = append(parts, `"holidays": [`+strings.Join(rules, ", ")+"]")
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// genInstant is an instant from 1965 to 2095: on a whole hour, a whole
// minute or with nanoseconds.
func genInstant(r *rand.Rand) time.Time {
	base := time.Date(1965, 1, 1, 0, 0, 0, 0, time.UTC)
	t := base.Add(time.Duration(r.Int64N(int64(130 * 365 * 24 * time.Hour))))
	switch r.IntN(3) {
	case 0:
		t = t.Truncate(time.Hour)
	case 1:
		t = t.Truncate(time.Minute)
	}
	return t
}

// weekWall is the calendar's wall-clock working time in a week, in
// seconds.
func (c *Calendar) weekWall() int64 {
	var s int64
	for _, day := range c.hours {
		for _, h := range day {
			s += int64(h.end - h.start)
		}
	}
	return s
}

// genCount is a working duration of up to about 150 weeks of the
// calendar's hours (so the reference walk stays cheap): tiny, a whole
// number of its weeks, or anything between.
func genCount(r *rand.Rand, c *Calendar) time.Duration {
	w := time.Duration(c.weekWall()) * time.Second
	if w == 0 {
		return time.Hour
	}
	switch r.IntN(5) {
	case 0:
		return time.Duration(1 + r.Int64N(int64(time.Minute)))
	case 1:
		return w * time.Duration(1+r.IntN(150))
	case 2:
		return (w * time.Duration(1+r.IntN(150))).Truncate(time.Minute) + time.Minute
	}
	return time.Duration(1 + r.Int64N(int64(w)*150))
}

// genDays is a count of working days up to about 150 weeks' worth.
func genDays(r *rand.Rand, c *Calendar) int {
	per := 0
	for _, day := range c.hours {
		if len(day) > 0 {
			per++
		}
	}
	return 1 + r.IntN(max(1, per*150))
}
