package timers_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/internal/timers"
	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testConditionBuckets are the condition buckets the tests' schedulers
// read (the ones condition_test.go creates and deletes).
var testConditionBuckets = []string{"runs", "gone"}

// env is a real server, the buckets, a fire engine (for the shard leases)
// and a recorder of every wakeup message.
type env struct {
	t      *testing.T
	srv    *natstest.Server
	js     jetstream.JetStream
	store  *jsstore.Store
	client wakeups.Client

	mu   sync.Mutex
	msgs []wakeups.Meta
	body map[string]string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv := natstest.Start(t)
	js, store := srv.Store(t)
	ctx := context.Background()
	e := &env{t: t, srv: srv, js: js, store: store, client: wakeups.Client{Store: store}, body: map[string]string{}}
	cons, err := js.OrderedConsumer(ctx, "SCHED_WAKEUPS", jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		meta, err := wakeups.ParseMeta(m.Headers())
		if err != nil {
			t.Errorf("bad wakeup: %v", err)
			return
		}
		e.mu.Lock()
		e.msgs = append(e.msgs, meta)
		e.body[meta.ID] = string(m.Data())
		e.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.Stop)
	return e
}

// start runs a scheduler: the fire engine (leases) and the wakeup engine.
func (e *env) start(instance string) func() {
	e.t.Helper()
	return e.startAhead(instance, 0)
}

// startAhead is start with the engines' clock ahead by offset: a
// scheduler that comes back after offset of downtime, at once.
func (e *env) startAhead(instance string, offset time.Duration) func() {
	e.t.Helper()
	c := clock.Clock{Offset: offset}
	fe, err := fires.New(fires.Config{Store: e.store, Instance: instance, LeaseTTL: 2 * time.Second, Clock: c})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := fe.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	we, err := timers.New(timers.Config{Store: e.store, Owner: fe, Instance: instance, ClaimTTL: 3 * time.Second, Clock: c,
		ConditionBuckets: testConditionBuckets})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := we.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			we.Stop(context.Background())
			fe.Stop(context.Background())
		}
	}
	e.t.Cleanup(stop)
	return stop
}

func (e *env) received() []wakeups.Meta {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]wakeups.Meta(nil), e.msgs...)
}

func TestWakeupFiresOnceWithHeadersAndIsRemoved(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start("a")
	ctx := context.Background()
	ids := [][2]string{{"order.42", "step/escalate"}, {"run with spaces", "étape ünïcode"}, {"a=b", "(x)+[y]"}}
	for _, id := range ids {
		if _, err := e.client.Register(ctx, wakeups.Request{Run: id[0], Step: id[1], Workflow: "approvals", When: "1s",
			Payload: []byte(`{"n":1}`), Condition: "awaiting"}); err != nil {
			t.Fatal(err)
		}
	}
	testwait.Eventually(e.t, 10*time.Second, "a wakeup per timer", func() bool { return len(e.received()) == len(ids) })
	for _, m := range e.received() {
		if m.Workflow != "approvals" || m.Condition != "awaiting" || m.When != "1s" {
			t.Fatalf("meta %+v", m)
		}
		if late := m.DispatchedAt.Sub(m.DueAt); late < 0 {
			t.Fatalf("dispatched %v before due %v", m.DispatchedAt, m.DueAt)
		}
		if e.body[m.ID] != `{"n":1}` {
			t.Fatalf("payload %q", e.body[m.ID])
		}
		tick, err := e.store.GetTick(ctx, m.ID)
		if err != nil || tick.Status != kvstore.TickFired {
			t.Fatalf("tick of %s: %+v %v", m.ID, tick, err)
		}
	}
	found := map[[2]string]bool{}
	for _, m := range e.received() {
		found[[2]string{m.Run, m.Step}] = true
	}
	for _, id := range ids {
		if !found[id] {
			t.Fatalf("no wakeup for %q/%q (ids must survive escaping)", id[0], id[1])
		}
	}
	testwait.Eventually(e.t, 5*time.Second, "no timer left", func() bool {
		left, err := e.client.List(ctx, wakeups.Filter{})
		return err == nil && len(left) == 0
	})
}

// TestCancelRacingFire: many timers fall due while they are being
// cancelled; each ends with exactly one of fired and cancelled in the
// ledger, and only the fired ones have a message.
func TestCancelRacingFire(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start("a")
	ctx := context.Background()
	const n = 60
	due := time.Now().Add(1500 * time.Millisecond)
	keys := make([]string, n)
	for i := range n {
		run := "r" + string(rune('A'+i%26)) + string(rune('a'+i/26))
		keys[i] = kvstore.TimerKey(run, "s")
		if _, err := e.client.Register(ctx, wakeups.Request{Run: run, Step: "s", Workflow: "wf", At: due}); err != nil {
			t.Fatal(err)
		}
	}
	// Real time on purpose: the race under test is between a cancel and a
	// fire at the timers' due instant, which is a wall-clock instant; a
	// wait for a first wakeup comes after most fires are done (60 fired,
	// 0 cancelled when tried), which tests no race.
	time.Sleep(time.Until(due))
	outcomes := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		run, _, _ := kvstore.SplitTimerKey(keys[i])
		wg.Go(func() {
			out, err := e.client.Cancel(ctx, run, "s")
			if errors.Is(err, kvstore.ErrNotFound) {
				out = wakeups.OutcomeFired // already fired and removed
			} else if err != nil {
				t.Errorf("cancel %s: %v", run, err)
			}
			mu.Lock()
			outcomes[keys[i]] = out
			mu.Unlock()
		})
	}
	wg.Wait()
	fired := 0
	for _, k := range keys {
		id := kvstore.WakeupID(k, due.UTC())
		var tick kvstore.Tick
		testwait.Eventually(e.t, 10*time.Second, "the tick of "+id+"", func() bool {
			var err error
			tick, err = e.store.GetTick(ctx, id)
			return err == nil
		})
		switch {
		case outcomes[k] == wakeups.OutcomeCancelled && tick.Status != kvstore.TickCancelled,
			outcomes[k] == wakeups.OutcomeFired && tick.Status != kvstore.TickFired:
			t.Fatalf("%s: cancel said %s, ledger says %s", k, outcomes[k], tick.Status)
		}
		if tick.Status == kvstore.TickFired {
			fired++
		}
	}
	testwait.Eventually(e.t, 10*time.Second, "one wakeup per fired tick", func() bool { return len(e.received()) == fired })
	seen := map[string]bool{}
	for _, m := range e.received() {
		if seen[m.ID] {
			t.Fatalf("duplicate wakeup %s", m.ID)
		}
		seen[m.ID] = true
	}
	t.Logf("of %d racing timers: %d fired, %d cancelled", n, fired, n-fired)
}

// TestTimersSurviveRestarts: pending timers fire after a scheduler
// restart and after a NATS restart.
func TestTimersSurviveRestarts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	stop := e.start("a")
	if _, err := e.client.Register(ctx, wakeups.Request{Run: "r1", Step: "s", Workflow: "wf", When: "2s"}); err != nil {
		t.Fatal(err)
	}
	stop()
	// The next scheduler comes back after 2.5 s of downtime: its clock
	// reads 2.5 s ahead, so r1 fell due while none ran.
	e.startAhead("b", 2500*time.Millisecond)
	testwait.Eventually(e.t, 10*time.Second, "the wakeup of r1 after the restart", func() bool { return len(e.received()) == 1 })

	// Due 5 s from now on the wall clock (2.5 s on b's): pending across
	// the NATS restart.
	if _, err := e.client.Register(ctx, wakeups.Request{Run: "r2", Step: "s", Workflow: "wf", When: "5s"}); err != nil {
		t.Fatal(err)
	}
	e.srv.Restart()
	testwait.Eventually(e.t, 20*time.Second, "the wakeup of r2 after the NATS restart", func() bool { return len(e.received()) == 2 })
}

func TestRearmExpireCancelRunAndList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.start("a")
	// Re-arm: "not ready, retry at T".
	if _, err := e.client.Register(ctx, wakeups.Request{Run: "r", Step: "poll", Workflow: "wf", When: "500ms", Payload: []byte(`{"x":1}`)}); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(e.t, 10*time.Second, "the first wakeup of r", func() bool { return len(e.received()) == 1 })
	first := e.received()[0]
	if _, err := e.client.Rearm(ctx, first, []byte(`{"x":1}`), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(e.t, 10*time.Second, "the re-armed wakeup of r", func() bool { return len(e.received()) == 2 })
	if got := e.received()[1]; got.Rearms != 1 || got.Run != "r" || got.Step != "poll" {
		t.Fatalf("re-armed wakeup %+v", got)
	}

	// Lists and cancel-all of a run.
	for _, s := range []string{"a", "b", "c"} {
		if _, err := e.client.Register(ctx, wakeups.Request{Run: "order.7", Step: s, Workflow: "orders", When: "1h"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.client.Register(ctx, wakeups.Request{Run: "order.8", Step: "a", Workflow: "other", When: "1h"}); err != nil {
		t.Fatal(err)
	}
	byRun, _ := e.client.List(ctx, wakeups.Filter{Run: "order.7"})
	byWF, _ := e.client.List(ctx, wakeups.Filter{Workflow: "other"})
	if len(byRun) != 3 || len(byWF) != 1 {
		t.Fatalf("list by run %d, by workflow %d", len(byRun), len(byWF))
	}
	if n, err := e.client.CancelRun(ctx, "order.7"); err != nil || n != 3 {
		t.Fatalf("CancelRun = %d, %v", n, err)
	}
	if left, _ := e.client.List(ctx, wakeups.Filter{}); len(left) != 1 {
		t.Fatalf("%d timers left, want order.8's", len(left))
	}

	// Bad input names the field and stores nothing.
	for _, bad := range []struct {
		r     wakeups.Request
		field string
	}{
		{wakeups.Request{Step: "s", Workflow: "wf", When: "1h"}, "run"},
		{wakeups.Request{Run: "r", Step: "s", Workflow: "w.f", When: "1h"}, "workflow"},
		{wakeups.Request{Run: "r", Step: "s", Workflow: "wf", When: "soon"}, "when"},
		{wakeups.Request{Run: "r", Step: "s", Workflow: "wf", When: "48 whours"}, "when"},
		{wakeups.Request{Run: "r", Step: "s", Workflow: "wf", When: "48 whours", Calendar: "nope"}, "calendar"},
		{wakeups.Request{Run: "r", Step: "s", Workflow: "wf", When: "02:00", Zone: "Mars/Base"}, "zone"},
		{wakeups.Request{Run: "r", Step: "s", Workflow: "wf", When: "2001-01-01"}, "when"},
		{wakeups.Request{Run: "r", Step: "s", Workflow: "wf", When: "1h", Payload: []byte("{")}, "payload"},
	} {
		_, err := e.client.Register(ctx, bad.r)
		var fe *kvstore.FieldError
		if !errors.As(err, &fe) || fe.Field != bad.field {
			t.Errorf("%+v: err %v, want field %s", bad.r, err, bad.field)
		}
	}
	if left, _ := e.client.List(ctx, wakeups.Filter{}); len(left) != 1 {
		t.Fatalf("bad requests stored timers: %d", len(left))
	}
}

func TestExpiredTimerIsDroppedAndRecorded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	due := time.Now().Add(200 * time.Millisecond)
	ent, err := e.client.Register(ctx, wakeups.Request{Run: "r", Step: "s", Workflow: "wf", At: due, ExpireAfter: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// The scheduler starts after the timer's expiry (due + 1 s): its
	// clock reads 2 s ahead, past the expiry, when it first looks.
	e.startAhead("a", 2*time.Second)
	testwait.Eventually(e.t, 10*time.Second, "the expired tick of r", func() bool {
		tick, err := e.store.GetTick(ctx, kvstore.WakeupID(ent.Key, due))
		return err == nil && tick.Status == kvstore.TickExpired
	})
	if n := len(e.received()); n != 0 {
		t.Fatalf("%d wakeups for an expired timer", n)
	}
}

func TestWorkingTimeForm(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.store.PutCalendar(ctx, "office", []byte(`{"zone":"UTC","hours":{"mon-sun":["00:00-24:00"]}}`)); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	ent, err := e.client.Register(ctx, wakeups.Request{Run: "r", Step: "s", Workflow: "wf", When: "2 whours", Calendar: "office"})
	if err != nil {
		t.Fatal(err)
	}
	if d := ent.Timer.Due.Sub(before); d < 2*time.Hour || d > 2*time.Hour+time.Minute {
		t.Fatalf("2 whours on a 24/7 calendar is due in %v", d)
	}
}
