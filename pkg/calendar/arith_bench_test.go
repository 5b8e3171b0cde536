package calendar

import (
	"context"
	"errors"
	"testing"
	"time"
)

// BenchmarkAddWorkingMinuteAWeek is `wakeup add --when "876000 whours"`
// (the most a form accepts) against a calendar open one minute a week
// with holidays, Easter's among them: it sums every year to 9999 and
// answers ErrOutOfRange. The walk it replaced went through about 2.6
// million days a second of daemon time; this one passes years. It keeps
// no state between calls (each computes every year's facts anew).
func BenchmarkAddWorkingMinuteAWeek(b *testing.B) {
	c := parseT(b, sparseCalendar)
	from := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	b.Run("876000h", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.AddWorkingContext(context.Background(), from, 876000*time.Hour); !errors.Is(err, ErrOutOfRange) {
				b.Fatal(err)
			}
		}
	})
	b.Run("6000h", func(b *testing.B) { // about 7,000 years: reached in year 8945
		for b.Loop() {
			if _, err := c.AddWorkingContext(context.Background(), from, 6000*time.Hour); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAddWorkingDaysDayAYear is `--when "36525 wdays"` against a
// calendar with one working day a year: ErrOutOfRange after summing every
// year to 9999.
func BenchmarkAddWorkingDaysDayAYear(b *testing.B) {
	c := parseT(b, `{"zone": "Europe/London", "hours": {"mon-sun": ["09:00-17:00"]}, "holidays": [{"name": "Closed", "from": "01-02", "to": "12-31"}]}`)
	from := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		if _, err := c.AddWorkingDaysContext(context.Background(), from, 36525); !errors.Is(err, ErrOutOfRange) {
			b.Fatal(err)
		}
	}
}
