package fires

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testlog"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// lossRecorder keeps the events a leases raises, for a test to read.
type lossRecorder struct {
	mu     sync.Mutex
	events []kvstore.Event
}

func (r *lossRecorder) event(e kvstore.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// of returns the events of kind raised so far.
func (r *lossRecorder) of(kind kvstore.EventKind) []kvstore.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []kvstore.Event
	for _, e := range r.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// recordedLeases is instance a's leases of shards on a server of its own,
// its clock a fake, its log and events recorded.
func recordedLeases(t *testing.T, shards int, ttl time.Duration) (*leases, *jsstore.Store, *clock.Fake, *testlog.Buffer, *lossRecorder) {
	t.Helper()
	js, store := natstest.Start(t).Store(t)
	c, f := clock.NewFake(time.Now())
	logs, rec := &testlog.Buffer{}, &lossRecorder{}
	l := newLeases(store.Leases(), js, "a", shards, ttl, c, slog.New(slog.NewTextHandler(logs, nil)), rec.event)
	return l, store, f, logs, rec
}

// TestExpiredLeaseIsLostAsExpired: a scheduler alone in its fleet, starved
// past its lease TTL, finds its leases' keys expired on the server when it
// renews again: nobody took them. It logged `lease lost ... why="taken
// over"` for each (44 times in one 13 s stall, issue 51), which sent its
// operators looking for an instance that did not exist. The loss is
// "expired", with the silence since the last renewal; the guard that
// stopped the shards' dispatching says it closed, first.
func TestExpiredLeaseIsLostAsExpired(t *testing.T) {
	t.Parallel()
	// The shortest TTL a key may have: the expiry is the server's, in
	// real time.
	l, store, f, logs, rec := recordedLeases(t, 2, time.Second)
	ctx := context.Background()
	w, err := store.Leases().WatchFiltered(ctx, []string{"shard.*"}, jetstream.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Stop() }()
	l.acquire(ctx, 0, 0)
	l.acquire(ctx, 1, 0)
	if l.count() != 2 {
		t.Fatalf("holds %d leases, want the 2 acquired", l.count())
	}

	// The process stalls: no renewal while the server expires both keys.
	expired := map[string]bool{}
	testwait.Eventually(t, 10*time.Second, "both lease keys expired on the server", func() bool {
		select {
		case e := <-w.Updates():
			if e != nil && e.Operation() != jetstream.KeyValuePut {
				expired[e.Key()] = true
			}
		default:
		}
		return len(expired) == 2
	})
	const stall = 1300 * time.Millisecond
	f.Advance(stall)
	l.renewAll(ctx)

	if l.count() != 0 {
		t.Fatalf("holds %d leases after their keys expired", l.count())
	}
	lost := rec.of(kvstore.EventLeaseLost)
	if len(lost) != 2 {
		t.Fatalf("%d lease_lost events, want 2: %+v", len(lost), rec.events)
	}
	for _, e := range lost {
		if e.Reason != "expired" || e.Holder != "" || e.Silence != stall.String() || e.Owner != "a" {
			t.Errorf("lease_lost of shard %d: reason %q, holder %q, silence %q, owner %q; want expired, no holder, silence %s, owner a",
				*e.Shard, e.Reason, e.Holder, e.Silence, e.Owner, stall)
		}
	}
	// The guard had closed by then: said before the loss.
	if closed := rec.of(kvstore.EventGuardClosed); len(closed) != 2 || closed[0].Silence != stall.String() {
		t.Errorf("guard_closed events %+v before the leases were lost, want 2 with silence %s", closed, stall)
	}
	out := logs.String()
	if strings.Contains(out, "taken over") || !strings.Contains(out, "why=expired") || !strings.Contains(out, "silence=1.3s") {
		t.Errorf("the log says:\n%s\nwant why=expired with silence=1.3s, never taken over", out)
	}
}

// TestTakenOverLeaseNamesItsHolder: a lease another instance holds now is
// lost as "taken over", naming that instance in the event and the log.
func TestTakenOverLeaseNamesItsHolder(t *testing.T) {
	t.Parallel()
	const ttl = 10 * time.Second
	a, store, f, logs, rec := recordedLeases(t, 4, ttl)
	ctx := context.Background()
	b := newLeases(store.Leases(), a.js, "b", 4, ttl, a.clock, slog.New(slog.DiscardHandler), func(kvstore.Event) {})
	a.acquire(ctx, 2, 0)
	// b writes the lease as its own (as after a's key expired and b took
	// the shard).
	if _, err := store.Leases().Put(ctx, shardKey(2), b.value()); err != nil {
		t.Fatal(err)
	}
	f.Advance(ttl / 3)
	a.renewAll(ctx)

	if a.owns(2) {
		t.Fatal("a still owns the shard b holds")
	}
	lost := rec.of(kvstore.EventLeaseLost)
	if len(lost) != 1 || *lost[0].Shard != 2 || lost[0].Reason != "taken over" || lost[0].Holder != "b" {
		t.Fatalf("lease_lost events %+v: want one of shard 2, reason taken over, holder b", lost)
	}
	if out := logs.String(); !strings.Contains(out, `why="taken over"`) || !strings.Contains(out, "holder=b") {
		t.Errorf("the log says:\n%s\nwant why=\"taken over\" and holder=b", out)
	}
	if closed := rec.of(kvstore.EventGuardClosed); len(closed) != 0 {
		t.Errorf("guard_closed %+v after a third of the TTL", closed)
	}
}

// TestOwnUnacknowledgedRenewalKeepsTheLease: a renewal whose
// acknowledgement did not come (a round's wait ran out) may still have
// been stored; the next renewal, which expects the revision before it,
// then conflicts with this process's own write. The lease is this
// process's and stays so: it used to be dropped as "taken over".
func TestOwnUnacknowledgedRenewalKeepsTheLease(t *testing.T) {
	t.Parallel()
	l, store, f, _, rec := recordedLeases(t, 4, 10*time.Second)
	ctx := context.Background()
	l.acquire(ctx, 3, 0)
	l.mu.Lock()
	rev := l.held[3].rev
	l.mu.Unlock()
	f.Advance(l.ttl / 3)
	// A renewal stored, its acknowledgement lost: held still says rev.
	stored, err := l.casTTL(ctx, shardKey(3), rev)
	if err != nil {
		t.Fatal(err)
	}
	f.Advance(l.ttl / 3)
	l.renewAll(ctx)
	if !l.owns(3) {
		t.Fatal("the lease was dropped after its own unacknowledged renewal")
	}
	if lost := rec.of(kvstore.EventLeaseLost); len(lost) != 0 {
		t.Fatalf("lease_lost %+v for a lease whose key holds this process's own write", lost)
	}
	// The next round renews it at the revision found.
	f.Advance(l.ttl / 3)
	l.renewAll(ctx)
	e, err := store.Leases().Get(ctx, shardKey(3))
	if err != nil {
		t.Fatal(err)
	}
	if e.Revision() <= stored || !l.owns(3) {
		t.Fatalf("after the next round the key is at revision %d (the stored renewal's %d), owned %v; want a newer one, owned",
			e.Revision(), stored, l.owns(3))
	}
}

// guardGauge is an Observer that keeps the lease-guard gauge's values.
type guardGauge struct {
	nopObserver
	mu     sync.Mutex
	values []int
}

func (g *guardGauge) GuardsClosed(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.values) == 0 || g.values[len(g.values)-1] != n {
		g.values = append(g.values, n)
	}
}

func (g *guardGauge) seen() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.values)
}

// TestLeaseGuardClosingAndOpeningAreReported: the guard that stops a
// shard's dispatching when its lease has gone without renewal for 90% of
// the TTL closed and opened without a word (issue 51): a starved process
// stopped firing and nothing said so. Its closing is a guard_closed event
// per shard with the silence, found by the lease loop's look (the run's
// rounds, the renewals), its opening at the next successful renewal a
// guard_opened, and the gauge of closed guards follows. The events are
// published as the engine publishes every event.
func TestLeaseGuardClosingAndOpeningAreReported(t *testing.T) {
	t.Parallel()
	js, store := natstest.Start(t).Store(t)
	ctx := context.Background()
	c, f := clock.NewFake(time.Now())
	gauge := &guardGauge{}
	const ttl = 10 * time.Second
	e, err := New(Config{Store: store, Instance: "a", LeaseTTL: ttl, Clock: c, Observer: gauge})
	if err != nil {
		t.Fatal(err)
	}
	l := e.leases
	l.setShards(4)
	for s := range 2 {
		l.acquire(ctx, s, 0)
	}
	events := make(chan *nats.Msg, 16)
	for _, kind := range []kvstore.EventKind{kvstore.EventGuardClosed, kvstore.EventGuardOpened} {
		sub, err := js.Conn().ChanSubscribe("sched.event."+string(kind)+".>", events)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = sub.Unsubscribe() }()
	}
	if err := js.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	next := func(want kvstore.EventKind, shard int, silence time.Duration) {
		t.Helper()
		m := testwait.Receive(t, 5*time.Second, string(want)+" of shard "+strconv.Itoa(shard), events)
		var ev kvstore.Event
		if err := json.Unmarshal(m.Data, &ev); err != nil {
			t.Fatal(err)
		}
		wantSubject := "sched.event." + string(want) + ".shard-" + strconv.Itoa(shard)
		if m.Subject != wantSubject || ev.Kind != want || ev.Shard == nil || *ev.Shard != shard || ev.Silence != silence.String() || ev.Owner != "a" {
			t.Fatalf("got %s %s, want %s with shard %d, silence %s, owner a", m.Subject, m.Data, wantSubject, shard, silence)
		}
	}

	// Renewed in time: the guards stay open, nothing is said.
	f.Advance(ttl / 3)
	l.closeGuards()
	l.renewAll(ctx)
	// Then a silence to the guard's 90% and past it.
	f.Advance(ttl*9/10 - time.Millisecond)
	l.closeGuards()
	if !l.owns(0) || !l.owns(1) {
		t.Fatal("the guards closed before 90% of the TTL")
	}
	f.Advance(time.Millisecond)
	l.closeGuards() // the run's round looks
	next(kvstore.EventGuardClosed, 0, ttl*9/10)
	next(kvstore.EventGuardClosed, 1, ttl*9/10)
	if got := gauge.seen(); !slices.Equal(got, []int{0, 2}) {
		t.Errorf("the gauge of closed guards went %v, want [0 2]", got)
	}
	l.closeGuards() // a second look says nothing more
	f.Advance(2 * time.Second)
	l.renewAll(ctx)
	next(kvstore.EventGuardOpened, 0, ttl*9/10+2*time.Second)
	next(kvstore.EventGuardOpened, 1, ttl*9/10+2*time.Second)
	if !l.owns(0) || !l.owns(1) {
		t.Error("the shards are not owned after their renewal")
	}
	if got := gauge.seen(); !slices.Equal(got, []int{0, 2, 0}) {
		t.Errorf("the gauge of closed guards went %v, want [0 2 0]", got)
	}
	if err := js.Conn().Flush(); err != nil { // what was published is received
		t.Fatal(err)
	}
	select {
	case m := <-events:
		t.Errorf("more guard events than a closing and an opening per shard: %s %s", m.Subject, m.Data)
	default:
	}
}
