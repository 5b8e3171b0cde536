package timers_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// runs creates the KV bucket the workflow side keeps each run's activity
// in, with the given values.
func (e *env) runs(values map[string]string) jetstream.KeyValue {
	e.t.Helper()
	ctx := context.Background()
	kv, err := e.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "runs"})
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range values {
		if _, err := kv.PutString(ctx, k, v); err != nil {
			e.t.Fatal(err)
		}
	}
	return kv
}

// staleEvents collects the events on sched.event.stale.>.
func (e *env) staleEvents() func() map[string]kvstore.Event { return e.events("sched.event.stale.>") }

// events collects the events on subject (a wildcard), by subject.
func (e *env) events(subject string) func() map[string]kvstore.Event {
	e.t.Helper()
	nc, _ := e.srv.Connect(e.t)
	var mu sync.Mutex
	got := map[string]kvstore.Event{}
	sub, err := nc.Subscribe(subject, func(m *nats.Msg) {
		var ev kvstore.Event
		if err := json.Unmarshal(m.Data, &ev); err != nil {
			e.t.Errorf("event %s: %v", m.Subject, err)
			return
		}
		mu.Lock()
		got[m.Subject] = ev
		mu.Unlock()
	})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = sub.Unsubscribe() })
	return func() map[string]kvstore.Event {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]kvstore.Event{}
		for k, v := range got {
			out[k] = v
		}
		return out
	}
}

// tickOf waits for the ledger entry of a timer's firing and returns it.
func (e *env) tickOf(key string, due time.Time) kvstore.Tick {
	e.t.Helper()
	var tick kvstore.Tick
	testwait.Eventually(e.t, 15*time.Second, "the tick of timer "+key+"", func() bool {
		var err error
		tick, err = e.store.GetTick(context.Background(), kvstore.WakeupID(key, due))
		return err == nil
	})
	return tick
}

// published counts the messages in SCHED_WAKEUPS with Nats-Msg-Id id, read
// from the stream itself (not from a consumer that may lag).
func (e *env) published(id string) int {
	e.t.Helper()
	ctx := context.Background()
	s, err := e.js.Stream(ctx, "SCHED_WAKEUPS")
	if err != nil {
		e.t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	n := 0
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			e.t.Fatal(err)
		}
		if m.Header.Get(nats.MsgIdHdr) == id {
			n++
		}
	}
	return n
}

// TestConditionCheckedAtFireTime: timers whose condition key changed
// between registration and due time (another value, deleted, its bucket
// deleted) are dropped as stale, never published, with a ledger entry
// naming what was found and an event on sched.event.stale.<run>; the one
// whose key still holds its value fires, with the condition key in its
// headers.
func TestConditionCheckedAtFireTime(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	events := e.staleEvents()
	kv := e.runs(map[string]string{"order-1": "awaiting", "order-2": "awaiting", "order-3": "awaiting"})
	other, err := e.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "gone"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.PutString(ctx, "order-4", "awaiting"); err != nil {
		t.Fatal(err)
	}
	due := time.Now().Add(time.Second).Truncate(time.Millisecond)
	reg := func(run, ckey string) string {
		ent, err := e.client.Register(ctx, wakeups.Request{Run: run, Step: "escalate", Workflow: "approvals", At: due,
			Condition: "awaiting", ConditionKey: ckey, Payload: []byte(`{"order":1}`)})
		if err != nil {
			t.Fatal(err)
		}
		if ent.Timer.ConditionKey != ckey {
			t.Fatalf("record condition_key %q", ent.Timer.ConditionKey)
		}
		return ent.Key
	}
	changed, kept, deleted := reg("order-1", "runs/order-1"), reg("order-2", "runs/order-2"), reg("order-3", "runs/order-3")
	bucketGone := reg("order-4", "gone/order-4")
	if _, err := kv.PutString(ctx, "order-1", "approved"); err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(ctx, "order-3"); err != nil {
		t.Fatal(err)
	}
	if err := e.js.DeleteKeyValue(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	e.start("a")

	if tick := e.tickOf(kept, due); tick.Status != kvstore.TickFired {
		t.Fatalf("kept: %+v", tick)
	}
	// The reason names the key's revision and size, never its value (the
	// ledger and the events would carry it to whoever reads them).
	for _, c := range []struct {
		key, run string
		reason   *regexp.Regexp
	}{
		{changed, "order-1", regexp.MustCompile(`^condition runs/order-1 holds another value than "awaiting" \(revision \d+, 8 bytes\)$`)},
		{deleted, "order-3", regexp.MustCompile(`^` + regexp.QuoteMeta(`condition runs/order-3 has no value (want "awaiting")`) + `$`)},
		{bucketGone, "order-4", regexp.MustCompile(`^` + regexp.QuoteMeta(`condition gone/order-4: bucket gone does not exist (want "awaiting")`) + `$`)},
	} {
		tick := e.tickOf(c.key, due)
		if tick.Status != kvstore.TickStale || !c.reason.MatchString(tick.Reason) {
			t.Errorf("%s: tick %s %q, want stale %s", c.run, tick.Status, tick.Reason, c.reason)
		}
		subject := "sched.event.stale." + c.run
		testwait.Eventually(e.t, 5*time.Second, "the stale event on "+subject+"", func() bool { _, ok := events()[subject]; return ok })
		if ev := events()[subject]; ev.Run != c.run || ev.Step != "escalate" || !c.reason.MatchString(ev.Reason) || ev.Kind != kvstore.EventStale {
			t.Errorf("event on %s: %+v", subject, ev)
		}
		if n := e.published(kvstore.WakeupID(c.key, due)); n != 0 {
			t.Errorf("%s: stale timer published %d times", c.run, n)
		}
	}
	if n := e.published(kvstore.WakeupID(kept, due)); n != 1 {
		t.Fatalf("kept timer published %d times", n)
	}
	testwait.Eventually(e.t, 10*time.Second, "one wakeup", func() bool { return len(e.received()) == 1 })
	if m := e.received()[0]; m.Run != "order-2" || m.ConditionKey != "runs/order-2" || m.Condition != "awaiting" {
		t.Fatalf("wakeup %+v", m)
	}
	testwait.Eventually(e.t, 5*time.Second, "no timer left", func() bool {
		left, err := e.client.List(ctx, wakeups.Filter{})
		return err == nil && len(left) == 0
	})
}

// TestConditionChangedDuringClaim: the workflow side changes each run's
// key the moment it sees the scheduler claim its timer (the watch shows
// the claim), racing the scheduler's read. Each timer ends with exactly
// one outcome, recorded: fired and published once, or stale and never
// published.
func TestConditionChangedDuringClaim(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	const n = 40
	values := map[string]string{}
	for i := range n {
		values[runName(i)] = "awaiting"
	}
	kv := e.runs(values)
	due := time.Now().Add(1500 * time.Millisecond).Truncate(time.Millisecond)
	keys := make([]string, n)
	for i := range n {
		ent, err := e.client.Register(ctx, wakeups.Request{Run: runName(i), Step: "s", Workflow: "wf", At: due,
			Condition: "awaiting", ConditionKey: "runs/" + runName(i)})
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = ent.Key
	}
	w, err := e.store.WatchTimers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Stop() }()
	flipped := make(chan struct{})
	go func() {
		defer close(flipped)
		seen := map[string]bool{}
		for u := range w.Updates() {
			if u == nil || u.Operation() != jetstream.KeyValuePut {
				continue
			}
			tm, err := kvstore.DecodeTimer(u.Value())
			if err != nil || tm.Claim == nil || seen[tm.Run] {
				continue
			}
			seen[tm.Run] = true
			_, _ = kv.PutString(ctx, tm.Run, "moved on")
			if len(seen) == n {
				return
			}
		}
	}()
	e.start("a")
	select {
	case <-flipped:
	case <-time.After(20 * time.Second):
		t.Fatal("not every timer was claimed")
	}
	counts := map[kvstore.TickStatus]int{}
	for _, k := range keys {
		tick := e.tickOf(k, due)
		counts[tick.Status]++
		pubs := e.published(kvstore.WakeupID(k, due))
		switch {
		case tick.Status == kvstore.TickFired && pubs == 1:
		case tick.Status == kvstore.TickStale && pubs == 0 && strings.Contains(tick.Reason, `holds another value than "awaiting"`):
		default:
			t.Errorf("%s: ledger %s (%s), published %d times", k, tick.Status, tick.Reason, pubs)
		}
	}
	t.Logf("of %d timers whose key changed as they were claimed: %d fired, %d stale", n, counts[kvstore.TickFired], counts[kvstore.TickStale])
}

func runName(i int) string { return "run-" + string(rune('a'+i%26)) + string(rune('a'+i/26)) }

// TestStaleOnTakeover: a timer claimed by an instance that died; its
// condition changed before the claim expired. If the dead instance had
// published the wakeup, the takeover records it fired (the run was woken);
// if not, stale, and nothing is published.
func TestStaleOnTakeover(t *testing.T) {
	t.Parallel()
	for _, published := range []bool{false, true} {
		name := "unpublished"
		if published {
			name = "published"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			kv := e.runs(map[string]string{"r": "awaiting"})
			now := time.Now()
			due := now.Add(-time.Second).Truncate(time.Millisecond)
			key := kvstore.TimerKey("r", "s")
			id := kvstore.WakeupID(key, due)
			rec := kvstore.Timer{Run: "r", Step: "s", Workflow: "wf", Due: due, Condition: "awaiting", ConditionKey: "runs/r", Created: now,
				Claim: &kvstore.Claim{Slot: due, Token: "dead", Owner: "ghost", At: now.Add(-time.Second), Expires: now.Add(time.Second)}}
			if _, err := e.store.PutTimer(ctx, key, rec); err != nil {
				t.Fatal(err)
			}
			if published {
				m := nats.NewMsg("sched.wakeup.wf")
				m.Header.Set(nats.MsgIdHdr, id)
				m.Header.Set(kvstore.HeaderRun, "r")
				m.Header.Set(kvstore.HeaderStep, "s")
				m.Header.Set(kvstore.HeaderDueAt, due.Format(time.RFC3339Nano))
				if _, err := e.js.PublishMsg(ctx, m); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := kv.PutString(ctx, "r", "approved"); err != nil {
				t.Fatal(err)
			}
			e.start("a")
			tick := e.tickOf(key, due)
			want := kvstore.TickStale
			if published {
				want = kvstore.TickFired
			}
			if tick.Status != want {
				t.Fatalf("tick %+v, want %s", tick, want)
			}
			if published && (tick.Reason != "takeover" || !tick.Duplicate || tick.Seq == 0) {
				t.Fatalf("takeover of a published timer: tick %+v", tick)
			}
			if n, wantN := e.published(id), map[bool]int{false: 0, true: 1}[published]; n != wantN {
				t.Fatalf("published %d times, want %d", n, wantN)
			}
			testwait.Eventually(e.t, 5*time.Second, "the timer removed", func() bool {
				_, err := e.store.GetTimer(ctx, key)
				return errors.Is(err, kvstore.ErrNotFound)
			})
		})
	}
}

// TestConditionKeyRegistration: a condition key needs its value and an
// existing bucket; errors name the field and store nothing.
func TestConditionKeyRegistration(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.runs(nil)
	for _, bad := range []struct {
		r      wakeups.Request
		field  string
		reason string
	}{
		{wakeups.Request{ConditionKey: "missing/order-1", Condition: "awaiting"}, "condition_key", `no KV bucket "missing"`},
		{wakeups.Request{ConditionKey: "runs/order-1"}, "condition", "needs the value it must hold"},
		{wakeups.Request{ConditionKey: "runs", Condition: "x"}, "condition_key", "want BUCKET/KEY"},
		{wakeups.Request{ConditionKey: "runs/a b", Condition: "x"}, "condition_key", `key "a b"`},
		{wakeups.Request{ConditionKey: "ru.ns/a", Condition: "x"}, "condition_key", `bucket "ru.ns"`},
		{wakeups.Request{ConditionKey: "runs/.a", Condition: "x"}, "condition_key", `key ".a"`},
	} {
		r := bad.r
		r.Run, r.Step, r.Workflow, r.When = "r", "s", "wf", "1h"
		_, err := e.client.Register(ctx, r)
		var fe *kvstore.FieldError
		if !errors.As(err, &fe) || fe.Field != bad.field || !strings.Contains(err.Error(), bad.reason) {
			t.Errorf("%+v: err %v, want field %s saying %q", bad.r, err, bad.field, bad.reason)
		}
	}
	if left, _ := e.client.List(ctx, wakeups.Filter{}); len(left) != 0 {
		t.Fatalf("bad requests stored %d timers", len(left))
	}
	if _, err := e.client.Register(ctx, wakeups.Request{Run: "r", Step: "s", Workflow: "wf", When: "1h",
		Condition: "awaiting", ConditionKey: "runs/orders/r=1"}); err != nil {
		t.Fatalf("a key with '/' and '=': %v", err)
	}
}
