package fires_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestPastOneShotWrittenStraightIntoTheBucket: a one-shot whose time has
// passed, written with `nats kv put` (no API: the API refuses it), is
// never left "planned" (issue 52): within the misfire threshold it fires
// late; past it, the slot is recorded missed with the reason, and
// nothing is published.
func TestPastOneShotWrittenStraightIntoTheBucket(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	specs, err := h.js.KeyValue(ctx, h.store.Layout().WithDefaults().SpecsBucket)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	recent := now.Add(-2 * time.Second).Truncate(time.Millisecond)
	old := now.Add(-time.Hour).Truncate(time.Second)
	for id, at := range map[string]time.Time{"recent": recent, "old": old} {
		if _, err := specs.Put(ctx, id, fmt.Appendf(nil, `{"workflow":"w","at":%q}`, at.Format(time.RFC3339Nano))); err != nil {
			t.Fatal(err)
		}
	}
	h.engine(fires.Config{LeaseTTL: time.Hour, Instance: "one"})
	h.waitFires("recent", 10*time.Second, atLeast(1))
	err = testwait.Until(10*time.Second, "the old one-shot recorded missed", func() error {
		hist, err := h.store.History(ctx, "old")
		if err != nil {
			return err
		}
		for _, tick := range hist {
			if tick.Slot.Equal(old) && tick.Status == kvstore.TickMissed && strings.Contains(tick.Reason, "misfire") {
				return nil
			}
		}
		return fmt.Errorf("history %+v", hist)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.of("old"); len(got) != 0 {
		t.Errorf("the one-shot an hour late fired: %+v", got)
	}
}
