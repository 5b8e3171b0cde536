package calendar

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestZoneCycleMatchesLookups: the offset changes zoneYears reuses from
// 400 years before are those looking them up gives, in every test zone,
// through year 3300.
func TestZoneCycleMatchesLookups(t *testing.T) {
	t.Parallel()
	for _, zone := range arithZones {
		c := parseT(t, `{"zone": "`+zone+`"}`)
		z := &zoneYears{c: c}
		m := newMeter(t.Context(), "test", 1<<30)
		reused := 0
		for y := 2020; y <= 3300; y++ {
			first, end := daysOf(y, time.January, 1), daysOf(y+1, time.January, 1)
			reuse := z.ruled != 0 && y-400 >= z.ruled
			got, err := z.irregular(m, y, first, end, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, _, _ := c.irregularDays(first, end, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("%s %d: reused %v, looked up %v", zone, y, got, want)
			}
			if reuse {
				reused++
			}
		}
		// A zone whose offset still changes in 3000 follows a rule by then.
		if far, _, _ := c.irregularDays(daysOf(3000, time.January, 1), daysOf(3001, time.January, 1), nil); len(far) > 0 && reused == 0 {
			t.Errorf("%s: no year reused", zone)
		}
	}
}

// TestAddWorkingOverCenturiesIsExact: on a calendar open all weekend
// (Saturday and Sunday, 00:00-24:00, 47 or 49 hours when the clocks
// change), 2,500,000 working hours (about a thousand years, past the point
// where offset changes are reused from 400 years before) end where
// counting weekend by weekend with time.Date says.
func TestAddWorkingOverCenturiesIsExact(t *testing.T) {
	t.Parallel()
	for _, zone := range []string{"America/New_York", "Europe/Dublin", "Australia/Lord_Howe"} {
		c := parseT(t, `{"zone": "`+zone+`", "hours": {"sat-sun": ["00:00-24:00"]}}`)
		from := time.Date(2026, 1, 3, 0, 0, 0, 0, c.loc) // a Saturday
		d := 2_500_000*time.Hour + 90*time.Minute
		got, err := c.AddWorkingContext(context.Background(), from, d)
		if err != nil {
			t.Fatal(err)
		}
		rem, want := d, time.Time{}
		for sat := from; ; sat = time.Date(sat.Year(), sat.Month(), sat.Day()+7, 0, 0, 0, 0, c.loc) {
			mon := time.Date(sat.Year(), sat.Month(), sat.Day()+2, 0, 0, 0, 0, c.loc)
			if weekend := mon.Sub(sat); rem > weekend {
				rem -= weekend
				continue
			}
			want = sat.Add(rem)
			break
		}
		if !got.Equal(want) {
			t.Fatalf("%s: %v of weekend time from %s: %s, want %s", zone, d, from, got, want)
		}
	}
}
