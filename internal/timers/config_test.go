package timers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/timers"
)

// TestConfigRefusesOutOfRange: workers below 1 (a negative count used to
// panic at Start) and claim TTLs outside 1s..claimttl.Max are refused by
// New, naming the field.
func TestConfigRefusesOutOfRange(t *testing.T) {
	_, store := natstest.Start(t).Store(t)
	fe, err := fires.New(fires.Config{Store: store, Instance: "one"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  timers.Config
		want string
	}{
		{timers.Config{Workers: -1}, "Config.Workers -1"},
		{timers.Config{ClaimTTL: 500 * time.Millisecond}, "Config.ClaimTTL 500ms"},
		{timers.Config{ClaimTTL: time.Hour}, "Config.ClaimTTL 1h0m0s"},
	} {
		tc.cfg.Store, tc.cfg.Owner, tc.cfg.Instance = store, fe, "one"
		if _, err := timers.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v): %v, want an error naming %q", tc.cfg, err, tc.want)
		}
	}
}
