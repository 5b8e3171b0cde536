package fires

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
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
	t.Parallel()
	js, store := natstest.Start(t).Store(t)
	ctx := context.Background()
	c, f := clock.NewFake(time.Now())
	l := newLeases(store.Leases(), js, "a", 4, 10*time.Second, c,
		slog.New(slog.NewTextHandler(io.Discard, nil)), func(kvstore.Event) {})
	l.acquire(ctx, 1, 0)
	if !l.owns(1) {
		t.Fatal("does not own the shard it acquired")
	}
	testwait.Done(t, 5*time.Second, "the acquisition's news", l.changed)
	timers := l.subscribe()

	// A renewal in time is no news: the loops have parked nothing.
	l.renewAll(ctx)
	select {
	case <-l.changed:
		t.Fatal("a renewal in time woke the fire loop")
	default:
	}

	// Silence up to the guard (90% of the TTL), as when the leases'
	// stream had no leader: the shard is owned until the guard, and not
	// from it on.
	f.Advance(l.ttl*9/10 - time.Millisecond)
	if !l.owns(1) {
		t.Fatal("does not own the shard just before 90% of the TTL")
	}
	f.Advance(time.Millisecond)
	if l.owns(1) {
		t.Fatal("owns the shard at 90% of the TTL without a renewal")
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

// TestLeaseExpiryHandsTheShardOver: an instance that dies holding a lease
// stops renewing it; when the key's TTL runs out on the server, another
// instance takes the shard, and the dead one, should it come back, finds
// its lease taken over and lets go.
func TestLeaseExpiryHandsTheShardOver(t *testing.T) {
	t.Parallel()
	js, store := natstest.Start(t).Store(t)
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ca, _ := clock.NewFake(time.Now())
	cb, _ := clock.NewFake(time.Now())
	// The shortest TTL a key may have: the expiry below is the server's,
	// in real time, and this keeps the wait for it short.
	const ttl = time.Second
	a := newLeases(store.Leases(), js, "a", 1, ttl, ca, log, func(kvstore.Event) {})
	b := newLeases(store.Leases(), js, "b", 1, ttl, cb, log, func(kvstore.Event) {})
	a.acquire(ctx, 0, 0)
	if !a.owns(0) {
		t.Fatal("a does not own the shard it acquired")
	}
	w, err := store.Leases().Watch(ctx, shardKey(0), jetstream.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	b.acquire(ctx, 0, 0)
	if b.owns(0) {
		t.Fatal("b took a shard whose lease is live")
	}
	// a dies here. The server removes its key at the TTL and says so with
	// a marker, which the watcher reports as a purge.
	testwait.Eventually(t, 10*time.Second, "the dead lease's key expired", func() bool {
		select {
		case e := <-w.Updates():
			return e != nil && e.Operation() == jetstream.KeyValuePurge
		default:
			return false
		}
	})
	b.acquire(ctx, 0, 0)
	if !b.owns(0) {
		t.Fatal("b did not take the shard whose lease expired")
	}
	testwait.Done(t, 5*time.Second, "a's acquisition", a.changed)
	a.renewAll(ctx)
	if a.owns(0) {
		t.Fatal("a still owns the shard b took over")
	}
	select {
	case <-a.changed:
	default:
		t.Error("losing the lease did not wake a's fire loop")
	}
}

// A member key announces what its instance's protocol understands
// (leaseValue.Caps): a writer that leaves state records behind the fire
// stream does so only while every member checks records against it. A
// tenure's start stays what it was through renewals, which is what tells
// this instance's own records of the tenure from older ones (mayLag).
func TestMemberAnnouncesItsCaps(t *testing.T) {
	t.Parallel()
	l, store, f := testLeases(t)
	c, ctx := l.clock, context.Background()
	l.registerMember(ctx)
	e, err := store.Leases().Get(ctx, "member.a")
	if err != nil {
		t.Fatal(err)
	}
	var v leaseValue
	if err := json.Unmarshal(e.Value(), &v); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(v.Caps, capBehindStream) {
		t.Errorf("member.a = %s: want caps with %q", e.Value(), capBehindStream)
	}
	taken := c.Now()
	l.acquire(ctx, 1, 0)
	f.Advance(3 * time.Second)
	l.renewAll(ctx)
	if since, ok := l.since(1); !ok || !since.Equal(taken) {
		t.Errorf("after a renewal the tenure began at %v (owned %v), want %v", since, ok, taken)
	}
}

// Records are left behind, and ended lists written, only while every
// member announces that it reads them: a member key from before caps, or
// one without the cap, closes the gate. A member record the survey does
// not believe (not a lease value, no plausible renewed time:
// leasejudge.go) is no member, and gates nothing.
func TestEveryMemberReads(t *testing.T) {
	t.Parallel()
	l, store, _ := testLeases(t)
	ctx := context.Background()
	l.registerMember(ctx)
	reads := func() (bool, bool) {
		t.Helper()
		sv, err := l.survey(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return sv.reads, sv.lists
	}
	if reads, lists := reads(); !reads || !lists {
		t.Fatalf("alone: reads, lists = %v, %v; want true, true", reads, lists)
	}
	put := func(key, value string) {
		t.Helper()
		if _, err := store.Leases().Put(ctx, key, []byte(value)); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	put("member.b", `{"owner":"b","renewed":"`+now+`","ttl":"10s","caps":["behind-stream","ended-lists"]}`)
	if reads, lists := reads(); !reads || !lists {
		t.Errorf("with a member announcing both caps: reads, lists = %v, %v; want true, true", reads, lists)
	}
	// The release before ended lists: records may be behind, no lists.
	put("member.b", `{"owner":"b","renewed":"`+now+`","ttl":"10s","caps":["behind-stream"]}`)
	if reads, lists := reads(); !reads || lists {
		t.Errorf("with a member announcing behind-stream only: reads, lists = %v, %v; want true, false", reads, lists)
	}
	put("member.b", `{"owner":"b","renewed":"`+now+`","ttl":"10s","caps":["behind-stream","ended-lists"]}`)
	for _, v := range []string{
		`{"owner":"old","renewed":"` + now + `","ttl":"10s"}`,
		`{"owner":"old","renewed":"` + now + `","ttl":"10s","caps":["something-else"]}`,
	} {
		put("member.old", v)
		if reads, lists := reads(); reads || lists {
			t.Errorf("with member.old = %s: reads, lists = %v, %v; want false, false", v, reads, lists)
		}
	}
	for _, v := range []string{`{"owner":"old","caps":["something-else"]}`, `not json`} {
		put("member.old", v)
		if reads, lists := reads(); !reads || !lists {
			t.Errorf("with member.old = %s (ignored): reads, lists = %v, %v; want true, true", v, reads, lists)
		}
	}
}

// testLeases is instance a's leases of 4 shards on a server of its own,
// its clock a fake.
func testLeases(t *testing.T) (*leases, *jsstore.Store, *clock.Fake) {
	t.Helper()
	js, store := natstest.Start(t).Store(t)
	c, f := clock.NewFake(time.Now())
	return newLeases(store.Leases(), js, "a", 4, 10*time.Second, c, slog.New(slog.DiscardHandler), func(kvstore.Event) {}), store, f
}

// TestRenewalsDoNotWaitForTheRebalance: the renewals go on while a
// rebalance is slow. A rebalance reads every key of the leases bucket and
// every member key; with 400 ms of round trip (integration/links,
// latency-200ms) it took seconds, and when the renewals waited for it
// every one came after the guard had closed: the fleet fired nothing.
func TestRenewalsDoNotWaitForTheRebalance(t *testing.T) {
	t.Parallel()
	js, store := natstest.Start(t).Store(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, f := clock.NewFake(time.Now())
	l := newLeases(store.Leases(), js, "a", 4, 3*time.Second, c,
		slog.New(slog.NewTextHandler(io.Discard, nil)), func(kvstore.Event) {})
	l.acquire(ctx, 1, 0)
	stuck, release := make(chan struct{}, 1), make(chan struct{})
	l.rebalancing = func() {
		select {
		case stuck <- struct{}{}:
		default:
		}
		<-release
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.run(ctx, nil)
	}()
	defer func() {
		close(release)
		cancel()
		<-done
	}()
	rev := func() uint64 {
		e, err := store.Leases().Get(ctx, "shard.1")
		if err != nil {
			return 0
		}
		return e.Revision()
	}
	first := rev()
	testwait.Eventually(t, 10*time.Second, "a rebalance under way", func() bool {
		f.Advance(l.ttl / 3)
		select {
		case <-stuck:
			return true
		default:
			return false
		}
	})
	during := rev()
	testwait.Eventually(t, 10*time.Second, "two renewals while the rebalance is stuck", func() bool {
		f.Advance(l.ttl / 3)
		return rev() >= max(first, during)+2
	})
	if !l.owns(1) {
		t.Error("the shard is not owned while its lease is renewed")
	}
}

// TestHandBackHeldForItsRecords: a hand-back whose records (records left
// behind, ended lists) are not written within a round's wait waits for a
// later round while a member does not read them, and goes anyway after
// handBackPatience. It used to go at once: under load, with a 2 s TTL, a
// round waits 200 ms, and the first member of the release before took
// shards whose ended lists were still to be turned into records
// (integration's TestMixedFleetEndedLists failed with 32 lists left).
func TestHandBackHeldForItsRecords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		caps    string // the joining member's
		hold    bool   // the hand-back waits for its records
		written bool   // ... and they are written in the end
	}{
		{"release before caps", `[]`, true, true},
		{"release before ended lists", `["behind-stream"]`, true, true},
		{"records never written", `["behind-stream"]`, true, false},
		{"every member reads both", `["behind-stream","ended-lists"]`, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, store, f := testLeases(t)
			ctx := context.Background()
			l.readCaps = true
			written := false
			var asked [][]int
			l.beforeDrop = func(_ context.Context, shards []int) bool {
				asked = append(asked, slices.Clone(shards))
				return written
			}
			l.registerMember(ctx)
			l.rebalance(ctx) // alone: takes the 4 shards
			if got := l.heldShards(); len(got) != 4 {
				t.Fatalf("alone: holds %v, want 4 shards", got)
			}
			joining := `{"owner":"b","renewed":"` + time.Now().UTC().Format(time.RFC3339Nano) + `","ttl":"1h","caps":` + tc.caps + `}`
			if _, err := store.Leases().Put(ctx, "member.b", []byte(joining)); err != nil {
				t.Fatal(err)
			}
			l.rebalance(ctx)
			if len(asked) != 1 || len(asked[0]) != 2 {
				t.Fatalf("asked to write the records of %v, want one hand-back of 2 shards", asked)
			}
			handed := func() {
				t.Helper()
				if got := l.heldShards(); len(got) != 2 {
					t.Fatalf("holds %v, want 2 shards", got)
				}
				for _, s := range asked[len(asked)-1] {
					if _, err := store.Leases().Get(ctx, shardKey(s)); err == nil {
						t.Errorf("shard %d handed back, its lease key still there", s)
					}
				}
			}
			if !tc.hold {
				handed()
				return
			}
			f.Advance(handBackPatience(l.ttl) - time.Second)
			l.rebalance(ctx)
			if got := l.heldShards(); len(got) != 4 {
				t.Fatalf("records not written after %v: holds %v, want all 4 still", handBackPatience(l.ttl)-time.Second, got)
			}
			if tc.written {
				written = true
			} else {
				f.Advance(time.Second)
			}
			l.rebalance(ctx)
			handed()
		})
	}
}
