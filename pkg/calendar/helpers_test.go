package calendar_test

import (
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/testtime"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
)

// specExample is the calendar of the documented JSON example.
const specExample = `{
  "zone": "America/New_York",
  "hours": { "mon-fri": ["09:00-12:00", "13:00-17:30"], "sat": ["10:00-14:00"] },
  "holidays": [
    {"name": "New Year's Day", "date": "01-01", "observed": "nearest"},
    {"name": "Martin Luther King Jr. Day", "month": 1, "weekday": "mon", "nth": 3},
    {"name": "Memorial Day", "month": 5, "weekday": "mon", "nth": -1},
    {"name": "Winter break", "from": "12-24", "to": "01-01"},
    {"name": "Good Friday", "easter": -2},
    {"name": "Easter Monday", "easter": 1},
    {"name": "Company days", "dates": ["2026-12-28", "2027-01-04"]}
  ]
}`

// usCalendar has a weekend (Saturday and Sunday), so it works 09:00-18:00
// Monday to Friday, in New York with a few US holidays.
const usCalendar = `{
  "zone": "America/New_York",
  "weekend": ["sat", "sun"],
  "holidays": [
    {"name": "New Year's Day", "date": "01-01", "observed": "nearest"},
    {"name": "Memorial Day", "month": 5, "weekday": "mon", "nth": -1},
    {"name": "Independence Day", "date": "07-04", "observed": "nearest"},
    {"name": "Christmas Day", "date": "12-25", "observed": "nearest"}
  ]
}`

// usHolidays is usCalendar's holidays alone: every other day, weekends
// included, is a business day; working time is Monday to Friday,
// 09:00-18:00 by default.
const usHolidays = `{
  "zone": "America/New_York",
  "holidays": [
    {"name": "New Year's Day", "date": "01-01", "observed": "nearest"},
    {"name": "Memorial Day", "month": 5, "weekday": "mon", "nth": -1},
    {"name": "Independence Day", "date": "07-04", "observed": "nearest"},
    {"name": "Christmas Day", "date": "12-25", "observed": "nearest"}
  ]
}`

// mustParse parses a calendar or fails the test.
func mustParse(t testing.TB, js string) *calendar.Calendar {
	t.Helper()
	c, err := calendar.Parse([]byte(js))
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, js)
	}
	return c
}

// mustZone loads an IANA zone or fails the test.
func mustZone(t testing.TB, name string) *time.Location { return testtime.Zone(t, name) }

// ts parses an RFC 3339 instant (with its offset) or fails the test.
func ts(t testing.TB, s string) time.Time { return testtime.Instant(t, s) }

// local reads "2006-01-02 15:04:05" (seconds optional) in loc.
func local(t testing.TB, loc *time.Location, s string) time.Time {
	t.Helper()
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if v, err := time.ParseInLocation(layout, s, loc); err == nil {
			return v
		}
	}
	t.Fatalf("bad local time %q", s)
	return time.Time{}
}

// fmtT formats an instant for messages and comparisons.
func fmtT(t time.Time) string {
	if t.IsZero() {
		return "zero"
	}
	return t.Format("2006-01-02T15:04:05.999999999Z07:00 Mon")
}

// mustCron parses a cron expression in loc or fails the test.
func mustCron(t testing.TB, expr string, loc *time.Location) *cronx.Cron {
	t.Helper()
	c, err := cronx.NewCron(expr, cronx.Options{Location: loc})
	if err != nil {
		t.Fatalf("ParseCron(%q): %v", expr, err)
	}
	return c
}
