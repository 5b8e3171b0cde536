package integration

import (
	"context"
	"github.com/jetsched/jetsched/internal/daemon/daemontest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/control"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestBackfillPacedAcrossSchedulers: two schedulers share one NATS
// system; a backfill of 30 slots at 20/s is under way when the instance
// firing it stops, and the other carries it on. The pace lives in the
// shared state record, so the fires stay at least 1/rate apart across the
// handover, every slot is replayed once, and each is marked backfill.
func TestBackfillPacedAcrossSchedulers(t *testing.T) {
	srv := natstest.Start(t)
	ctx := context.Background()
	start := func(name string) *daemon.Daemon {
		d, err := daemon.Start(ctx, daemon.Config{Conn: natsconn.Options{URL: srv.URL()},
			Fire: fires.Config{Instance: name, LeaseTTL: 2 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		daemontest.Cleanup(t, d)
		return d
	}
	ds := map[string]*daemon.Daemon{"one": start("one"), "two": start("two")}
	js, store := srv.Store(t) // the test's own connection outlives both schedulers
	if _, err := store.PutSpec(ctx, "bf", kvstore.Spec{Workflow: "replay", Every: "1s"}); err != nil {
		t.Fatal(err)
	}

	type fired struct{ slot, instance string }
	var (
		mu  sync.Mutex
		got []fired
	)
	cons, err := js.OrderedConsumer(ctx, "SCHED_FIRES", jetstream.OrderedConsumerConfig{FilterSubjects: []string{"sched.fire.replay.>"}})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		meta, err := kvstore.ParseFireMeta(m.Headers())
		if err != nil || meta.Reason != kvstore.ReasonBackfill {
			return
		}
		mu.Lock()
		got = append(got, fired{meta.SlotID, meta.Instance})
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }

	// The claims, from the state record's updates: the pace is between
	// claims (a dispatch follows its claim after a moment that varies).
	claims := map[string]time.Time{}
	w, err := js.KeyValue(ctx, "sched_state")
	if err != nil {
		t.Fatal(err)
	}
	sw, err := w.Watch(ctx, "bf", jetstream.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sw.Stop() }()
	var claimsDone sync.WaitGroup
	claimsDone.Go(func() {
		for e := range sw.Updates() {
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue
			}
			st, err := kvstore.DecodeState(e.Value())
			if err != nil || st.Claim == nil || st.Claim.Reason != kvstore.ReasonBackfill {
				continue
			}
			mu.Lock()
			claims[st.Claim.SlotID] = st.Claim.At
			mu.Unlock()
		}
	})

	const n, rate = 30, 20.0
	to := time.Now().Add(-time.Hour).Truncate(time.Second)
	testwait.Eventually(t, 10*time.Second, "the backfill of bf accepted", func() bool {
		_, err := (control.Control{Store: store}).Backfill(ctx, "bf", to.Add(-(n-1)*time.Second), to, rate, "")
		return err == nil
	})
	testwait.Eventually(t, 10*time.Second, "ten backfilled fires", func() bool { return count() >= 10 })
	mu.Lock()
	first := got[0].instance
	mu.Unlock()
	daemontest.Stop(t, ds[first]) // hands its leases back; the other instance takes the backfill on
	testwait.Eventually(t, 30*time.Second, "every backfilled fire", func() bool { return count() >= n })

	testwait.Eventually(t, 10*time.Second, "the backfill of bf ended", func() bool {
		st, _, err := store.GetState(ctx, "bf")
		return err == nil && st.Backfill == nil // ended after its last slot
	})
	_ = sw.Stop()
	claimsDone.Wait()

	mu.Lock()
	defer mu.Unlock()
	seen, by := map[string]bool{}, map[string]int{}
	for _, f := range got {
		if seen[f.slot] {
			t.Fatalf("slot %s fired twice", f.slot)
		}
		seen[f.slot] = true
		by[f.instance]++
	}
	if len(got) != n || len(by) != 2 {
		t.Fatalf("%d backfill fires by %v; want %d by both instances", len(got), by, n)
	}
	// Every claim the watch saw is at least 1/rate after the one before,
	// across the handover too (a claim the watch missed only widens a gap).
	var at []time.Time
	for _, c := range claims {
		at = append(at, c)
	}
	slices.SortFunc(at, time.Time.Compare)
	least := time.Duration(float64(time.Second)/rate) - time.Millisecond
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < least {
			t.Fatalf("claims %d and %d of %d only %s apart at %v/s", i-1, i, len(at), gap, rate)
		}
	}
	if len(at) < n/2 {
		t.Fatalf("the state watch saw %d of %d claims", len(at), n)
	}
}
