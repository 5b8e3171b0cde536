package timers_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// nextEvent waits for the next event on sub.
func nextEvent(t *testing.T, sub *nats.Subscription, what string) kvstore.Event {
	t.Helper()
	m, err := sub.NextMsg(20 * time.Second)
	if err != nil {
		t.Fatalf("no %s: %v", what, err)
	}
	var ev kvstore.Event
	if err := json.Unmarshal(m.Data, &ev); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return ev
}

// A wakeup the stream refuses for good (larger than its max message size)
// is recorded as failed with the reason and dropped, instead of being
// retried and taken over for ever.
func TestUnpublishableWakeupIsRecordedFailed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	s, err := e.js.Stream(ctx, "SCHED_WAKEUPS")
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	cfg.MaxMsgSize = 4096
	if _, err := e.js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	failed, err := e.js.Conn().SubscribeSync("sched.event.failed.>")
	if err != nil {
		t.Fatal(err)
	}
	e.start("i1")
	big := json.RawMessage(`"` + strings.Repeat("x", 8000) + `"`)
	ent, err := e.client.Register(ctx, wakeups.Request{Run: "big", Step: "s", Workflow: "wf", When: "200ms", Payload: big})
	if err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, failed, "failed event for an unpublishable wakeup")
	if ev.Schedule != ent.Key || !strings.Contains(ev.Reason, "maximum") {
		t.Fatalf("failed event %+v, want %s with the server's reason", ev, ent.Key)
	}
	tick, err := e.store.GetTick(ctx, kvstore.WakeupID(ent.Key, ent.Timer.Due))
	if err != nil || tick.Status != kvstore.TickFailed {
		t.Fatalf("tick %+v, %v; want failed", tick, err)
	}
	kv, err := e.js.KeyValue(ctx, "sched_wakeups")
	if err != nil {
		t.Fatal(err)
	}
	w, err := kv.Watch(ctx, ent.Key)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Stop() }()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case u := <-w.Updates():
			if u != nil && u.Operation() == jetstream.KeyValueDelete {
				return // dropped
			}
		case <-timeout:
			t.Fatal("the unpublishable timer is still pending")
		}
	}
}

// A timer record that does not decode (written straight into the bucket)
// is reported with an invalid event, not silently ignored.
func TestUndecodableTimerIsReported(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	invalid, err := e.js.Conn().SubscribeSync("sched.event.invalid.>")
	if err != nil {
		t.Fatal(err)
	}
	e.start("i1")
	kv, err := e.js.KeyValue(ctx, "sched_wakeups")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "run1.step1", []byte(`{"due": "not a time"`)); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, invalid, "invalid event for an undecodable timer")
	if ev.Schedule != "run1.step1" || ev.Reason == "" {
		t.Fatalf("invalid event %+v", ev)
	}
}
