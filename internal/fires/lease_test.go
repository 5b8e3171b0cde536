package fires

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestLeaseRenewalAfterSilenceWakesTheLoops: a lease whose renewals were
// silent past the guard (90% of the TTL) stops its shard's dispatching,
// and the loops park the schedules that come due meanwhile. When a
// renewal then succeeds (the key had not expired: nobody took it), the
// loops must hear of it to look at what they parked. They did not: the
// parked schedules stayed parked for as long as the lease was renewed,
// and no other instance could take them. Found by the partition harness
// (docs/reliability.md): after a heal, a third of the schedules did not
// fire for a minute, until an unrelated lease change.
func TestLeaseRenewalAfterSilenceWakesTheLoops(t *testing.T) {
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	ctx := context.Background()
	if err := kvstore.Setup(ctx, js, kvstore.SetupConfig{}); err != nil {
		t.Fatal(err)
	}
	store, err := kvstore.Open(ctx, js, kvstore.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	l := newLeases(store.Leases(), js, "a", 4, 10*time.Second, clock.Clock{},
		slog.New(slog.NewTextHandler(io.Discard, nil)), func(kvstore.Event) {})
	l.acquire(ctx, 1)
	if !l.owns(1) {
		t.Fatal("does not own the shard it acquired")
	}
	<-l.changed // the acquisition's news
	timers := l.subscribe()

	// A renewal in time is no news: the loops have parked nothing.
	l.renewAll(ctx)
	select {
	case <-l.changed:
		t.Fatal("a renewal in time woke the fire loop")
	default:
	}

	// Silence past the guard, as when the leases' stream had no leader.
	l.mu.Lock()
	h := l.held[1]
	h.renewed = l.clock.Now().Add(-l.ttl * 95 / 100)
	l.held[1] = h
	l.mu.Unlock()
	if l.owns(1) {
		t.Fatal("owns the shard after 95% of the TTL without a renewal")
	}
	l.renewAll(ctx)
	if !l.owns(1) {
		t.Fatal("does not own the shard after a successful renewal")
	}
	select {
	case <-l.changed:
	default:
		t.Error("a renewal after the silence did not wake the fire loop: its parked schedules stay parked")
	}
	select {
	case <-timers:
	default:
		t.Error("a renewal after the silence did not wake the timer loop")
	}
}
