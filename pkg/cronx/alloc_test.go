package cronx_test

import (
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

// TestNextDoesNotAllocate: Next runs for every fire of every schedule.
func TestNextDoesNotAllocate(t *testing.T) {
	loc := mustZone(t, "America/New_York")
	for _, expr := range []string{"*/15 9-17 * * 1-5", "30 2 * * *", "0 0 L * *", "0 0 * * 5#3"} {
		c, err := cronx.ParseCron(expr, loc)
		if err != nil {
			t.Fatal(err)
		}
		after := time.Date(2026, 3, 7, 12, 0, 0, 0, loc)
		if n := testing.AllocsPerRun(200, func() { after = c.Next(after) }); n != 0 {
			t.Errorf("%q: %v allocations per Next", expr, n)
		}
	}
}
