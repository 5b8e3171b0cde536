package calendar_test

import (
	"testing"

	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
)

var _ cronx.Schedule = calendar.BusinessDay{}

func TestBusinessDay(t *testing.T) {
	us := mustParse(t, usCalendar)
	spec := mustParse(t, specExample)
	for _, tt := range []struct {
		name  string
		b     calendar.BusinessDay
		after string
		want  []string
	}{
		{"2nd at 10:00", calendar.BusinessDay{Calendar: us, N: 2, Hour: 10}, "2026-07-15T00:00:00-04:00", []string{
			"2026-08-04T10:00:00-04:00", // 1 August is a Saturday: Monday 3rd, Tuesday 4th
			"2026-09-02T10:00:00-04:00",
			"2026-10-02T10:00:00-04:00",
			"2026-11-03T10:00:00-05:00", // after the DST change
			"2026-12-02T10:00:00-05:00",
			"2027-01-05T10:00:00-05:00", // 1 January is a holiday: Monday 4th, Tuesday 5th
		}},
		{"1st", calendar.BusinessDay{Calendar: us, N: 1, Hour: 8, Minute: 30, Second: 15}, "2021-12-01T00:00:00-05:00", []string{
			"2021-12-01T08:30:15-05:00",
			"2022-01-03T08:30:15-05:00", // 1 January 2022 (Saturday) observed 31 Dec; Monday 3rd
		}},
		{"2nd, at the fire", calendar.BusinessDay{Calendar: us, N: 2, Hour: 10}, "2026-08-04T10:00:00-04:00", []string{"2026-09-02T10:00:00-04:00"}},
		{"2nd, just before", calendar.BusinessDay{Calendar: us, N: 2, Hour: 10}, "2026-08-04T09:59:59.999-04:00", []string{"2026-08-04T10:00:00-04:00"}},
		{"last", calendar.BusinessDay{Calendar: us, N: -1, Hour: 17}, "2026-05-01T00:00:00-04:00", []string{
			"2026-05-29T17:00:00-04:00", // 30 and 31 May are a weekend
			"2026-06-30T17:00:00-04:00",
			"2026-07-31T17:00:00-04:00",
		}},
		{"last, winter break", calendar.BusinessDay{Calendar: spec, N: -1, Hour: 17}, "2026-12-01T00:00:00-05:00", []string{
			"2026-12-23T17:00:00-05:00", // the break starts on the 24th
			"2027-01-30T17:00:00-05:00", // a Saturday with working hours
		}},
		{"second to last", calendar.BusinessDay{Calendar: us, N: -2, Hour: 17}, "2026-05-01T00:00:00-04:00", []string{
			"2026-05-28T17:00:00-04:00",
			"2026-06-29T17:00:00-04:00",
		}},
		{"second to last, winter break", calendar.BusinessDay{Calendar: spec, N: -2, Hour: 17}, "2026-12-01T00:00:00-05:00", []string{"2026-12-22T17:00:00-05:00"}},
		// The 23rd: only months with 23 business days (none in 2026:
		// December has 23 weekdays but Christmas).
		{"23rd", calendar.BusinessDay{Calendar: us, N: 23, Hour: 9}, "2026-01-01T00:00:00-05:00", []string{
			"2027-03-31T09:00:00-04:00", "2028-03-31T09:00:00-04:00",
		}},
	} {
		got := fires(tt.b, ts(t, tt.after), len(tt.want))
		if len(got) != len(tt.want) {
			t.Errorf("%s: fires %v, want %v", tt.name, got, tt.want)
			continue
		}
		for i := range got {
			if !got[i].Equal(ts(t, tt.want[i])) {
				t.Errorf("%s: fire %d = %s, want %s", tt.name, i, fmtT(got[i]), tt.want[i])
			}
		}
	}
	after := ts(t, "2026-01-01T00:00:00Z")
	for name, b := range map[string]calendar.BusinessDay{
		"nil calendar": {N: 1},
		"N 0":          {Calendar: us},
		"hour 24":      {Calendar: us, N: 1, Hour: 24},
		"minute -1":    {Calendar: us, N: 1, Minute: -1},
		"second 60":    {Calendar: us, N: 1, Second: 60},
		"N 24":         {Calendar: us, N: 24},
		"closed":       {Calendar: mustParse(t, `{"zone": "UTC", "hours": {}}`), N: 1},
	} {
		if got := b.Next(after); !got.IsZero() {
			t.Errorf("%s: fires at %s", name, fmtT(got))
		}
	}
}

// TestBusinessDayGapAndZone: the time of day is wall clock in the
// calendar's zone; one in a DST gap fires when the gap ends.
func TestBusinessDayGapAndZone(t *testing.T) {
	c := mustParse(t, `{"zone": "America/New_York", "hours": {"sun": ["09:00-17:00"]}}`)
	b := calendar.BusinessDay{Calendar: c, N: 2, Hour: 2, Minute: 30} // 2nd Sunday of March 2026 is the 8th
	got := b.Next(ts(t, "2026-03-01T12:00:00Z"))
	if want := ts(t, "2026-03-08T03:00:00-04:00"); !got.Equal(want) {
		t.Errorf("Next = %s, want %s", fmtT(got), fmtT(want))
	}
	if got.Location() != c.Location() {
		t.Errorf("Next in %s", got.Location())
	}
}
