package wakeups_test

import (
	"fmt"
	"time"

	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/calendar"
)

// Each form registered on Friday 2026-01-09 at 17:00 in New York, with
// the default calendar (Monday to Friday, 09:00-18:00).
func ExampleParseWhen() {
	cal, err := calendar.Parse([]byte(`{"zone": "America/New_York"}`))
	if err != nil {
		panic(err)
	}
	loc := cal.Location()
	now := time.Date(2026, 1, 9, 17, 0, 0, 0, loc)
	for _, text := range []string{
		"3600000",
		"1 d 3 h",
		"90m",
		"02:00",
		"18:30",
		"2026-12-31",
		"2026-12-31 23:59",
		"2026-12-31T23:59:00Z",
		"48 whours",
		"3 wdays",
		"1 wmonth",
	} {
		f, err := wakeups.ParseWhen(text)
		if err != nil {
			panic(err)
		}
		due, err := f.Due(now, loc, cal)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-22s %-11s %-20s %s\n", text, f.Kind, f.String(), due.Format("Mon 2006-01-02 15:04 MST"))
	}
	// Output:
	// 3600000                interval    1h                   Fri 2026-01-09 23:00 UTC
	// 1 d 3 h                interval    1d3h                 Sun 2026-01-11 01:00 UTC
	// 90m                    interval    1h30m                Fri 2026-01-09 23:30 UTC
	// 02:00                  time_of_day 02:00                Sat 2026-01-10 02:00 EST
	// 18:30                  time_of_day 18:30                Fri 2026-01-09 18:30 EST
	// 2026-12-31             date        2026-12-31           Thu 2026-12-31 00:00 EST
	// 2026-12-31 23:59       datetime    2026-12-31 23:59     Thu 2026-12-31 23:59 EST
	// 2026-12-31T23:59:00Z   instant     2026-12-31T23:59:00Z Thu 2026-12-31 23:59 UTC
	// 48 whours              working     48 whours            Mon 2026-01-19 11:00 EST
	// 3 wdays                working     3 wdays              Wed 2026-01-14 17:00 EST
	// 1 wmonth               working     1 wmonth             Mon 2026-02-09 17:00 EST
}

// A time of day in a DST gap is due when the gap ends; intervals are
// elapsed time.
func ExampleForm_Due() {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 3, 7, 12, 0, 0, 0, ny) // the day before the clocks spring forward
	for _, text := range []string{"02:30", "24h", "2026-03-08 02:30"} {
		f, err := wakeups.ParseWhen(text)
		if err != nil {
			panic(err)
		}
		due, err := f.Due(now, ny, nil)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: %s\n", text, due.In(ny).Format("2006-01-02 15:04 MST"))
	}
	_, err = wakeups.ParseWhen("1 x")
	fmt.Println(err)
	f, _ := wakeups.ParseWhen("48 whours")
	_, err = f.Due(now, ny, nil)
	fmt.Println(err)
	f, _ = wakeups.ParseWhen("2026-01-01")
	_, err = f.Due(now, ny, nil)
	fmt.Println(err)
	// Output:
	// 02:30: 2026-03-08 03:00 EDT
	// 24h: 2026-03-08 13:00 EDT
	// 2026-03-08 02:30: 2026-03-08 03:00 EDT
	// wakeup: when "1 x": unknown unit "x" (want d, h, m, s, ms or days, hours, minutes, seconds; whours, wdays, wmonths, wyears)
	// wakeup: when "48 whours": working time needs a calendar
	// wakeup: when "2026-01-01": is in the past (2026-01-01T00:00:00-05:00, now 2026-03-07T12:00:00-05:00)
}
