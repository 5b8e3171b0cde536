package fires_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/control"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// The counters say what happened (issue 13): a backfill asked twice, which
// the stream deduplicates, counts each slot once in Fires.
func TestFiresCountsWhatTheStreamAccepted(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	h.engine(fires.Config{})
	// A slot far enough ahead not to fire during the test; aligned to the
	// epoch, so that the backfill's whole hours are slots.
	h.put("bf", kvstore.Spec{Workflow: "wf", Every: "1h", Align: kvstore.AlignEpoch})
	c := control.Control{Store: h.store}
	to := time.Now().Add(-time.Hour).Truncate(time.Hour)
	from := to.Add(-5 * time.Hour)
	for range 2 {
		if _, err := c.Backfill(ctx, "bf", from, to, 100, ""); err != nil {
			t.Fatal(err)
		}
		testwait.Eventually(t, 15*time.Second, "the backfill of bf done", func() bool {
			st, _, err := h.store.GetState(ctx, "bf")
			return err == nil && st.Backfill == nil
		})
	}
	msgs := len(h.waitFires("bf", 10*time.Second, atLeast(6))) // 6 slots, each in the stream once
	testwait.Eventually(t, 10*time.Second, "Fires counting each slot once", func() bool {
		st, _, err := h.store.GetState(ctx, "bf")
		return err == nil && st.Fires == uint64(msgs)
	})
}

// After an outage, each missed slot's ledger reason states its own
// lateness, and the slots within the threshold fire.
func TestOutageMissesOnlyWhatIsLaterThanTheThreshold(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	e := h.engine(fires.Config{MisfireThreshold: 2 * time.Second})
	h.put("out", kvstore.Spec{Workflow: "wf", Every: "1s"})
	h.waitFires("out", 10*time.Second, atLeast(1))
	e.Stop(context.Background())
	// The outage: 5 s without a scheduler. The engine that comes back
	// reads a clock 5 s ahead, so the slots of the outage are due when it
	// starts, without waiting for them.
	const outage = 5 * time.Second
	back := time.Now().Add(outage)
	h.engine(fires.Config{MisfireThreshold: 2 * time.Second, Clock: clock.Clock{Offset: outage}})
	// The slots within 2 s of the restart fire (late); the older ones are
	// missed, each with its own lateness.
	h.waitFires("out", 10*time.Second, func(fs []fireMsg) bool {
		for _, f := range fs {
			if f.meta.ScheduledAt.Before(back) && back.Sub(f.meta.ScheduledAt) < 2*time.Second {
				return true
			}
		}
		return false
	})
	hist, err := h.store.History(ctx, "out")
	if err != nil {
		t.Fatal(err)
	}
	lateness := map[string]bool{}
	for _, tick := range hist {
		if tick.Status != kvstore.TickMissed {
			continue
		}
		if !strings.HasPrefix(tick.Reason, "misfire: ") {
			t.Fatalf("missed tick reason %q", tick.Reason)
		}
		late := strings.TrimPrefix(strings.SplitN(tick.Reason, " late", 2)[0], "misfire: ")
		lateness[late] = true
	}
	if len(lateness) < 2 {
		t.Fatalf("missed slots carry the same lateness %v: want each its own", lateness)
	}
	st, _, err := h.store.GetState(ctx, "out")
	if err != nil {
		t.Fatal(err)
	}
	if st.Missed == 0 || st.Missed != uint64(len(lateness)) {
		t.Fatalf("state counts %d missed; the ledger has %d", st.Missed, len(lateness))
	}
}
