package cronx_test

import (
	"errors"
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

// FuzzParseCron checks that NewCron never panics, that every error is a
// well-formed *ParseError, and that an accepted expression re-parses from
// its String() to a Cron with the same fire times.
func FuzzParseCron(f *testing.F) {
	for _, seed := range []string{
		"* * * * *", "*/15 * * * *", "0 9 * * MON-FRI", "30 */2 * * * *",
		"0 0 * * 5-7", "0 0 * * fri-sun", "0 0 13 * 5", "0 0 29 2 *",
		"0 0 30 2 *", "@daily", "@every 5s", "0 0 L * *", "0 0 * * 5#3",
		"H * * * *", "1-2-3 * * * *", "*/0 * * * *", "? * * * *", "0 0 ? * *",
		"1,,2 * * * *", "0 0 0 31 2 ?", "  1   2 3 4 5 ", "99999 * * * *",
		"0 0-23/25 * * *", "0/30 * * * * *", "7/2 * * * 7/2", "*,5 * * * *",
		"0 0 LW * *", "0 0 L-3 * *", "0 0 15W * *", "0 0 * * 5L", "H(0-29)/10 * * * *",
		"0 0 12 1 1 * 2030-2199/7", "CRON_TZ=Asia/Tokyo 0 9 * * *", "0 0 12 ? * 6#3",
		"0 0 * * friday", "0 0 1 January *", "0 0 * * MONDAY-friday", "0 0 * * FRI-MON",
		"0 0 * * 7-4", "0 0 1 NOV-FEB *", "0 22-2/2 * * *", "50-10/5 * * * *", "0 0 25-5 * *",
		"0 0 29-L * *", "0 0 1-L/8 * *", "0 0 W15 * *", "0 0 L-2W * *", "0 0 2W,16 * *",
		"0 0 L-1W,L-1 * *", "0 0 0 1 1 * 2025,*", "0 0 1,* * MON", "@everyminute", "@always",
		"@5minutes", "@10minutes", "@15minutes", "@30minutes", "@everysecond", "0 0 */10 * SUN",
		"0 0 * * 5,6#3", "0 0 * * SAT,SUN,L", "0 0 12 ? * SAT,SUN,L", "0 0 0 1 1 * 2031-2030",
	} {
		f.Add(seed)
	}
	ny, err := cronx.LoadZone("America/New_York")
	if err != nil {
		f.Fatal(err)
	}
	instants := []time.Time{
		time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 3, 10, 6, 30, 0, 0, time.UTC),  // New York spring forward
		time.Date(2024, 11, 3, 5, 30, 0, 0, time.UTC),  // New York fall back
		time.Date(2048, 12, 31, 12, 0, 0, 5, time.UTC), // leap-year end, rule-based zone
	}
	variants := []cronx.Options{
		{Location: time.UTC},
		{Location: ny, Gap: cronx.GapShift, Overlap: cronx.OverlapTwice, DomDow: cronx.DomDowPOSIX},
		{Location: ny, Dialect: cronx.Quartz, Key: "fuzz", Overlap: cronx.OverlapOnce},
		{Location: ny, DomDow: cronx.DomDowAnd, Overlap: cronx.OverlapOnce},
	}
	f.Fuzz(func(t *testing.T, expr string) {
		for _, opts := range variants {
			c, err := cronx.NewCron(expr, opts)
			if err != nil {
				var pe *cronx.ParseError
				if !errors.As(err, &pe) || pe.Field == "" || pe.Reason == "" {
					t.Fatalf("NewCron(%q): malformed error %#v", expr, err)
				}
				return
			}
			again, err := cronx.NewCron(c.String(), opts)
			if err != nil {
				t.Fatalf("NewCron(%q) ok but its String() %q fails: %v", expr, c.String(), err)
			}
			if again.String() != c.String() {
				t.Fatalf("String() not stable: %q then %q", c.String(), again.String())
			}
			for _, after := range instants {
				next := c.Next(after)
				if !next.IsZero() && (!next.After(after) || next.Location() != c.Location()) {
					t.Fatalf("%q: Next(%v) = %v", expr, after, next)
				}
				if other := again.Next(after); !other.Equal(next) {
					t.Fatalf("%q: Next(%v) = %v but re-parsed %q gives %v", expr, after, next, c.String(), other)
				}
			}
		}
	})
}
