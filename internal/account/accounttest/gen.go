// Package accounttest generates random specs and calendars for the
// property tests of the plan and of the engine's decisions against the
// reference model (package account): zones with DST at midnight and
// 30-minute shifts, calendars with odd weekends, split and 24-hour days,
// holidays of every kind, every roll, limits and ends.
package accounttest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

var zones = []string{
	"UTC", "America/New_York", "Europe/London", "Europe/Paris", "Asia/Kolkata",
	"America/Havana",      // DST at midnight (00:00 -> 01:00)
	"America/Santiago",    // DST at midnight, southern hemisphere
	"America/Asuncion",    // DST at midnight
	"Australia/Lord_Howe", // a 30-minute shift
	"Asia/Tehran", "Pacific/Chatham",
}

var dayNames = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// Calendar is a random calendar's JSON in zone.
func Calendar(r *rand.Rand, zone string) string {
	c := map[string]any{"zone": zone}
	switch r.IntN(3) {
	case 0: // hours: a random set of days (at least one), each one or two spans
		hours := map[string][]string{}
		for i, d := range dayNames {
			if r.IntN(7) < 5 || i == 3 {
				hours[d] = genSpans(r)
			}
		}
		c["hours"] = hours
	case 1: // a weekend, possibly odd (friday-saturday, one day)
		weekends := [][]string{{"sat", "sun"}, {"fri", "sat"}, {"sun"}, {"fri"}, {"sat"}}
		c["weekend"] = weekends[r.IntN(len(weekends))]
	}
	var hols []map[string]any
	for range r.IntN(6) {
		switch r.IntN(5) {
		case 0:
			hols = append(hols, map[string]any{"name": "fixed", "date": fmt.Sprintf("%02d-%02d", 1+r.IntN(12), 1+r.IntN(28)), "observed": []string{"", "nearest", "monday"}[r.IntN(3)]})
		case 1:
			hols = append(hols, map[string]any{"name": "nth", "month": 1 + r.IntN(12), "weekday": dayNames[r.IntN(7)], "nth": []int{1, 2, 3, -1}[r.IntN(4)]})
		case 2:
			hols = append(hols, map[string]any{"name": "easter", "easter": r.IntN(8) - 3})
		case 3:
			m := 1 + r.IntN(12)
			d := 1 + r.IntN(25)
			hols = append(hols, map[string]any{"name": "range", "from": fmt.Sprintf("%02d-%02d", m, d), "to": fmt.Sprintf("%02d-%02d", m, d+r.IntN(4))})
		case 4:
			var dates []string
			for range 1 + r.IntN(4) {
				dates = append(dates, fmt.Sprintf("2026-%02d-%02d", 1+r.IntN(12), 1+r.IntN(28)))
			}
			hols = append(hols, map[string]any{"name": "dates", "dates": dates})
		}
	}
	if len(hols) > 0 {
		c["holidays"] = hols
	} else {
		c["holidays"] = []any{}
	}
	b, _ := json.Marshal(c)
	return string(b)
}

// genSpans is a day's working hours: one or two spans, or all day.
func genSpans(r *rand.Rand) []string {
	switch r.IntN(6) {
	case 0:
		return []string{"00:00-24:00"}
	case 1, 2:
		a := 6 + r.IntN(4)
		b := a + 3 + r.IntN(3)
		c := b + 1 + r.IntN(2)
		d := c + 2 + r.IntN(6)
		return []string{fmt.Sprintf("%02d:00-%02d:30", a, b), fmt.Sprintf("%02d:00-%02d:00", c, min(d, 24))}
	default:
		a := 7 + r.IntN(3)
		return []string{fmt.Sprintf("%02d:00-%02d:30", a, a+7+r.IntN(3))}
	}
}

// Spec is a random spec with a calendar (most of the time), starting
// from, in zone.
func Spec(r *rand.Rand, from time.Time) kvstore.Spec {
	zone := zones[r.IntN(len(zones))]
	s := kvstore.Spec{Workflow: "w", TZ: zone}
	switch k := r.IntN(10); {
	case k < 5:
		s.Cron = genCron(r)
		s.DSTGap = []string{"", "skip", "shift"}[r.IntN(3)]
		s.DSTOverlap = []string{"", "once", "twice"}[r.IntN(3)]
	case k < 8:
		s.Every = []string{"7m", "45m", "1h", "90m", "5h", "24h", "36h", "7d"}[r.IntN(8)]
		s.Align = kvstore.AlignEpoch
	case k < 9:
		at := from.Add(time.Duration(r.IntN(30*24)) * time.Hour).Add(time.Duration(r.IntN(60)) * time.Minute).UTC()
		s.At = &at
	default:
		s.BusinessDay = []int{1, 2, 3, -1, -2}[r.IntN(5)]
		s.Time = fmt.Sprintf("%02d:%02d", 6+r.IntN(14), 15*r.IntN(4))
	}
	if r.IntN(5) > 0 {
		s.CalendarInline = json.RawMessage(Calendar(r, zone))
		if s.BusinessDay == 0 {
			s.HolidayRoll = []string{"skip", "next_business_day", "previous_business_day", "modified_following", "modified_preceding"}[r.IntN(5)]
			s.BusinessHoursOnly = r.IntN(2) == 0
		}
	}
	if r.IntN(6) == 0 && s.At == nil {
		s.Limit = 1 + r.IntN(40)
		start := from.Add(-time.Duration(r.IntN(72)) * time.Hour).UTC()
		s.Start = &start
	}
	if r.IntN(6) == 0 {
		end := from.Add(time.Duration(24+r.IntN(60*24)) * time.Hour).UTC()
		s.End = &end
	}
	return s
}

// genCron is a random 5-field cron expression.
func genCron(r *rand.Rand) string {
	minute := []string{"0", "30", "15,45", "*/20", "5"}[r.IntN(5)]
	hour := []string{"*", "0", "1", "2", "17", "23", "0,12", "*/3", "8-18", "22,23", "2,3", "1-3"}[r.IntN(12)]
	dom := "*"
	dow := []string{"*", "*", "1-5", "0,6", "4,5", "6", "0"}[r.IntN(7)]
	if r.IntN(5) == 0 {
		dom = []string{"1", "15", "28-31", "1,15"}[r.IntN(4)]
		dow = "*"
	}
	return strings.Join([]string{minute, hour, dom, "*", dow}, " ")
}

// WithPolicy gives spec a random misfire policy, threshold and catch-up
// window.
func WithPolicy(r *rand.Rand, spec kvstore.Spec) kvstore.Spec {
	spec.Misfire = []kvstore.MisfirePolicy{kvstore.MisfireSkip, kvstore.MisfireFireOnce, kvstore.MisfireFireAll}[r.IntN(3)]
	spec.MisfireThreshold = []string{"", "30s", "5m", "2h"}[r.IntN(4)]
	spec.CatchupWindow = []string{"", "1h", "6h", "72h"}[r.IntN(4)]
	return spec
}
