package integration

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/faulttest"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
)

// TestRollingRestart: a fleet of three schedulers is restarted one
// instance at a time with SIGTERM, as a rolling update does, while 200
// schedules fire every second. A stopping instance settles its last
// publishes, hands its leases back and leaves; the others take its shards
// at once (they watch the leases bucket), and the restarted instance takes
// its share again once its index is complete. The test measures the gap
// that leaves in the fires (the lateness of the fires dispatched during
// the restarts, against the steady run before) and prints it on a
// HANDOVER line; it asserts exactly once (0 duplicates, 0 lost) and that
// no shard waited for its lease to expire (lateness below half the lease
// TTL).
func TestRollingRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a minute-long rolling restart of three processes (./test.sh and CI run it)")
	}
	const (
		name     = "rolling-restart"
		leaseTTL = 10 * time.Second // the default: its third is the lease round
	)
	bin := schedulerBinary(t)
	srv := natstest.Start(t)
	names := []string{"roll1", "roll2", "roll3"}
	procs := startFleet(t, bin, srv.URL(), names, "--lease-ttl", leaseTTL.String())
	_, js := connectURLs(t, srv.URL())
	store := openStore(t, js)
	ids := scheduleIDs("roll", 200)
	created := time.Now()
	putSchedules(t, store, ids)
	fires := newFireLog(t, js)
	if behind := fires.waitAllReach(ids, time.Now().Add(2*slotStep), 30*time.Second); len(behind) > 0 {
		t.Fatalf("the fleet does not fire %d schedules, e.g. %v", len(behind), first(behind, 5))
	}
	steadyFrom := time.Now()
	if behind := fires.waitAllReach(ids, steadyFrom.Add(5*slotStep), 30*time.Second); len(behind) > 0 {
		t.Fatalf("%d schedules stopped firing before the restarts, e.g. %v", len(behind), first(behind, 5))
	}
	restartFrom := time.Now()
	var stops []time.Duration
	for i, p := range procs {
		begin := time.Now()
		p.Stop() // SIGTERM
		stops = append(stops, time.Since(begin))
		if code := p.exitCode(); code != 0 {
			t.Fatalf("%s exited with status %d on SIGTERM, want 0", names[i], code)
		}
		// The other two fire its schedules before its replacement starts
		// (a pod is replaced by a new one, under a new name, that may take
		// seconds to be scheduled and pulled).
		if behind := fires.waitAllReach(ids, time.Now().Add(2*slotStep), 40*time.Second); len(behind) > 0 {
			t.Fatalf("after stopping %s, %d schedules stopped firing, e.g. %v", names[i], len(behind), first(behind, 5))
		}
		n := names[i] + "-new"
		procs[i] = newSchedProc(t, bin, n, schedulerArgs(srv.URL(), n, "--lease-ttl", leaseTTL.String()), nil)
		procs[i].start()
		// The replacement takes its share from the others once its index
		// is complete: every schedule fires past that before the next
		// restart, as a rolling update waits for readiness.
		testwait.Eventually(t, 30*time.Second, n+" holding leases", func() bool { return leasesOf(t, store, n) > 0 })
		if behind := fires.waitAllReach(ids, time.Now().Add(2*slotStep), 40*time.Second); len(behind) > 0 {
			t.Fatalf("after starting %s, %d schedules stopped firing, e.g. %v", n, len(behind), first(behind, 5))
		}
	}
	chaosStop := time.Now()
	sum := settle(t, fires, name, ids, chaosStop, created, 40*time.Second)
	steady := fires.latenessBetween(steadyFrom, restartFrom)
	rolling := fires.latenessBetween(restartFrom, chaosStop)
	if len(steady) == 0 || len(rolling) == 0 {
		t.Fatalf("no fires read in the steady (%d) or the restart (%d) phase", len(steady), len(rolling))
	}
	faulttest.Summarize(t, fmt.Sprintf("HANDOVER %s: 3 instances replaced one by one (SIGTERM, then a new one), %d schedules x 1/s: lateness during the restarts max %s p99 %s (steady before: max %s p99 %s); stops took %v; %s",
		name, len(ids), ms(rolling[len(rolling)-1]), ms(quantile(rolling, 0.99)), ms(steady[len(steady)-1]), ms(quantile(steady, 0.99)), roundAll(stops), sum))
	if worst := rolling[len(rolling)-1]; worst >= leaseTTL/2 {
		t.Errorf("a fire was %s late during the restarts: shards waited for their lease to expire instead of being handed back", worst)
	}
}

// leasesOf counts the shard leases instance holds, from the leases bucket.
func leasesOf(t *testing.T, store *jsstore.Store, instance string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	keys, err := store.Leases().ListKeys(ctx)
	if err != nil {
		return 0
	}
	defer keys.Stop()
	n := 0
	for k := range keys.Keys() {
		if !strings.HasPrefix(k, "shard.") {
			continue
		}
		if e, err := store.Leases().Get(ctx, k); err == nil && bytes.Contains(e.Value(), []byte(`"owner":"`+instance+`"`)) {
			n++
		}
	}
	return n
}

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }

// quantile is the q-quantile of sorted.
func quantile(sorted []time.Duration, q float64) time.Duration {
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

func roundAll(ds []time.Duration) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = ms(d)
	}
	return out
}
