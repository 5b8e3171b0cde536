package cronx_test

import (
	"testing"
	"time"

	"github.com/hashicorp/cronexpr"
	"github.com/robfig/cron/v3"

	"github.com/jetsched/jetsched/pkg/cronx"
)

// benchExprs are read in America/New_York by all three libraries.
var benchExprs = []string{
	"* * * * *",
	"*/15 9-17 * * 1-5",
	"0 0 1 1 *",
	"0 0 29 2 *",
	"30 2 * * *",
}

// BenchmarkNext walks each schedule forward, one Next per iteration, from
// 2024-01-01 (restarting there when a library returns the zero time).
// Compare with benchstat, e.g. BenchmarkNext/cronx/... against
// BenchmarkNext/cronexpr/... and BenchmarkNext/robfig/....
func BenchmarkNext(b *testing.B) {
	ny, err := cronx.LoadZone("America/New_York")
	if err != nil {
		b.Fatal(err)
	}
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	libs := []struct {
		name  string
		parse func(expr string) (func(time.Time) time.Time, error)
	}{
		{"cronx", func(expr string) (func(time.Time) time.Time, error) {
			c, err := cronx.NewCron(expr, cronx.Options{Location: ny})
			if err != nil {
				return nil, err
			}
			return c.Next, nil
		}},
		{"cronexpr", func(expr string) (func(time.Time) time.Time, error) {
			e, err := cronexpr.Parse("0 " + expr + " *")
			if err != nil {
				return nil, err
			}
			return func(after time.Time) time.Time { return e.Next(after.In(ny)) }, nil
		}},
		{"robfig", func(expr string) (func(time.Time) time.Time, error) {
			s, err := cron.ParseStandard("CRON_TZ=America/New_York " + expr)
			if err != nil {
				return nil, err
			}
			return s.Next, nil
		}},
	}
	for _, lib := range libs {
		b.Run(lib.name, func(b *testing.B) {
			for _, expr := range benchExprs {
				b.Run(expr, func(b *testing.B) {
					next, err := lib.parse(expr)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportAllocs()
					after := start
					for b.Loop() {
						t := next(after)
						if t.IsZero() {
							t = start
						}
						after = t
					}
				})
			}
		})
	}
}

// BenchmarkIntervals walks an interval forward, one Next per iteration:
// a 1d Interval (elapsed time) against the DayInterval it becomes with a
// zone (wall clock), and the cron of the same daily time.
func BenchmarkIntervals(b *testing.B) {
	paris, err := cronx.LoadZone("Europe/Paris")
	if err != nil {
		b.Fatal(err)
	}
	anchor := time.Date(2026, 3, 2, 9, 0, 0, 0, paris)
	days, err := cronx.DaysFrom(24*time.Hour, anchor, paris)
	if err != nil {
		b.Fatal(err)
	}
	daily, err := cronx.NewCron("0 9 * * *", cronx.Options{Location: paris})
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range []struct {
		name string
		s    cronx.Schedule
	}{{"Interval", cronx.Interval{Every: 24 * time.Hour, Anchor: anchor}}, {"DayInterval", days}, {"Cron", daily}} {
		b.Run(s.name, func(b *testing.B) {
			at := anchor
			for b.Loop() {
				if at = s.s.Next(at); at.IsZero() || at.Year() > 2200 {
					at = anchor
				}
			}
		})
	}
}
