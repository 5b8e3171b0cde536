package calendar_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/calendar"
)

// ruleCalendar is a calendar in Europe/Berlin with default hours and one
// holiday rule named "H".
func ruleCalendar(t testing.TB, ruleJSON string) *calendar.Calendar {
	t.Helper()
	return mustParse(t, `{"zone": "Europe/Berlin", "holidays": [{"name": "H", `+ruleJSON+`}]}`)
}

// TestHolidayRules checks every rule kind and observed mode across years.
// want is "" (no holiday), "actual" or "observed".
func TestHolidayRules(t *testing.T) {
	tests := []struct {
		rule string
		day  string
		want string
	}{
		// Fixed dates; 29 February only in leap years.
		{`"date": "12-25"`, "2026-12-25", "actual"},
		{`"date": "12-25"`, "2026-12-24", ""},
		{`"date": "12-25"`, "2027-12-25", "actual"}, // a Saturday, no observed mode
		{`"date": "12-25"`, "2027-12-24", ""},
		{`"date": "02-29"`, "2024-02-29", "actual"},
		{`"date": "02-29"`, "2025-02-28", ""},
		{`"date": "02-29"`, "2025-03-01", ""},
		{`"date": "02-29"`, "2028-02-29", "actual"},
		{`"date": "02-29"`, "2100-02-28", ""}, // 2100 is not a leap year
		{`"date": "02-29"`, "2100-03-01", ""},
		{`"date": "02-29", "observed": "nearest"`, "2032-02-29", "actual"}, // a Sunday
		{`"date": "02-29", "observed": "nearest"`, "2032-03-01", "observed"},

		// observed "nearest": Saturday -> Friday before, Sunday -> Monday after,
		// across the new year (1 January 2022 is a Saturday).
		{`"date": "01-01", "observed": "nearest"`, "2022-01-01", "actual"},
		{`"date": "01-01", "observed": "nearest"`, "2021-12-31", "observed"},
		{`"date": "01-01", "observed": "nearest"`, "2022-01-03", ""},
		{`"date": "01-01", "observed": "nearest"`, "2023-01-01", "actual"}, // a Sunday
		{`"date": "01-01", "observed": "nearest"`, "2023-01-02", "observed"},
		{`"date": "01-01", "observed": "nearest"`, "2022-12-30", ""},
		{`"date": "01-01", "observed": "nearest"`, "2026-01-01", "actual"}, // a Thursday
		{`"date": "01-01", "observed": "nearest"`, "2026-01-02", ""},
		{`"date": "01-01", "observed": "nearest"`, "2025-12-31", ""},
		{`"date": "07-04", "observed": "nearest"`, "2026-07-03", "observed"}, // 4 July 2026 is a Saturday
		{`"date": "07-04", "observed": "nearest"`, "2027-07-05", "observed"}, // a Sunday
		{`"date": "12-31", "observed": "nearest"`, "2028-01-01", ""},
		{`"date": "12-31", "observed": "nearest"`, "2028-12-31", "actual"},   // a Sunday: observed Monday 2029-01-01,
		{`"date": "12-31", "observed": "nearest"`, "2029-01-01", "observed"}, // in the next year
		{`"date": "12-31", "observed": "nearest"`, "2028-12-29", ""},
		{`"date": "12-31", "observed": "nearest", "years": [2029, 2030]`, "2029-01-01", ""}, // rule year 2028 is excluded

		// observed "monday": Saturday or Sunday -> the following Monday.
		{`"date": "01-01", "observed": "monday"`, "2022-01-03", "observed"},
		{`"date": "01-01", "observed": "monday"`, "2021-12-31", ""},
		{`"date": "01-01", "observed": "monday"`, "2023-01-02", "observed"},
		{`"date": "12-25", "observed": "monday"`, "2027-12-27", "observed"},

		// observed "sunday_to_monday": only Sunday moves.
		{`"date": "01-01", "observed": "sunday_to_monday"`, "2021-12-31", ""},
		{`"date": "01-01", "observed": "sunday_to_monday"`, "2022-01-03", ""},
		{`"date": "01-01", "observed": "sunday_to_monday"`, "2023-01-02", "observed"},
		{`"date": "01-01", "observed": ""`, "2023-01-02", ""},

		// n-th and last weekdays.
		{`"month": 1, "weekday": "mon", "nth": 3`, "2024-01-15", "actual"},
		{`"month": 1, "weekday": "mon", "nth": 3`, "2025-01-20", "actual"},
		{`"month": 1, "weekday": "mon", "nth": 3`, "2026-01-19", "actual"},
		{`"month": 1, "weekday": "mon", "nth": 3`, "2026-01-12", ""},
		{`"month": 5, "weekday": "mon", "nth": -1`, "2024-05-27", "actual"},
		{`"month": 5, "weekday": "mon", "nth": -1`, "2025-05-26", "actual"},
		{`"month": 5, "weekday": "mon", "nth": -1`, "2026-05-25", "actual"},
		{`"month": 5, "weekday": "mon", "nth": -2`, "2026-05-18", "actual"},
		{`"month": 5, "weekday": "mon", "nth": -2`, "2026-05-25", ""},
		{`"month": 11, "weekday": "thu", "nth": 4`, "2026-11-26", "actual"},
		{`"month": 3, "weekday": "mon", "nth": 5`, "2026-03-30", "actual"},
		{`"month": 2, "weekday": "mon", "nth": 5`, "2026-02-23", ""}, // no fifth Monday
		{`"month": 2, "weekday": "sun", "nth": 5`, "2032-02-29", "actual"},
		{`"month": 6, "weekday": "sat", "nth": 1, "observed": "nearest"`, "2026-06-06", "actual"},
		{`"month": 6, "weekday": "sat", "nth": 1, "observed": "nearest"`, "2026-06-05", "observed"},

		// Ranges, including one that wraps the year.
		{`"from": "12-24", "to": "01-01"`, "2025-12-23", ""},
		{`"from": "12-24", "to": "01-01"`, "2025-12-24", "actual"},
		{`"from": "12-24", "to": "01-01"`, "2025-12-31", "actual"},
		{`"from": "12-24", "to": "01-01"`, "2026-01-01", "actual"},
		{`"from": "12-24", "to": "01-01"`, "2026-01-02", ""},
		{`"from": "12-24", "to": "01-01", "years": [2025, 2025]`, "2026-01-01", "actual"}, // started in 2025
		{`"from": "12-24", "to": "01-01", "years": [2025, 2025]`, "2025-01-01", ""},       // started in 2024
		{`"from": "12-24", "to": "01-01", "years": [2025, 2025]`, "2026-12-24", ""},
		{`"from": "08-01", "to": "08-15"`, "2026-08-10", "actual"},
		{`"from": "08-01", "to": "08-15"`, "2026-08-16", ""},
		{`"from": "02-29", "to": "02-29"`, "2024-02-29", "actual"},
		{`"from": "02-29", "to": "02-29"`, "2025-02-28", ""},
		{`"from": "02-29", "to": "02-29"`, "2025-03-01", ""},

		// Easter offsets (Easter Sunday: 2024-03-31, 2025-04-20, 2026-04-05).
		{`"easter": -2`, "2024-03-29", "actual"},
		{`"easter": -2`, "2025-04-18", "actual"},
		{`"easter": -2`, "2026-04-03", "actual"},
		{`"easter": 1`, "2026-04-06", "actual"},
		{`"easter": 1`, "2026-04-05", ""},
		{`"easter": 0`, "2026-04-05", "actual"},
		{`"easter": 39`, "2026-05-14", "actual"}, // Ascension Day
		{`"easter": 0, "observed": "sunday_to_monday"`, "2026-04-06", "observed"},
		{`"easter": -300`, "2025-06-09", "actual"}, // 300 days before Easter 2026

		// Explicit dates.
		{`"dates": ["2026-12-28", "2027-01-04"]`, "2026-12-28", "actual"},
		{`"dates": ["2026-12-28", "2027-01-04"]`, "2027-01-04", "actual"},
		{`"dates": ["2026-12-28", "2027-01-04"]`, "2027-12-28", ""},
		{`"dates": ["2026-12-28", "2027-01-04"], "years": [2027, 2027]`, "2026-12-28", ""},
		{`"dates": ["2026-12-28", "2027-01-04"], "years": [2027, 2027]`, "2027-01-04", "actual"},

		// Year limits.
		{`"date": "06-19", "years": [2021, 2030]`, "2020-06-19", ""},
		{`"date": "06-19", "years": [2021, 2030]`, "2021-06-19", "actual"},
		{`"date": "06-19", "years": [2021, 2030]`, "2030-06-19", "actual"},
		{`"date": "06-19", "years": [2021, 2030]`, "2031-06-19", ""},
		{`"date": "01-01", "observed": "nearest", "years": [2022, 2022]`, "2021-12-31", "observed"}, // rule year 2022
		{`"easter": 1, "years": [2025, 2025]`, "2026-04-06", ""},
	}
	berlin := mustZone(t, "Europe/Berlin")
	for _, tt := range tests {
		c := ruleCalendar(t, tt.rule)
		// Any instant of the date counts: check its first and last second.
		for _, at := range []string{tt.day + " 00:00:00", tt.day + " 23:59:59"} {
			h, ok := c.Holiday(local(t, berlin, at))
			got := ""
			if ok {
				got = "actual"
				if h.Observed {
					got = "observed"
				}
			}
			if got != tt.want {
				t.Errorf("{%s} on %s: got %q, want %q (%+v)", tt.rule, at, got, tt.want, h)
			}
			if ok && (h.Name != "H" || !h.Date.Equal(local(t, berlin, tt.day)) || h.Date.Location().String() != berlin.String()) {
				t.Errorf("{%s} on %s: %+v", tt.rule, at, h)
			}
		}
	}
}

// TestHolidayUsesCalendarZone: the date is read in the calendar's zone,
// whatever the instant's location.
func TestHolidayUsesCalendarZone(t *testing.T) {
	c := mustParse(t, usCalendar) // New York
	// 2026-12-25 03:00 UTC is still 24 December in New York.
	if _, ok := c.Holiday(ts(t, "2026-12-25T03:00:00Z")); ok {
		t.Error("2026-12-25T03:00Z is 24 December in New York")
	}
	if h, ok := c.Holiday(ts(t, "2026-12-25T05:00:00Z")); !ok || h.Name != "Christmas Day" {
		t.Errorf("2026-12-25T05:00Z: %+v %v", h, ok)
	}
}

// TestHolidayPrecedence: an actual date wins over another rule's observed
// shift, then the first rule wins.
func TestHolidayPrecedence(t *testing.T) {
	c := mustParse(t, `{"zone": "UTC", "holidays": [
		{"name": "Christmas Day", "date": "12-25", "observed": "nearest"},
		{"name": "Christmas Eve", "date": "12-24"},
		{"name": "Also Christmas", "date": "12-25"}
	]}`)
	for _, tt := range []struct{ day, name, rule string }{
		{"2027-12-24", "Christmas Eve", "fixed 12-24"}, // also Christmas observed
		{"2027-12-25", "Christmas Day", "fixed 12-25, observed nearest"},
		{"2026-12-25", "Christmas Day", "fixed 12-25, observed nearest"},
	} {
		h, ok := c.Holiday(local(t, time.UTC, tt.day))
		if !ok || h.Name != tt.name || h.Rule != tt.rule || h.Observed {
			t.Errorf("%s: %+v %v", tt.day, h, ok)
		}
	}
}

// TestRuleDescriptions checks Holiday.Rule texts.
func TestRuleDescriptions(t *testing.T) {
	for _, tt := range []struct{ rule, day, want string }{
		{`"date": "12-25"`, "2026-12-25", "fixed 12-25"},
		{`"date": "01-01", "observed": "monday", "years": [2020, 2030]`, "2026-01-01", "fixed 01-01, observed monday, 2020 to 2030"},
		{`"date": "01-01", "years": [2026, 2026]`, "2026-01-01", "fixed 01-01, in 2026"},
		{`"month": 1, "weekday": "mon", "nth": 3`, "2026-01-19", "3rd Monday of January"},
		{`"month": 9, "weekday": "mon", "nth": 1`, "2026-09-07", "1st Monday of September"},
		{`"month": 5, "weekday": "mon", "nth": -1`, "2026-05-25", "last Monday of May"},
		{`"month": 5, "weekday": "mon", "nth": -2`, "2026-05-18", "2nd to last Monday of May"},
		{`"from": "12-24", "to": "01-01"`, "2026-12-30", "from 12-24 to 01-01"},
		{`"easter": -2`, "2026-04-03", "Easter Sunday -2 days"},
		{`"easter": 1`, "2026-04-06", "Easter Sunday +1 day"},
		{`"easter": 0`, "2026-04-05", "Easter Sunday"},
		{`"dates": ["2027-01-04", "2026-12-28"]`, "2026-12-28", "2 dates from 2026-12-28 to 2027-01-04"},
		{`"dates": ["2026-12-28"]`, "2026-12-28", "date 2026-12-28"},
	} {
		c := ruleCalendar(t, tt.rule)
		h, ok := c.Holiday(local(t, c.Location(), tt.day))
		if !ok || h.Rule != tt.want {
			t.Errorf("{%s}: Rule = %q (%v), want %q", tt.rule, h.Rule, ok, tt.want)
		}
	}
}

// TestNonWorkingReason checks the texts.
func TestNonWorkingReason(t *testing.T) {
	c := mustParse(t, usCalendar)
	ny := c.Location()
	for _, tt := range []struct{ at, want string }{
		{"2026-12-25 10:00", `holiday "Christmas Day" (fixed 12-25, observed nearest)`},
		{"2027-12-24 10:00", `holiday "Christmas Day" (fixed 12-25, observed nearest), observed for Saturday 2027-12-25`},
		{"2027-12-25 10:00", `holiday "Christmas Day" (fixed 12-25, observed nearest)`}, // a holiday on a Saturday: the holiday is named
		{"2026-05-25 10:00", `holiday "Memorial Day" (last Monday of May)`},
		{"2026-01-10 10:00", "no working hours on Saturday"},
		{"2026-01-11 23:59", "no working hours on Sunday"},
		{"2026-01-12 03:00", ""}, // a business day, outside working hours
		{"2026-01-12 10:00", ""},
	} {
		at := local(t, ny, tt.at)
		if got := c.NonWorkingReason(at); got != tt.want {
			t.Errorf("NonWorkingReason(%s) = %q, want %q", tt.at, got, tt.want)
		}
		if got := c.IsBusinessDay(at); got != (tt.want == "") {
			t.Errorf("IsBusinessDay(%s) = %v", tt.at, got)
		}
	}
}

// TestHolidayCacheConcurrent queries many years from many goroutines (run
// with -race).
func TestHolidayCacheConcurrent(t *testing.T) {
	c := mustParse(t, specExample)
	want := make(map[int]bool)
	for y := 1990; y < 2100; y++ {
		_, want[y] = c.Holiday(time.Date(y, 4, 1, 12, 0, 0, 0, c.Location()))
	}
	fresh := mustParse(t, specExample)
	done := make(chan error)
	for g := range 8 {
		go func() {
			for i := range 110 {
				y := 1990 + (i*7+g*13)%110
				if _, ok := fresh.Holiday(time.Date(y, 4, 1, 12, 0, 0, 0, c.Location())); ok != want[y] {
					done <- fmt.Errorf("year %d: %v, want %v", y, ok, want[y])
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
