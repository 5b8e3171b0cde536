package cronx_test

import (
	"fmt"
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

func ExampleNewCron() {
	loc, err := cronx.LoadZone("America/New_York")
	if err != nil {
		panic(err)
	}
	c, err := cronx.NewCron("0 9 * * MON-FRI", cronx.Options{Location: loc})
	if err != nil {
		panic(err)
	}
	// Friday 2024-03-08, 10:00 in New York; summer time starts on Sunday.
	t := time.Date(2024, 3, 8, 15, 0, 0, 0, time.UTC)
	for i := 0; i < 3; i++ {
		t = c.Next(t)
		fmt.Println(t.Format(time.RFC1123Z))
	}
	// Output:
	// Mon, 11 Mar 2024 09:00:00 -0400
	// Tue, 12 Mar 2024 09:00:00 -0400
	// Wed, 13 Mar 2024 09:00:00 -0400
}

func ExampleNewCron_seconds() {
	// Six fields: the seconds come first.
	c, err := cronx.NewCron("30 */20 * * * *", cronx.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Next(time.Date(2024, 1, 1, 0, 0, 31, 0, time.UTC)))
	// Output:
	// 2024-01-01 00:20:30 +0000 UTC
}

func ExampleNewCron_error() {
	_, err := cronx.NewCron("0 0 30 2 *", cronx.Options{})
	fmt.Println(err)
	_, err = cronx.NewCron("0 25 * * *", cronx.Options{})
	fmt.Println(err)
	// Output:
	// cronx: cron "0 0 30 2 *": never fires: no date from 1970 to 2199 matches
	// cronx: cron field 2 (hour) "25": value 25 out of range 0-23
}

func ExampleInterval() {
	every, err := cronx.ParseEvery("1h30m")
	if err != nil {
		panic(err)
	}
	iv := cronx.Interval{Every: every} // in phase with the Unix epoch
	fmt.Println(iv)
	t := time.Date(2024, 1, 1, 0, 10, 0, 0, time.UTC)
	for i := 0; i < 3; i++ {
		t = iv.Next(t)
		fmt.Println(t.Format(time.RFC3339))
	}
	// Output:
	// every 1h30m
	// 2024-01-01T01:30:00Z
	// 2024-01-01T03:00:00Z
	// 2024-01-01T04:30:00Z
}

func ExampleOnce() {
	o := cronx.Once{At: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
	fmt.Println(o)
	fmt.Println(o.Next(time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)))
	fmt.Println(o.Next(o.At).IsZero())
	// Output:
	// once at 2024-05-01T12:00:00Z
	// 2024-05-01 12:00:00 +0000 UTC
	// true
}

// A schedule in a DST zone chooses what happens on the spring-forward
// night, when 02:30 does not exist.
func ExampleNewCron_dstPolicy() {
	ny, _ := time.LoadLocation("America/New_York")
	after := time.Date(2026, 3, 7, 12, 0, 0, 0, ny)
	for _, gap := range []cronx.GapPolicy{cronx.GapNatural, cronx.GapSkip, cronx.GapShift} {
		c, _ := cronx.NewCron("30 2 * * *", cronx.Options{Location: ny, Gap: gap})
		next, why := c.NextExplained(after)
		if why.Kind == "" {
			fmt.Println(gap, next.Format(time.RFC3339))
			continue
		}
		fmt.Println(gap, next.Format(time.RFC3339), why)
	}
	// Output:
	// natural 2026-03-08T03:00:00-04:00 moved: 02:30 does not exist on 2026-03-08 (DST gap); fires when the gap ends
	// skip 2026-03-09T02:30:00-04:00
	// shift 2026-03-08T03:30:00-04:00 shifted: 02:30 does not exist on 2026-03-08 (DST gap); fires one gap later
}

// Quartz expressions and the extensions L, W and # parse too.
func ExampleParse() {
	for _, e := range []struct {
		expr string
		opts cronx.Options
	}{
		{"0 0 12 ? * 6#3", cronx.Options{Dialect: cronx.Quartz}}, // third Friday, noon
		{"0 18 LW * *", cronx.Options{}},                         // last weekday, 18:00
		{"@every 90m", cronx.Options{}},
	} {
		s, _ := cronx.Parse(e.expr, e.opts)
		fmt.Println(s.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)).Format(time.RFC3339))
	}
	// Output:
	// 2026-01-16T12:00:00Z
	// 2026-01-30T18:00:00Z
	// 2026-01-01T01:30:00Z
}

// The day-of-month/day-of-week rule is a choice: "*/10" starts with '*', so
// Linux cron (cronie, the default) ANDs it with Sunday, while robfig/cron
// and croniter (posix) OR the two restricted fields.
func ExampleNewCron_domDow() {
	after := time.Date(2026, 2, 28, 0, 0, 0, 0, time.UTC)
	for _, rule := range []cronx.DomDow{cronx.DomDowCronie, cronx.DomDowPOSIX, cronx.DomDowAnd} {
		c, _ := cronx.NewCron("0 0 */10 * SUN", cronx.Options{DomDow: rule})
		t := after
		fmt.Print(rule)
		for range 3 {
			t = c.Next(t)
			fmt.Print(" ", t.Format("2006-01-02"))
		}
		fmt.Println()
	}
	// Output:
	// cronie 2026-03-01 2026-05-31 2026-06-21
	// posix 2026-03-01 2026-03-08 2026-03-11
	// and 2026-03-01 2026-05-31 2026-06-21
}
