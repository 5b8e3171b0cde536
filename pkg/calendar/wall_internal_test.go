package calendar

import (
	"context"
	"testing"
	"time"
)

// TestLeapYearEndIsWorkingTime: 31 December of a leap year past the
// zone's listed transitions (2092) is working time like any other day (Go
// reports a zone period there that ends before the instant asked about).
func TestLeapYearEndIsWorkingTime(t *testing.T) {
	t.Parallel()
	for _, zone := range []string{"America/New_York", "Europe/Dublin", "Australia/Lord_Howe", "UTC"} {
		c, err := Parse([]byte(`{"zone": "` + zone + `", "hours": {"mon-sun": ["00:00-24:00"]}}`))
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range []time.Time{
			time.Date(2092, 12, 31, 12, 0, 0, 0, c.loc),
			time.Date(2092, 12, 30, 23, 30, 0, 0, c.loc),
			time.Date(2096, 12, 31, 0, 30, 0, 0, c.loc),
		} {
			if !c.IsWorkingTime(at) {
				t.Errorf("%s: %s is not working time on a 24-hour calendar", zone, at)
			}
		}
		got, err := c.AddWorkingContext(context.Background(), time.Date(2092, 12, 31, 0, 0, 0, 0, c.loc), time.Hour)
		if want := time.Date(2092, 12, 31, 1, 0, 0, 0, c.loc); err != nil || !got.Equal(want) {
			t.Errorf("%s: an hour from 31 December 2092: %v, %v, want %v", zone, got, err, want)
		}
	}
}
