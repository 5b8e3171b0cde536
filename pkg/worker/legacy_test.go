package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/worker"
)

// TestLegacyFireSubject: while a fleet is upgraded, schedulers from before
// the per-schedule subjects still publish on sched.fire.<workflow>. A
// worker whose durable consumer was created on that subject by an older
// version keeps every fire: those it had not acked yet are delivered by
// its legacy consumer (which starts at the old consumer's ack floor), new
// ones on either subject form are delivered once each.
func TestLegacyFireSubject(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	// The consumer an older worker created, which acked the first fire
	// and never saw the second.
	old, err := e.js.CreateOrUpdateConsumer(ctx, "SCHED_FIRES", jetstream.ConsumerConfig{
		Durable: "svc-fire-billing", FilterSubject: "sched.fire.billing", AckPolicy: jetstream.AckExplicitPolicy,
		DeliverPolicy: jetstream.DeliverNewPolicy,
	})
	if err != nil {
		t.Fatal(err)
	}
	publishLegacy := func(schedule string, at time.Time) string {
		t.Helper()
		natstest.PublishFire(t, e.js, natstest.Fire{Subject: "sched.fire.billing", Schedule: schedule, Workflow: "billing", At: at})
		return kvstore.SlotID(schedule, at)
	}
	base := time.Now().Truncate(time.Second)
	acked := publishLegacy("a", base)
	msg, err := old.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil || msg.Headers().Get(kvstore.HeaderMsgID) != acked {
		t.Fatalf("the old consumer's first fire: %v, %v", msg, err)
	}
	if err := msg.DoubleAck(ctx); err != nil {
		t.Fatal(err)
	}
	pending := publishLegacy("a", base.Add(time.Second))

	got := make(chan string, 16)
	e.worker(worker.Config{}, func(w *worker.Worker) {
		_ = w.Handle("billing", func(_ context.Context, f worker.Fire) error { got <- f.SlotID; return nil })
	})
	later := publishLegacy("a", base.Add(2*time.Second))
	current := e.publishFireAt("b", "billing", base.Add(3*time.Second))
	want := map[string]bool{pending: true, later: true, current: true}
	for len(want) > 0 {
		id := testwait.Receive(t, 10*time.Second, "the fires not acked yet", got)
		if !want[id] {
			t.Fatalf("fire %s delivered, want one of %v (once each; %s was acked before the upgrade)", id, want, acked)
		}
		delete(want, id)
	}
	info, err := e.js.Consumer(ctx, "SCHED_FIRES", "svc-fire-billing")
	if err != nil || info.CachedInfo().Config.FilterSubject != "sched.fire.billing.>" {
		t.Fatalf("the worker's consumer after the upgrade: %v, %v", info, err)
	}
}
