package calendar_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

// propertyCalendars cover split days, Saturdays, 24-hour days, holidays
// and zones with 1-hour, 30-minute and midnight DST changes.
var propertyCalendars = []string{
	specExample,
	usCalendar,
	usHolidays,
	`{"zone": "America/New_York", "hours": {"mon-fri": ["00:00-24:00"]}, "holidays": [{"name": "X", "date": "12-25", "observed": "nearest"}]}`,
	`{"zone": "Australia/Lord_Howe", "hours": {"mon-sun": ["01:00-02:30", "02:45-03:00:01", "22:00-24:00"]}, "holidays": [{"name": "E", "easter": 0}, {"name": "R", "from": "12-20", "to": "01-05"}]}`,
	`{"zone": "America/Santiago", "hours": {"mon-sat": ["00:00-00:30", "23:00-24:00"]}, "holidays": [{"name": "N", "month": 9, "weekday": "sat", "nth": 1}]}`,
	`{"zone": "Europe/London", "hours": {"sun": ["00:59:59-01:00:01", "01:30-02:30"]}}`,
}

// randomInstant is an instant in 2020-2031 with random nanoseconds, or on
// a whole hour half the time.
func randomInstant(r *rand.Rand) time.Time {
	base := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	t := base.Add(time.Duration(r.Int64N(int64(11 * 365 * 24 * time.Hour))))
	if r.IntN(2) == 0 {
		t = t.Truncate(time.Hour)
	}
	return t
}

// randomDuration is a working duration up to about 300 hours, whole
// minutes half the time.
func randomDuration(r *rand.Rand) time.Duration {
	d := time.Duration(r.Int64N(int64(300*time.Hour))) + 1
	if r.IntN(2) == 0 {
		d = d.Truncate(time.Minute) + time.Minute
	}
	return d
}

func TestAddWorkingProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, js := range propertyCalendars {
		c := mustParse(t, js)
		n := 300
		if testing.Short() {
			n = 50
		}
		for range n {
			from := randomInstant(r)
			a, b := randomDuration(r), randomDuration(r)
			if b < a {
				a, b = b, a
			}
			ra, err := c.AddWorkingContext(context.Background(), from, a)
			if err != nil {
				t.Fatal(err)
			}
			rb, err := c.AddWorkingContext(context.Background(), from, b)
			if err != nil {
				t.Fatal(err)
			}
			start, _ := c.NextWorkingStart(from)
			// Working time, or exactly an interval end: the instant before
			// is working time on a business day.
			for _, res := range []time.Time{ra, rb} {
				before := res.Add(-1)
				if !c.IsWorkingTime(before) || !c.IsBusinessDay(before) {
					t.Fatalf("%s\nAddWorking(%s) = %s: the instant before is not working time", js, fmtT(from), fmtT(res))
				}
				if h, ok := c.Holiday(before); ok {
					t.Fatalf("AddWorking(%s) = %s lands on %+v", fmtT(from), fmtT(res), h)
				}
				if !c.IsWorkingTime(res) {
					if next, _ := c.NextWorkingStart(res); !next.After(res) {
						t.Fatalf("AddWorking(%s) = %s: neither working time nor an interval end", fmtT(from), fmtT(res))
					}
				}
				if res.Location().String() != c.Location().String() {
					t.Fatalf("result in %s", res.Location())
				}
			}
			// Monotonic in d, and elapsed time is at least the working time.
			if rb.Before(ra) || ra.Sub(start) < a || rb.Sub(start) < b {
				t.Fatalf("%s\nfrom %s (start %s): +%v = %s, +%v = %s", js, fmtT(from), fmtT(start), a, fmtT(ra), b, fmtT(rb))
			}
			// Additive when the first result is strictly inside an interval
			// (and, counting from the next start, at an interval end too).
			rab, err := c.AddWorkingContext(context.Background(), ra, b-a)
			if err != nil || (b > a && !rab.Equal(rb)) {
				t.Fatalf("%s\nAddWorking(AddWorking(%s, %v) = %s, %v) = %s, want %s", js, fmtT(from), a, fmtT(ra), b-a, fmtT(rab), fmtT(rb))
			}
		}
	}
}

func TestNextWorkingStartProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, js := range propertyCalendars {
		c := mustParse(t, js)
		for range 200 {
			from := randomInstant(r)
			got, err := c.NextWorkingStart(from)
			if err != nil || got.Before(from) || !c.IsWorkingTime(got) {
				t.Fatalf("%s\nNextWorkingStart(%s) = %s, %v", js, fmtT(from), fmtT(got), err)
			}
			if c.IsWorkingTime(from) != got.Equal(from) {
				t.Fatalf("NextWorkingStart(%s) = %s", fmtT(from), fmtT(got))
			}
			// Nothing between is working time (sampled).
			for range 5 {
				if span := got.Sub(from); span > 0 {
					probe := from.Add(time.Duration(r.Int64N(int64(span))))
					if c.IsWorkingTime(probe) {
						t.Fatalf("NextWorkingStart(%s) = %s but %s is working time", fmtT(from), fmtT(got), fmtT(probe))
					}
				}
			}
		}
	}
}

func TestAddWorkingDaysProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, js := range propertyCalendars {
		c := mustParse(t, js)
		loc := c.Location()
		for range 200 {
			from := randomInstant(r).In(loc)
			n := r.IntN(30) + 1
			got, err := c.AddWorkingDaysContext(context.Background(), from, n)
			if err != nil || !got.After(from) || !c.IsWorkingDay(got) {
				t.Fatalf("%s\nAddWorkingDays(%s, %d) = %s, %v", js, fmtT(from), n, fmtT(got), err)
			}
			// n business days later: the last of the days counted.
			count := 0
			for d := from.AddDate(0, 0, 1); ; d = d.AddDate(0, 0, 1) {
				if c.IsWorkingDay(d) {
					count++
				}
				if y, m, day := d.Date(); y == got.Year() && m == got.Month() && day == got.Day() {
					break
				}
			}
			if count != n {
				t.Fatalf("AddWorkingDays(%s, %d) = %s is %d business days later", fmtT(from), n, fmtT(got), count)
			}
			// Same wall clock, unless it does not exist that day.
			if got.Hour() != from.Hour() || got.Minute() != from.Minute() || got.Second() != from.Second() || got.Nanosecond() != from.Nanosecond() {
				probe := time.Date(got.Year(), got.Month(), got.Day(), from.Hour(), from.Minute(), from.Second(), from.Nanosecond(), loc)
				if h, m, s := probe.Clock(); h == from.Hour() && m == from.Minute() && s == from.Second() {
					t.Fatalf("AddWorkingDays(%s, %d) = %s: wall clock changed", fmtT(from), n, fmtT(got))
				}
			}
			months := r.IntN(30)
			gm, err := c.AddWorkingMonths(from, months)
			if err != nil || !c.IsBusinessDay(gm) || gm.Before(from) {
				t.Fatalf("AddWorkingMonths(%s, %d) = %s, %v", fmtT(from), months, fmtT(gm), err)
			}
		}
	}
}

// TestQueriesAgree: IsBusinessDay, NonWorkingReason and Holiday agree.
func TestQueriesAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, js := range propertyCalendars {
		c := mustParse(t, js)
		for range 500 {
			at := randomInstant(r)
			reason := c.NonWorkingReason(at)
			_, holiday := c.Holiday(at)
			if c.IsBusinessDay(at) != (reason == "") || (holiday && reason == "") {
				t.Fatalf("%s at %s: business %v, reason %q, holiday %v", js, fmtT(at), c.IsBusinessDay(at), reason, holiday)
			}
			if c.IsWorkingTime(at) && !c.IsBusinessDay(at) {
				t.Fatalf("%s: working time %s on a non-business day", js, fmtT(at))
			}
		}
	}
}
