package calendar_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// thanksgiving is usCalendar with Thanksgiving, for a count that passes a
// holiday on a working weekday.
const thanksgiving = `{
  "zone": "America/New_York",
  "weekend": ["sat", "sun"],
  "holidays": [{"name": "Thanksgiving", "month": 11, "weekday": "thu", "nth": 4}]
}`

// TestAddWorkingExplain: the seed's Friday 17:00 + 48 working hours with
// both calendars of docs/calendar.md, and a count over Thanksgiving: the
// intervals used, the days passed over with their rules, the result.
func TestAddWorkingExplain(t *testing.T) {
	for _, tt := range []struct {
		name      string
		cal       string
		from      string
		d         time.Duration
		want      string
		intervals []string // "start end" in RFC 3339
		skipped   []string // "date reason"
	}{
		{"full working weekdays", `{"zone": "America/New_York", "hours": {"mon-fri": ["00:00-24:00"]}}`,
			"2026-12-04T17:00:00-05:00", 48 * time.Hour, "2026-12-08T17:00:00-05:00",
			[]string{"2026-12-04T17:00:00-05:00 2026-12-05T00:00:00-05:00", "2026-12-07T00:00:00-05:00 2026-12-08T00:00:00-05:00",
				"2026-12-08T00:00:00-05:00 2026-12-08T17:00:00-05:00"},
			[]string{"2026-12-05 no working hours on Saturday", "2026-12-06 no working hours on Sunday"}},
		{"default 09:00-18:00", `{"zone": "America/New_York"}`,
			"2026-12-04T17:00:00-05:00", 48 * time.Hour, "2026-12-14T11:00:00-05:00",
			[]string{"2026-12-04T17:00:00-05:00 2026-12-04T18:00:00-05:00",
				"2026-12-07T09:00:00-05:00 2026-12-07T18:00:00-05:00", "2026-12-08T09:00:00-05:00 2026-12-08T18:00:00-05:00",
				"2026-12-09T09:00:00-05:00 2026-12-09T18:00:00-05:00", "2026-12-10T09:00:00-05:00 2026-12-10T18:00:00-05:00",
				"2026-12-11T09:00:00-05:00 2026-12-11T18:00:00-05:00", "2026-12-14T09:00:00-05:00 2026-12-14T11:00:00-05:00"},
			[]string{"2026-12-05 no working hours on Saturday", "2026-12-06 no working hours on Sunday",
				"2026-12-12 no working hours on Saturday", "2026-12-13 no working hours on Sunday"}},
		{"over Thanksgiving", thanksgiving, "2026-11-25T16:00:00-05:00", 4 * time.Hour, "2026-11-27T11:00:00-05:00",
			[]string{"2026-11-25T16:00:00-05:00 2026-11-25T18:00:00-05:00", "2026-11-27T09:00:00-05:00 2026-11-27T11:00:00-05:00"},
			[]string{`2026-11-26 holiday "Thanksgiving" (4th Thursday of November)`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, tt.cal)
			from := ts(t, tt.from)
			got, ex, err := c.AddWorkingExplainContext(context.Background(), from, tt.d)
			checkTime(t, "AddWorkingExplain", got, err, tt.want)
			if !ex.Result.Equal(got) || !ex.From.Equal(from) {
				t.Errorf("explanation from %s result %s, want %s and %s", fmtT(ex.From), fmtT(ex.Result), tt.from, fmtT(got))
			}
			var ivs []string
			for _, iv := range ex.Intervals {
				ivs = append(ivs, iv.Start.Format(time.RFC3339)+" "+iv.End.Format(time.RFC3339))
			}
			if strings.Join(ivs, "\n") != strings.Join(tt.intervals, "\n") {
				t.Errorf("intervals:\n%s\nwant:\n%s", strings.Join(ivs, "\n"), strings.Join(tt.intervals, "\n"))
			}
			var sk []string
			for _, s := range ex.Skipped {
				sk = append(sk, s.Date.Format("2006-01-02")+" "+s.Reason)
			}
			if strings.Join(sk, "\n") != strings.Join(tt.skipped, "\n") {
				t.Errorf("skipped:\n%s\nwant:\n%s", strings.Join(sk, "\n"), strings.Join(tt.skipped, "\n"))
			}
		})
	}
}

func TestAddWorkingDaysAndMonthsExplain(t *testing.T) {
	c := mustParse(t, usCalendar)
	// Thursday 24 December 2026 + 2 working days: Christmas (Friday) and
	// the weekend are passed over; Monday 28 and Tuesday 29 count.
	got, ex, err := c.AddWorkingDaysExplainContext(context.Background(), ts(t, "2026-12-24T10:00:00-05:00"), 2)
	checkTime(t, "AddWorkingDaysExplain", got, err, "2026-12-29T10:00:00-05:00")
	var days []string
	for _, d := range ex.Days {
		days = append(days, d.Format("2006-01-02"))
	}
	if strings.Join(days, " ") != "2026-12-28 2026-12-29" {
		t.Errorf("days counted %v", days)
	}
	if len(ex.Skipped) != 3 || !strings.Contains(ex.Skipped[0].Reason, "Christmas Day") || ex.Skipped[1].Reason != "no working hours on Saturday" {
		t.Errorf("skipped %+v", ex.Skipped)
	}
	// 25 November 2026 + 1 month is Christmas, a Friday: rolled to Monday 28.
	got, ex, err = c.AddWorkingMonthsExplain(ts(t, "2026-11-25T10:00:00-05:00"), 1)
	checkTime(t, "AddWorkingMonthsExplain", got, err, "2026-12-28T10:00:00-05:00")
	if len(ex.Skipped) != 3 || ex.Skipped[0].Date.Format("2006-01-02") != "2026-12-25" {
		t.Errorf("rolled over %+v", ex.Skipped)
	}
	if _, _, err := c.AddWorkingYearsExplain(ts(t, "2026-11-25T10:00:00-05:00"), -20000); err == nil {
		t.Error("AddWorkingYearsExplain(-20000): want an error")
	}
}

// TestExplainAgreesWithPlain: every Explain variant returns what the plain
// call returns, and AddWorking's intervals add up to the duration asked,
// in order, each inside working time, with every skipped day explained.
func TestExplainAgreesWithPlain(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, js := range propertyCalendars {
		c := mustParse(t, js)
		for range 100 {
			from, d := randomInstant(r), randomDuration(r)
			plain, err1 := c.AddWorkingContext(context.Background(), from, d)
			got, ex, err2 := c.AddWorkingExplainContext(context.Background(), from, d)
			if err1 != nil || err2 != nil || !got.Equal(plain) {
				t.Fatalf("AddWorking(%s, %v) = %s %v; Explain %s %v", fmtT(from), d, fmtT(plain), err1, fmtT(got), err2)
			}
			var sum time.Duration
			prev := from
			for _, iv := range ex.Intervals {
				if iv.Start.Before(prev) || !iv.End.After(iv.Start) || !c.IsWorkingTime(iv.Start) {
					t.Fatalf("AddWorkingExplain(%s, %v): interval %s-%s out of order or not working time", fmtT(from), d, fmtT(iv.Start), fmtT(iv.End))
				}
				sum += iv.End.Sub(iv.Start)
				prev = iv.End
			}
			if sum != d || !prev.Equal(got) {
				t.Fatalf("AddWorkingExplain(%s, %v): intervals sum to %v, end %s", fmtT(from), d, sum, fmtT(prev))
			}
			for _, s := range ex.Skipped {
				if s.Reason == "" {
					t.Fatalf("AddWorkingExplain(%s, %v): %s skipped without a reason", fmtT(from), d, fmtT(s.Date))
				}
			}
			n := 1 + r.IntN(30)
			pd, err1 := c.AddWorkingDaysContext(context.Background(), from, n)
			gd, exd, err2 := c.AddWorkingDaysExplainContext(context.Background(), from, n)
			if err1 != nil || err2 != nil || !gd.Equal(pd) || len(exd.Days) != n {
				t.Fatalf("AddWorkingDays(%s, %d) = %s %v; Explain %s %v, %d days", fmtT(from), n, fmtT(pd), err1, fmtT(gd), err2, len(exd.Days))
			}
			pm, err1 := c.AddWorkingMonths(from, n)
			gm, _, err2 := c.AddWorkingMonthsExplain(from, n)
			if err1 != nil || err2 != nil || !gm.Equal(pm) {
				t.Fatalf("AddWorkingMonths(%s, %d) = %s %v; Explain %s %v", fmtT(from), n, fmtT(pm), err1, fmtT(gm), err2)
			}
		}
	}
}
