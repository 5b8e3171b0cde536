package calendar_test

import (
	"context"
	"testing"
	"time"
)

// TestIsWorkingTimeBoundaries: start inclusive, end exclusive, on a split
// day, a Saturday and a holiday.
func TestIsWorkingTimeBoundaries(t *testing.T) {
	c := mustParse(t, specExample)
	ny := c.Location()
	for _, tt := range []struct {
		at   string
		want bool
	}{
		{"2026-01-13 08:59:59.999999999", false}, // Tuesday
		{"2026-01-13 09:00", true},
		{"2026-01-13 11:59:59.999999999", true},
		{"2026-01-13 12:00", false},
		{"2026-01-13 12:30", false},
		{"2026-01-13 13:00", true},
		{"2026-01-13 17:29:59", true},
		{"2026-01-13 17:30", false},
		{"2026-01-13 23:59:59", false},
		{"2026-01-17 09:59:59", false}, // Saturday 10:00-14:00
		{"2026-01-17 10:00", true},
		{"2026-01-17 13:59:59", true},
		{"2026-01-17 14:00", false},
		{"2026-01-18 12:00", false}, // Sunday
		{"2026-01-19 10:00", false}, // Martin Luther King Jr. Day
		{"2026-04-03 10:00", false}, // Good Friday
		{"2026-12-31 10:00", false}, // Winter break
		{"2021-12-31 10:00", false}, // New Year's Day 2022, observed
	} {
		at, err := time.ParseInLocation("2006-01-02 15:04:05.999999999", tt.at, ny)
		if err != nil {
			at = local(t, ny, tt.at)
		}
		if got := c.IsWorkingTime(at); got != tt.want {
			t.Errorf("IsWorkingTime(%s) = %v, want %v", tt.at, got, tt.want)
		}
		// The same instant seen from another zone gives the same answer.
		if got := c.IsWorkingTime(at.UTC()); got != tt.want {
			t.Errorf("IsWorkingTime(%s in UTC) = %v, want %v", tt.at, got, tt.want)
		}
	}
}

// TestWorkingHoursDST: hours are wall clock in the zone on the days New
// York changes its clocks (2026-03-08: 02:00 EST -> 03:00 EDT; 2026-11-01:
// 02:00 EDT -> 01:00 EST, both Sundays); working time is elapsed time.
func TestWorkingHoursDST(t *testing.T) {
	type add struct {
		from string
		d    time.Duration
		want string
	}
	tests := []struct {
		hours   string
		working map[string]bool // instants (RFC 3339) -> IsWorkingTime
		start   map[string]string
		adds    []add
	}{
		{
			hours: `{"mon-sun": ["00:00-24:00"]}`,
			working: map[string]bool{
				"2026-03-08T01:59:59-05:00": true, "2026-03-08T03:00:00-04:00": true,
				"2026-11-01T01:30:00-04:00": true, "2026-11-01T01:30:00-05:00": true,
			},
			adds: []add{
				{"2026-03-08T00:00:00-05:00", 23 * time.Hour, "2026-03-09T00:00:00-04:00"}, // a 23-hour day
				{"2026-03-08T00:00:00-05:00", 24 * time.Hour, "2026-03-09T01:00:00-04:00"},
				{"2026-03-08T01:30:00-05:00", time.Hour, "2026-03-08T03:30:00-04:00"},
				{"2026-11-01T00:00:00-04:00", 25 * time.Hour, "2026-11-02T00:00:00-05:00"}, // a 25-hour day
				{"2026-11-01T00:00:00-04:00", 24 * time.Hour, "2026-11-01T23:00:00-05:00"},
				{"2026-11-01T01:30:00-04:00", time.Hour, "2026-11-01T01:30:00-05:00"},
			},
		},
		{
			// 01:00-03:00 is one elapsed hour in March and three in November.
			hours: `{"sun": ["01:00-03:00"]}`,
			working: map[string]bool{
				"2026-03-08T00:59:59-05:00": false, "2026-03-08T01:00:00-05:00": true,
				"2026-03-08T01:59:59-05:00": true, "2026-03-08T03:00:00-04:00": false,
				"2026-11-01T01:00:00-04:00": true, "2026-11-01T01:59:59-04:00": true,
				"2026-11-01T01:00:00-05:00": true, "2026-11-01T02:59:59-05:00": true,
				"2026-11-01T03:00:00-05:00": false,
			},
			start: map[string]string{
				"2026-03-07T12:00:00-05:00": "2026-03-08T01:00:00-05:00",
				"2026-03-08T03:00:00-04:00": "2026-03-15T01:00:00-04:00",
			},
			adds: []add{
				{"2026-03-08T01:00:00-05:00", time.Hour, "2026-03-08T03:00:00-04:00"}, // the interval's end
				{"2026-03-08T01:00:00-05:00", 90 * time.Minute, "2026-03-15T01:30:00-04:00"},
				{"2026-11-01T01:00:00-04:00", 3 * time.Hour, "2026-11-01T03:00:00-05:00"},
				{"2026-11-01T01:00:00-04:00", 150 * time.Minute, "2026-11-01T02:30:00-05:00"},
				{"2026-10-31T12:00:00-04:00", 4 * time.Hour, "2026-11-08T02:00:00-05:00"},
			},
		},
		{
			// An interval starting in the gap starts when the gap ends.
			hours: `{"sun": ["02:30-05:00"]}`,
			working: map[string]bool{
				"2026-03-08T01:59:59-05:00": false, "2026-03-08T03:00:00-04:00": true,
				"2026-03-08T04:59:59-04:00": true, "2026-03-08T05:00:00-04:00": false,
			},
			start: map[string]string{"2026-03-08T00:00:00-05:00": "2026-03-08T03:00:00-04:00"},
			adds:  []add{{"2026-03-08T00:00:00-05:00", 2 * time.Hour, "2026-03-08T05:00:00-04:00"}},
		},
		{
			// A wall-clock interval inside the repeated hour happens twice.
			hours: `{"sun": ["01:30-01:45"]}`,
			working: map[string]bool{
				"2026-11-01T01:30:00-04:00": true, "2026-11-01T01:50:00-04:00": false,
				"2026-11-01T01:00:00-05:00": false, "2026-11-01T01:40:00-05:00": true,
			},
			start: map[string]string{"2026-11-01T01:50:00-04:00": "2026-11-01T01:30:00-05:00"},
			adds:  []add{{"2026-11-01T01:30:00-04:00", 20 * time.Minute, "2026-11-01T01:35:00-05:00"}},
		},
	}
	for _, tt := range tests {
		c := mustParse(t, `{"zone": "America/New_York", "hours": `+tt.hours+`}`)
		for at, want := range tt.working {
			if got := c.IsWorkingTime(ts(t, at)); got != want {
				t.Errorf("%s: IsWorkingTime(%s) = %v, want %v", tt.hours, at, got, want)
			}
		}
		for from, want := range tt.start {
			got, err := c.NextWorkingStart(ts(t, from))
			if err != nil || !got.Equal(ts(t, want)) {
				t.Errorf("%s: NextWorkingStart(%s) = %s, %v; want %s", tt.hours, from, fmtT(got), err, want)
			}
		}
		for _, a := range tt.adds {
			got, err := c.AddWorkingContext(context.Background(), ts(t, a.from), a.d)
			if err != nil || !got.Equal(ts(t, a.want)) {
				t.Errorf("%s: AddWorking(%s, %v) = %s, %v; want %s", tt.hours, a.from, a.d, fmtT(got), err, a.want)
			}
		}
	}
}

// TestTwentyFourHourDaysInZones: in a calendar working around the clock,
// one day of working time from a midnight ends at the next midnight, in
// zones with 1-hour, 30-minute and 2-hour shifts and changes at midnight.
func TestTwentyFourHourDaysInZones(t *testing.T) {
	for _, zone := range []string{"America/New_York", "Europe/London", "Australia/Lord_Howe", "Antarctica/Troll", "America/Santiago", "America/Havana", "Asia/Kolkata"} {
		c := mustParse(t, `{"zone": "`+zone+`", "hours": {"mon-sun": ["00:00-24:00"]}}`)
		loc := c.Location()
		for d := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() == 2026; d = d.AddDate(0, 0, 1) {
			y, m, day := d.Date()
			start, err := c.NextWorkingStart(dayStart(y, m, day, loc))
			if err != nil || !c.IsWorkingTime(start) {
				t.Fatalf("%s %s: NextWorkingStart = %s, %v", zone, d.Format(time.DateOnly), fmtT(start), err)
			}
			next, _ := c.NextWorkingStart(dayStart(y, m, day+1, loc))
			if start.Day() != day || next.Day() == day {
				t.Fatalf("%s %s: day starts %s, next %s", zone, d.Format(time.DateOnly), fmtT(start), fmtT(next))
			}
			got, err := c.AddWorkingContext(context.Background(), start, next.Sub(start))
			if err != nil || !got.Equal(next) {
				t.Errorf("%s %s: AddWorking(%s, %v) = %s, want %s", zone, d.Format(time.DateOnly), fmtT(start), next.Sub(start), fmtT(got), fmtT(next))
			}
		}
	}
}

// dayStart is the first instant of a date in loc, also when a DST gap
// swallows midnight (time.Date may then return the day before).
func dayStart(y int, m time.Month, d int, loc *time.Location) time.Time {
	t := time.Date(y, m, d, 0, 0, 0, 0, loc)
	if _, _, day := t.Date(); day != time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Day() {
		_, end := t.ZoneBounds()
		return end
	}
	return t
}
