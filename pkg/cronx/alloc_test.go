package cronx_test

import (
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

// TestNextDoesNotAllocate: Next runs for every fire of every schedule.
func TestNextDoesNotAllocate(t *testing.T) {
	loc := mustZone(t, "America/New_York")
	exprs := []string{"*/15 9-17 * * 1-5", "30 2 * * *", "0 0 L * *", "0 0 * * 5#3",
		"0 22-2/2 * * FRI-MON", "0 0 29-L,L-2W,W15 * *", "*/10 * * * *", "@15minutes"}
	for i, expr := range exprs {
		opts := cronx.Options{Location: loc, DomDow: cronx.DomDow(i % 3), Overlap: cronx.OverlapPolicy(i % 3)}
		c, err := cronx.NewCron(expr, opts)
		if err != nil {
			t.Fatal(err)
		}
		after := time.Date(2026, 3, 7, 12, 0, 0, 0, loc)
		if n := testing.AllocsPerRun(200, func() { after = c.Next(after) }); n != 0 {
			t.Errorf("%q: %v allocations per Next", expr, n)
		}
	}
}
