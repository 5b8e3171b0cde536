package calendar

import (
	"context"
	"errors"
	"testing"
	"time"
)

// derivingCalendar is open one minute a week and has cascading
// substitutes, a bridge day, an equinox and a half day: every year's
// holidays are derived from its neighbours'.
const derivingCalendar = `{"zone": "Asia/Tokyo", "hours": {"wed": ["09:00-09:01"]}, "holidays": [
	{"name": "A", "date": "05-03", "substitute": "next_free_weekday", "substitute_on": ["sun"]},
	{"name": "B", "date": "05-04", "substitute": "next_free_weekday", "substitute_on": ["sun"]},
	{"name": "C", "date": "05-05", "substitute": "next_free_weekday"},
	{"name": "D", "month": 9, "weekday": "mon", "nth": 3},
	{"name": "E", "equinox": "september", "substitute": "next_free_weekday"},
	{"name": "F", "between_holidays": true},
	{"name": "G", "weekday": "wed", "before": "11-23", "hours": ["09:00-09:00:30"]}
]}`

// BenchmarkAddWorkingDerived is BenchmarkAddWorkingMinuteAWeek's
// 876000 hours against derivingCalendar, on a new calendar each time: the
// cost of deriving every year's substitutes and bridge days to 9999.
func BenchmarkAddWorkingDerived(b *testing.B) {
	from := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		c := parseT(b, derivingCalendar)
		if _, err := c.AddWorkingContext(context.Background(), from, 876000*time.Hour); !errors.Is(err, ErrOutOfRange) {
			b.Fatal(err)
		}
	}
}
