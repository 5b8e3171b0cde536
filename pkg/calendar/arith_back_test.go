package calendar_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/calendar"
)

// TestSubtractWorking: negative working time counts backwards, mirroring
// the forward count at interval ends and on DST days.
func TestSubtractWorking(t *testing.T) {
	spec := mustParse(t, specExample) // 09:00-12:00, 13:00-17:30 Mon-Fri, Sat 10:00-14:00
	nineToSix := mustParse(t, `{"zone": "America/New_York", "weekend": ["sat", "sun"]}`)
	full := mustParse(t, `{"zone": "America/New_York", "hours": {"mon-sun": ["00:00-24:00"]}}`)
	london := mustParse(t, `{"zone": "Europe/London", "hours": {"mon-sun": ["00:30-02:30"]}}`)
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		c    *calendar.Calendar
		from string
		d    time.Duration
		want string
	}{
		{"inside an interval", spec, "2026-01-13T11:00:00-05:00", -time.Hour, "2026-01-13T10:00:00-05:00"},
		{"ends on an interval's start: that start", spec, "2026-01-13T11:00:00-05:00", -2 * time.Hour, "2026-01-13T09:00:00-05:00"},
		{"one nanosecond more: the previous day's end", spec, "2026-01-13T11:00:00-05:00", -2*time.Hour - 1, "2026-01-12T17:29:59.999999999-05:00"},
		{"from an interval's end: that interval counts", spec, "2026-01-13T17:30:00-05:00", -30 * time.Minute, "2026-01-13T17:00:00-05:00"},
		{"from an interval's start: it does not", spec, "2026-01-13T13:00:00-05:00", -30 * time.Minute, "2026-01-13T11:30:00-05:00"},
		{"over lunch", spec, "2026-01-13T13:30:00-05:00", -time.Hour, "2026-01-13T11:30:00-05:00"},
		{"from the night: the day's end", spec, "2026-01-13T22:00:00-05:00", -time.Hour, "2026-01-13T16:30:00-05:00"},
		{"Monday morning back over Saturday", spec, "2026-01-12T09:30:00-05:00", -time.Hour, "2026-01-10T13:30:00-05:00"},
		{"over the winter break", spec, "2027-01-02T10:00:00-05:00", -time.Hour, "2026-12-23T16:30:00-05:00"},
		{"48 working hours before Monday 11:00", nineToSix, "2026-01-19T11:00:00-05:00", -48 * time.Hour, "2026-01-09T17:00:00-05:00"},
		{"spring forward: 23 hours", full, "2026-03-09T00:00:00-04:00", -23 * time.Hour, "2026-03-08T00:00:00-05:00"},
		{"fall back: 25 hours", full, "2026-11-02T00:00:00-05:00", -25 * time.Hour, "2026-11-01T00:00:00-04:00"},
		{"fall back: the second 01:30", full, "2026-11-01T02:00:00-05:00", -30 * time.Minute, "2026-11-01T01:30:00-05:00"},
		{"fall back: the first 01:30", full, "2026-11-01T02:00:00-05:00", -90 * time.Minute, "2026-11-01T01:30:00-04:00"},
		{"an interval end in the gap", london, "2026-03-29T02:00:00+01:00", -30 * time.Minute, "2026-03-29T00:30:00Z"},
		{"over New Year", nineToSix, "2027-01-04T09:00:00-05:00", -2 * 9 * time.Hour, "2026-12-31T09:00:00-05:00"},
	} {
		got, err := tt.c.AddWorkingContext(ctx, ts(t, tt.from), tt.d)
		checkTime(t, tt.name, got, err, tt.want)
		// The walk (the explanation) agrees, and the count back is -d.
		walked, _, err := tt.c.AddWorkingExplainContext(ctx, ts(t, tt.from), tt.d)
		if err != nil || !walked.Equal(got) {
			t.Errorf("%s: explained %s, %v; plain %s", tt.name, fmtT(walked), err, fmtT(got))
		}
		if n, err := tt.c.WorkingTimeBetween(ctx, ts(t, tt.from), got); err != nil || n != tt.d {
			t.Errorf("%s: WorkingTimeBetween(from, result) = %v, %v; want %v", tt.name, n, err, tt.d)
		}
	}
}

func TestSubtractWorkingDaysMonths(t *testing.T) {
	us := mustParse(t, usCalendar)
	ctx := context.Background()
	for _, tt := range []struct {
		from string
		n    int
		want string
	}{
		{"2026-01-12T10:00:00-05:00", -1, "2026-01-09T10:00:00-05:00"},   // Monday - 1 = Friday
		{"2026-01-11T10:00:00-05:00", -1, "2026-01-09T10:00:00-05:00"},   // Sunday - 1 = Friday
		{"2026-01-09T10:00:00-05:00", -1, "2026-01-08T10:00:00-05:00"},   // Friday - 1 = Thursday
		{"2026-12-28T10:00:00-05:00", -2, "2026-12-23T10:00:00-05:00"},   // over Christmas
		{"2026-03-09T02:30:00-04:00", -1, "2026-03-06T02:30:00-05:00"},   // over the DST change
		{"2022-01-03T10:00:00-05:00", -1, "2021-12-30T10:00:00-05:00"},   // 31 December observed
		{"2026-01-05T10:00:00-05:00", -257, "2025-01-03T10:00:00-05:00"}, // 2025 has 257 working days
		{"2026-01-05T10:00:00-05:00", -260, "2024-12-30T10:00:00-05:00"},
	} {
		got, err := us.AddWorkingDaysContext(ctx, ts(t, tt.from), tt.n)
		checkTime(t, "AddWorkingDays("+tt.from+")", got, err, tt.want)
		walked, _, err := us.AddWorkingDaysExplainContext(ctx, ts(t, tt.from), tt.n)
		if err != nil || !walked.Equal(got) {
			t.Errorf("AddWorkingDays(%s, %d): explained %s, %v; plain %s", tt.from, tt.n, fmtT(walked), err, fmtT(got))
		}
		if n, err := us.WorkingDaysBetween(ctx, ts(t, tt.from), got); err != nil || n != tt.n {
			t.Errorf("WorkingDaysBetween(%s, %s) = %d, %v; want %d", tt.from, fmtT(got), n, err, tt.n)
		}
	}
	for _, tt := range []struct {
		from          string
		months, years int
		want          string
	}{
		{"2026-03-31T10:00:00-04:00", -1, 0, "2026-02-27T10:00:00-05:00"}, // 28 Feb is a Saturday: rolled back to Friday
		{"2026-03-15T10:00:00-04:00", -1, 0, "2026-02-13T10:00:00-05:00"}, // 15 Feb is a Sunday
		{"2027-01-25T10:00:00-05:00", -1, 0, "2026-12-24T10:00:00-05:00"}, // Christmas (Friday): the Thursday
		{"2024-03-31T10:00:00-04:00", -1, 0, "2024-02-29T10:00:00-05:00"}, // clamped to the leap day
		{"2028-02-29T10:00:00-05:00", 0, -1, "2027-02-26T10:00:00-05:00"}, // 28 Feb 2027 is a Sunday
		{"2026-01-12T10:00:00-05:00", -24, 0, "2024-01-12T10:00:00-05:00"},
	} {
		var got time.Time
		var err error
		if tt.years != 0 {
			got, err = us.AddWorkingYears(ts(t, tt.from), tt.years)
		} else {
			got, err = us.AddWorkingMonths(ts(t, tt.from), tt.months)
		}
		checkTime(t, "AddWorkingMonths/Years("+tt.from+")", got, err, tt.want)
	}
	if _, err := us.AddWorkingYears(ts(t, "2026-01-12T10:00:00-05:00"), -2026); !errors.Is(err, calendar.ErrOutOfRange) {
		t.Errorf("AddWorkingYears(2026, -2026): %v, want ErrOutOfRange", err)
	}
}

// TestRollOnly: a zero step rolls only, forward.
func TestRollOnly(t *testing.T) {
	spec := mustParse(t, specExample)
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		from string
		want string
		f    func(time.Time) (time.Time, error)
	}{
		{"0 whours in working time", "2026-01-13T10:00:00-05:00", "2026-01-13T10:00:00-05:00",
			func(t time.Time) (time.Time, error) { return spec.AddWorkingContext(ctx, t, 0) }},
		{"0 whours at lunch", "2026-01-13T12:15:00-05:00", "2026-01-13T13:00:00-05:00",
			func(t time.Time) (time.Time, error) { return spec.AddWorkingContext(ctx, t, 0) }},
		{"0 whours at an interval's end", "2026-01-13T17:30:00-05:00", "2026-01-14T09:00:00-05:00",
			func(t time.Time) (time.Time, error) { return spec.AddWorkingContext(ctx, t, 0) }},
		{"0 wdays on a working day, after hours", "2026-01-13T22:00:00-05:00", "2026-01-13T22:00:00-05:00",
			func(t time.Time) (time.Time, error) { return spec.AddWorkingDaysContext(ctx, t, 0) }},
		{"0 wdays on a holiday", "2026-01-19T08:00:00-05:00", "2026-01-20T08:00:00-05:00", // MLK day
			func(t time.Time) (time.Time, error) { return spec.AddWorkingDaysContext(ctx, t, 0) }},
		{"0 wmonths on a Sunday", "2026-01-18T08:00:00-05:00", "2026-01-20T08:00:00-05:00",
			func(t time.Time) (time.Time, error) { return spec.AddWorkingMonths(t, 0) }},
	} {
		got, err := tt.f(ts(t, tt.from))
		checkTime(t, tt.name, got, err, tt.want)
	}
}

func TestCountBetween(t *testing.T) {
	us := mustParse(t, usCalendar)
	full := mustParse(t, `{"zone": "America/New_York", "hours": {"mon-sun": ["00:00-24:00"]}}`)
	ctx := context.Background()
	for _, tt := range []struct {
		name     string
		c        *calendar.Calendar
		a, b     string
		days     int
		workTime time.Duration
	}{
		{"a week", us, "2026-01-12T00:00:00-05:00", "2026-01-19T00:00:00-05:00", 5, 45 * time.Hour},
		{"half-open: b's date does not count", us, "2026-01-12T10:00:00-05:00", "2026-01-13T10:00:00-05:00", 1, 9 * time.Hour},
		{"the same day", us, "2026-01-12T10:00:00-05:00", "2026-01-12T12:30:00-05:00", 0, 150 * time.Minute},
		{"backwards: negative", us, "2026-01-19T00:00:00-05:00", "2026-01-12T00:00:00-05:00", -5, -45 * time.Hour},
		{"from a Saturday", us, "2026-01-10T10:00:00-05:00", "2026-01-13T10:00:00-05:00", 1, 10 * time.Hour},
		{"over Christmas", us, "2026-12-21T00:00:00-05:00", "2027-01-04T00:00:00-05:00", 8, 72 * time.Hour},
		{"a year", us, "2026-01-01T00:00:00-05:00", "2027-01-01T00:00:00-05:00", 257, 257 * 9 * time.Hour},
		{"spring forward", full, "2026-03-08T00:00:00-05:00", "2026-03-09T00:00:00-04:00", 1, 23 * time.Hour},
		{"fall back", full, "2026-11-01T00:00:00-04:00", "2026-11-02T00:00:00-05:00", 1, 25 * time.Hour},
		{"a leap year of days", full, "2024-01-01T00:00:00-05:00", "2025-01-01T00:00:00-05:00", 366, 366 * 24 * time.Hour},
		{"an instant in another zone", us, "2026-01-12T14:00:00Z", "2026-01-12T23:00:00Z", 0, 9 * time.Hour},
	} {
		a, b := ts(t, tt.a), ts(t, tt.b)
		days, err := tt.c.WorkingDaysBetween(ctx, a, b)
		if err != nil || days != tt.days {
			t.Errorf("%s: WorkingDaysBetween = %d, %v; want %d", tt.name, days, err, tt.days)
		}
		wt, err := tt.c.WorkingTimeBetween(ctx, a, b)
		if err != nil || wt != tt.workTime {
			t.Errorf("%s: WorkingTimeBetween = %v, %v; want %v", tt.name, wt, err, tt.workTime)
		}
	}
	long, err := full.WorkingTimeBetween(ctx, ts(t, "1800-01-01T00:00:00Z"), ts(t, "2200-01-01T00:00:00Z"))
	if !errors.Is(err, calendar.ErrOutOfRange) {
		t.Errorf("400 years of working time: %v, %v; want ErrOutOfRange", long, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := us.WorkingDaysBetween(cancelled, ts(t, "2026-01-01T00:00:00Z"), ts(t, "2027-01-01T00:00:00Z")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
