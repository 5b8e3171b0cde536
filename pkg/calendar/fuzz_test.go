package calendar_test

import (
	"errors"
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/calendar"
)

// FuzzParse checks that Parse never panics, that every error is a
// well-formed *Error, and that an accepted calendar's MarshalJSON parses
// again to a calendar with the same canonical form, fingerprint and
// answers.
func FuzzParse(f *testing.F) {
	for _, js := range validCalendars {
		f.Add([]byte(js))
	}
	for _, js := range propertyCalendars {
		f.Add([]byte(js))
	}
	for _, js := range extendedCalendars {
		f.Add([]byte(js))
	}
	for _, js := range []string{
		`{"zone": "UTC", "hours": {"mon-fri": ["09:00-12:00", "11:00-13:00"]}}`,
		`{"zone": "UTC", "holidays": [{"name": "X", "month": 1, "weekday": "mnday", "nth": 3}]}`,
		`{"zone": "UTC", "holidays": [{"name": "X", "date": "01-01", "easter": 1}]}`,
		`{"zone": "UTC", "Zone": "UTC"}`, `{"zone": "UTC", "zone": "UTC"}`, `{`, `null`, `[]`, `""`,
		`{"zone": "UTC", "hours": {"mon": ["24:00-24:00"]}}`,
		`{"zone": "UTC", "holidays": [{"name": "X", "dates": ["2026-02-29"]}]}`,
	} {
		f.Add([]byte(js))
	}
	instants := []time.Time{
		time.Date(2021, 12, 31, 15, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 8, 7, 30, 0, 0, time.UTC),
		time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC),
		time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC),
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := calendar.Parse(data)
		if err != nil {
			var ce *calendar.Error
			if !errors.As(err, &ce) || ce.Reason == "" || err.Error() == "" {
				t.Fatalf("Parse(%q): malformed error %#v", data, err)
			}
			return
		}
		canon, err := c.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		again, err := calendar.Parse(canon)
		if err != nil {
			t.Fatalf("Parse(%q) ok but its canonical form %s fails: %v", data, canon, err)
		}
		canon2, _ := again.MarshalJSON()
		if string(canon2) != string(canon) || again.Fingerprint() != c.Fingerprint() {
			t.Fatalf("canonical form not stable:\n%s\n%s", canon, canon2)
		}
		for _, at := range instants {
			h1, ok1 := c.Holiday(at)
			h2, ok2 := again.Holiday(at)
			if ok1 != ok2 || h1.Name != h2.Name || h1.Rule != h2.Rule || h1.Observed != h2.Observed ||
				c.IsWorkingTime(at) != again.IsWorkingTime(at) || c.NonWorkingReason(at) != again.NonWorkingReason(at) ||
				c.IsBusinessDay(at) != again.IsBusinessDay(at) || c.IsWorkingDay(at) != again.IsWorkingDay(at) {
				t.Fatalf("answers differ at %s for %s", at, canon)
			}
		}
	})
}
