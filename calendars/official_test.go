package calendars_test

import (
	"slices"
	"testing"
	"time"

	"github.com/jetsched/jetsched/calendars"
)

// published are closing days and early closes as their owners publish
// them, for the calendars date-holidays does not have and a few years of
// those it has (a second reference): NYSE's holidays and trading hours
// page, the ECB's TARGET holidays, GOV.UK's bank holidays.
var published = []struct {
	name   string
	year   int
	closed []string // the year's holidays on weekdays
	early  []string // half days: open 09:30-13:00
}{
	{"builtin:us-nyse", 2022, []string{"01-17", "02-21", "04-15", "05-30", "06-20", "07-04", "09-05", "11-24", "12-26"}, []string{"11-25"}},
	{"builtin:us-nyse", 2024, []string{"01-01", "01-15", "02-19", "03-29", "05-27", "06-19", "07-04", "09-02", "11-28", "12-25"}, []string{"07-03", "11-29", "12-24"}},
	{"builtin:us-nyse", 2025, []string{"01-01", "01-09", "01-20", "02-17", "04-18", "05-26", "06-19", "07-04", "09-01", "11-27", "12-25"}, []string{"07-03", "11-28", "12-24"}},
	{"builtin:us-nyse", 2026, []string{"01-01", "01-19", "02-16", "04-03", "05-25", "06-19", "07-03", "09-07", "11-26", "12-25"}, []string{"11-27", "12-24"}},
	{"builtin:us-nyse", 2027, []string{"01-01", "01-18", "02-15", "03-26", "05-31", "06-18", "07-05", "09-06", "11-25", "12-24"}, []string{"11-26"}},
	{"builtin:us-nyse", 2012, []string{"01-02", "01-16", "02-20", "04-06", "05-28", "07-04", "09-03", "10-29", "10-30", "11-22", "12-25"}, []string{"07-03", "11-23", "12-24"}},
	{"builtin:target2", 2001, []string{"01-01", "04-13", "04-16", "05-01", "12-25", "12-26", "12-31"}, nil},
	{"builtin:target2", 2024, []string{"01-01", "03-29", "04-01", "05-01", "12-25", "12-26"}, nil},
	{"builtin:target2", 2026, []string{"01-01", "04-03", "04-06", "05-01", "12-25"}, nil},
	{"builtin:uk-england", 2021, []string{"01-01", "04-02", "04-05", "05-03", "05-31", "08-30", "12-27", "12-28"}, nil},
	{"builtin:uk-england", 2022, []string{"01-03", "04-15", "04-18", "05-02", "06-02", "06-03", "08-29", "09-19", "12-26", "12-27"}, nil},
	{"builtin:uk-england", 2023, []string{"01-02", "04-07", "04-10", "05-01", "05-08", "05-29", "08-28", "12-25", "12-26"}, nil},
	{"builtin:uk-scotland", 2022, []string{"01-03", "01-04", "04-15", "05-02", "06-02", "06-03", "08-01", "09-19", "11-30", "12-26", "12-27"}, nil},
}

// TestPublishedLists: each calendar closes on exactly the published
// weekdays of the year, and closes early on the published days.
func TestPublishedLists(t *testing.T) {
	for _, p := range published {
		cal, err := calendars.Parse(p.name, nil)
		if err != nil {
			t.Fatal(err)
		}
		var closed, early []string
		for d := time.Date(p.year, 1, 1, 12, 0, 0, 0, cal.Location()); d.Year() == p.year; d = d.AddDate(0, 0, 1) {
			if d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
				continue
			}
			at := func(h, m int) time.Time { return time.Date(d.Year(), d.Month(), d.Day(), h, m, 0, 0, cal.Location()) }
			switch {
			case !cal.IsBusinessDay(d):
				closed = append(closed, d.Format("01-02"))
			case p.name == "builtin:us-nyse" && cal.IsWorkingTime(at(12, 59)) && !cal.IsWorkingTime(at(13, 0)):
				early = append(early, d.Format("01-02"))
			}
		}
		if !slices.Equal(closed, p.closed) {
			t.Errorf("%s %d: closed on %v, published %v", p.name, p.year, closed, p.closed)
		}
		if !slices.Equal(early, p.early) {
			t.Errorf("%s %d: early closes %v, published %v", p.name, p.year, early, p.early)
		}
	}
}
