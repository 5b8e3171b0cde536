package calendar_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/calendar"
)

// checkTime compares a result with want ("" for an error).
func checkTime(t *testing.T, what string, got time.Time, err error, want string) {
	t.Helper()
	if want == "" {
		if err == nil {
			t.Errorf("%s = %s, want an error", what, fmtT(got))
		}
		return
	}
	if err != nil || !got.Equal(ts(t, want)) {
		t.Errorf("%s = %s, %v; want %s", what, fmtT(got), err, want)
	}
}

func TestNextWorkingStart(t *testing.T) {
	spec := mustParse(t, specExample)
	us := mustParse(t, usCalendar)
	for _, tt := range []struct {
		c        *calendar.Calendar
		from     string
		want     string
		sameAsIn bool // the result is the input itself
	}{
		{spec, "2026-01-13T08:00:00-05:00", "2026-01-13T09:00:00-05:00", false},
		{spec, "2026-01-13T10:00:00.5-05:00", "2026-01-13T10:00:00.5-05:00", true},
		{spec, "2026-01-13T12:00:00-05:00", "2026-01-13T13:00:00-05:00", false},
		{spec, "2026-01-13T12:30:00-05:00", "2026-01-13T13:00:00-05:00", false},
		{spec, "2026-01-13T17:30:00-05:00", "2026-01-14T09:00:00-05:00", false},
		{spec, "2026-01-16T18:00:00-05:00", "2026-01-17T10:00:00-05:00", false}, // Friday -> Saturday hours
		{spec, "2026-01-17T14:00:00-05:00", "2026-01-20T09:00:00-05:00", false}, // Saturday -> Tuesday (MLK day)
		{spec, "2026-04-02T18:00:00-04:00", "2026-04-04T10:00:00-04:00", false}, // over Good Friday
		{spec, "2026-12-23T18:00:00-05:00", "2027-01-02T10:00:00-05:00", false}, // over the winter break
		{spec, "2026-01-13T14:00:00Z", "2026-01-13T09:00:00-05:00", true},       // 09:00 in New York
		{us, "2026-12-24T18:00:00-05:00", "2026-12-28T09:00:00-05:00", false},   // over Christmas (a Friday)
		{us, "2026-07-02T18:00:00-04:00", "2026-07-06T09:00:00-04:00", false},   // 4 July on Saturday, observed Friday
		{us, "2021-12-30T18:00:00-05:00", "2022-01-03T09:00:00-05:00", false},   // 1 January on Saturday, observed 31 December
		{us, "2026-03-06T18:00:00-05:00", "2026-03-09T09:00:00-04:00", false},   // over the DST change
	} {
		from := ts(t, tt.from)
		got, err := tt.c.NextWorkingStart(from)
		checkTime(t, "NextWorkingStart("+tt.from+")", got, err, tt.want)
		if tt.sameAsIn && got != from {
			t.Errorf("NextWorkingStart(%s) = %s, want the input itself", tt.from, fmtT(got))
		}
		if !tt.sameAsIn && got.Location() != tt.c.Location() {
			t.Errorf("NextWorkingStart(%s) in %s", tt.from, got.Location())
		}
	}
}

// TestNoWorkingTime: searches give up after 10 years.
func TestNoWorkingTime(t *testing.T) {
	from := ts(t, "2026-01-05T10:00:00Z")
	for _, js := range []string{
		`{"zone": "UTC", "hours": {}}`,
		`{"zone": "UTC", "holidays": [{"name": "Closed", "from": "01-01", "to": "12-31", "years": [2026, 2040]}]}`,
	} {
		c := mustParse(t, js)
		if _, err := c.NextWorkingStart(from); !errors.Is(err, calendar.ErrNoWorkingTime) {
			t.Errorf("%s: NextWorkingStart: %v", js, err)
		}
		if _, err := c.AddWorkingContext(context.Background(), from, time.Hour); !errors.Is(err, calendar.ErrNoWorkingTime) {
			t.Errorf("%s: AddWorking: %v", js, err)
		}
		if _, err := c.AddWorkingDaysContext(context.Background(), from, 1); !errors.Is(err, calendar.ErrNoWorkingTime) {
			t.Errorf("%s: AddWorkingDays: %v", js, err)
		}
		if _, err := c.AddWorkingMonths(from, 1); !errors.Is(err, calendar.ErrNoWorkingTime) {
			t.Errorf("%s: AddWorkingMonths: %v", js, err)
		}
		if _, err := c.AddWorkingYears(from, 1); !errors.Is(err, calendar.ErrNoWorkingTime) {
			t.Errorf("%s: AddWorkingYears: %v", js, err)
		}
	}
	// A closure shorter than 10 years is crossed.
	c := mustParse(t, `{"zone": "UTC", "holidays": [{"name": "Closed", "from": "01-01", "to": "12-31", "years": [2026, 2030]}]}`)
	got, err := c.NextWorkingStart(from)
	checkTime(t, "NextWorkingStart over a 5-year closure", got, err, "2031-01-01T09:00:00Z")
	got, err = c.AddWorkingContext(context.Background(), from, 90*time.Minute)
	checkTime(t, "AddWorking over a 5-year closure", got, err, "2031-01-01T10:30:00Z")
	if err := func() error { _, err := mustParse(t, validCalendars[2]).NextWorkingStart(from); return err }(); err != nil {
		t.Error(err)
	}
	_, err = mustParse(t, `{"zone": "UTC", "hours": {}}`).NextWorkingStart(from)
	if err == nil || !strings.Contains(err.Error(), "after 2026-01-05T10:00:00Z") {
		t.Errorf("error text: %v", err)
	}
}

func TestAddWorking(t *testing.T) {
	spec := mustParse(t, specExample)
	us := mustParse(t, usCalendar)
	allDay := mustParse(t, `{"zone": "America/New_York", "hours": {"mon-fri": ["00:00-24:00"]}}`)
	for _, tt := range []struct {
		c    *calendar.Calendar
		from string
		d    time.Duration
		want string
	}{
		// The .NET seed: 48 working hours from Friday 17:00.
		{allDay, "2026-01-09T17:00:00-05:00", 48 * time.Hour, "2026-01-13T17:00:00-05:00"}, // Tuesday 17:00
		{us, "2026-01-09T17:00:00-05:00", 48 * time.Hour, "2026-01-19T11:00:00-05:00"},     // the following Monday 11:00
		{allDay, "2026-01-09T17:00:00-05:00", 7 * time.Hour, "2026-01-10T00:00:00-05:00"},  // Friday's end (Saturday 00:00)
		{allDay, "2026-01-09T17:00:00-05:00", 7*time.Hour + 1, "2026-01-12T00:00:00.000000001-05:00"},

		// Split days: an exact interval end is returned, not the next start.
		{spec, "2026-01-13T09:00:00-05:00", 3 * time.Hour, "2026-01-13T12:00:00-05:00"},
		{spec, "2026-01-13T09:00:00-05:00", 3*time.Hour + time.Minute, "2026-01-13T13:01:00-05:00"},
		{spec, "2026-01-13T11:00:00-05:00", 2 * time.Hour, "2026-01-13T14:00:00-05:00"},
		{spec, "2026-01-13T08:00:00-05:00", 30 * time.Minute, "2026-01-13T09:30:00-05:00"}, // starts at 09:00
		{spec, "2026-01-13T12:15:00-05:00", time.Second, "2026-01-13T13:00:01-05:00"},
		{spec, "2026-01-13T17:00:00-05:00", time.Hour, "2026-01-14T09:30:00-05:00"},
		{spec, "2026-01-16T17:00:00-05:00", time.Hour, "2026-01-17T10:30:00-05:00"},                     // Saturday hours
		{spec, "2026-01-16T17:00:00-05:00", 5 * time.Hour, "2026-01-20T09:30:00-05:00"},                 // Sat 4h, MLK day, Tuesday
		{spec, "2026-01-20T09:00:00-05:00", 41*time.Hour + 30*time.Minute, "2026-01-26T17:30:00-05:00"}, // one week's hours
		{spec, "2026-12-23T17:00:00-05:00", 2 * time.Hour, "2027-01-02T11:30:00-05:00"},                 // over the winter break
		{us, "2026-12-24T17:30:00-05:00", time.Hour, "2026-12-28T09:30:00-05:00"},
		{us, "2026-03-06T17:00:00-05:00", 2 * time.Hour, "2026-03-09T10:00:00-04:00"},
	} {
		got, err := tt.c.AddWorkingContext(context.Background(), ts(t, tt.from), tt.d)
		checkTime(t, "AddWorking("+tt.from+", "+tt.d.String()+")", got, err, tt.want)
	}
	// A year: every business day of 2026 from Monday 5 January counts 9
	// hours, ending on the last one's 18:00.
	n := 0
	for d := ts(t, "2026-01-05T12:00:00-05:00"); d.Year() == 2026; d = d.AddDate(0, 0, 1) {
		if us.IsBusinessDay(d) {
			n++
		}
	}
	if n != 256 { // 51 weeks and 4 weekdays, less Memorial Day, 3 July and 25 December
		t.Errorf("%d business days", n)
	}
	got, err := us.AddWorkingContext(context.Background(), ts(t, "2026-01-05T09:00:00-05:00"), time.Duration(n)*9*time.Hour)
	checkTime(t, "AddWorking(a year's working hours)", got, err, "2026-12-31T18:00:00-05:00")

	// d == 0 rolls only: outside working time, to the next working start.
	sunday := ts(t, "2026-01-11T03:00:00Z")
	got, err = spec.AddWorkingContext(context.Background(), sunday, 0)
	checkTime(t, "AddWorking(Saturday night, 0)", got, err, "2026-01-12T09:00:00-05:00")
	if _, err := spec.AddWorkingContext(context.Background(), sunday, math.MinInt64); !errors.Is(err, calendar.ErrOutOfRange) {
		t.Errorf("AddWorking(t, MinInt64): %v, want ErrOutOfRange", err)
	}
}

func TestAddWorkingDays(t *testing.T) {
	us := mustParse(t, usCalendar)
	allWeek := mustParse(t, `{"zone": "America/New_York", "hours": {"mon-sun": ["00:00-24:00"]}}`)
	for _, tt := range []struct {
		c    *calendar.Calendar
		from string
		n    int
		want string
	}{
		{us, "2026-01-09T17:00:00-05:00", 1, "2026-01-12T17:00:00-05:00"}, // Friday 17:00 + 1 = Monday 17:00
		{us, "2026-01-10T10:00:00-05:00", 1, "2026-01-12T10:00:00-05:00"}, // Saturday 10:00 + 1 = Monday 10:00
		{us, "2026-01-12T03:00:00-05:00", 5, "2026-01-19T03:00:00-05:00"},
		{us, "2026-12-23T10:00:00-05:00", 2, "2026-12-28T10:00:00-05:00"},       // over Christmas
		{us, "2026-05-22T09:15:30.25-04:00", 1, "2026-05-26T09:15:30.25-04:00"}, // over Memorial Day
		{us, "2026-03-06T02:30:00-05:00", 1, "2026-03-09T02:30:00-04:00"},       // over the DST change
		{us, "2021-12-30T10:00:00-05:00", 1, "2022-01-03T10:00:00-05:00"},       // 31 December observed
		{us, "2026-01-05T10:00:00Z", 1, "2026-01-06T05:00:00-05:00"},            // wall clock in New York
		{allWeek, "2026-03-07T02:30:00-05:00", 1, "2026-03-08T03:00:00-04:00"},  // 02:30 is in the gap
		{allWeek, "2026-10-31T01:30:00-04:00", 1, "2026-11-01T01:30:00-04:00"},  // the first 01:30
		{allWeek, "2026-11-01T01:30:00-05:00", 1, "2026-11-02T01:30:00-05:00"},
	} {
		got, err := tt.c.AddWorkingDaysContext(context.Background(), ts(t, tt.from), tt.n)
		checkTime(t, "AddWorkingDays("+tt.from+")", got, err, tt.want)
	}
	// n == 0 rolls only: a Saturday to Monday, a Monday stays.
	got, err := us.AddWorkingDaysContext(context.Background(), ts(t, "2026-01-10T10:00:00Z"), 0)
	checkTime(t, "AddWorkingDays(Saturday, 0)", got, err, "2026-01-12T05:00:00-05:00")
	monday := ts(t, "2026-01-12T10:00:00Z")
	if got, err := us.AddWorkingDaysContext(context.Background(), monday, 0); got != monday || err != nil {
		t.Errorf("AddWorkingDays(Monday, 0) = %v, %v", got, err)
	}
}

func TestAddWorkingMonthsYears(t *testing.T) {
	us := mustParse(t, usCalendar)
	for _, tt := range []struct {
		from   string
		months int
		years  int
		want   string
	}{
		{"2026-01-31T10:00:00-05:00", 1, 0, "2026-03-02T10:00:00-05:00"},  // 28 Feb is a Saturday
		{"2026-01-15T10:00:00-05:00", 1, 0, "2026-02-16T10:00:00-05:00"},  // 15 Feb is a Sunday
		{"2026-11-25T10:00:00-05:00", 1, 0, "2026-12-28T10:00:00-05:00"},  // Christmas, then the weekend
		{"2024-01-31T10:00:00-05:00", 1, 0, "2024-02-29T10:00:00-05:00"},  // clamped to the leap day
		{"2026-02-09T09:00:00-05:00", 1, 0, "2026-03-09T09:00:00-04:00"},  // same wall clock after DST
		{"2026-03-31T08:00:00-04:00", 11, 0, "2027-03-01T08:00:00-05:00"}, // 28 Feb 2027 is a Sunday: rolled forward
		{"2026-01-12T10:00:00-05:00", 12, 0, "2027-01-12T10:00:00-05:00"},
		{"2026-01-10T10:00:00-05:00", 0, 0, "2026-01-12T10:00:00-05:00"}, // n == 0 on a Saturday: rolled
		{"2024-02-29T10:00:00-05:00", 0, 1, "2025-02-28T10:00:00-05:00"},
		{"2024-02-29T10:00:00-05:00", 0, 4, "2028-02-29T10:00:00-05:00"},
		{"2025-07-04T10:00:00-04:00", 0, 1, "2026-07-06T10:00:00-04:00"}, // Saturday; Friday observed; Monday
		{"2026-01-01T10:00:00-05:00", 0, 1, "2027-01-04T10:00:00-05:00"},
		{"2026-01-12T10:00:00-05:00", 0, 100, "2126-01-14T10:00:00-05:00"}, // 12 Jan 2126 is a Saturday
	} {
		from := ts(t, tt.from)
		var got time.Time
		var err error
		what := "AddWorkingMonths"
		if tt.years != 0 {
			what = "AddWorkingYears"
			got, err = us.AddWorkingYears(from, tt.years)
			if viaMonths, err2 := us.AddWorkingMonths(from, 12*tt.years); !viaMonths.Equal(got) || err2 != nil {
				t.Errorf("AddWorkingYears(%s, %d) = %s but AddWorkingMonths gives %s", tt.from, tt.years, fmtT(got), fmtT(viaMonths))
			}
		} else {
			got, err = us.AddWorkingMonths(from, tt.months)
		}
		checkTime(t, what+"("+tt.from+")", got, err, tt.want)
	}
	from := ts(t, "2026-01-12T10:00:00-05:00") // a Monday
	if got, err := us.AddWorkingMonths(from, 0); got != from || err != nil {
		t.Errorf("AddWorkingMonths(business day, 0) = %v, %v", got, err)
	}
	for _, n := range []int{-(1 << 40), 1 << 40} {
		if _, err := us.AddWorkingMonths(from, n); err == nil {
			t.Errorf("AddWorkingMonths(t, %d): no error", n)
		}
		if _, err := us.AddWorkingYears(from, n); err == nil {
			t.Errorf("AddWorkingYears(t, %d): no error", n)
		}
	}
}
