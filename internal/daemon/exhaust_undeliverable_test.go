package daemon_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/faulttest"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestUndeliverable: a foreign worker that never acks. Its consumer
// (max_deliver 3) delivers each fire three times and gives up; the server
// says so in a MAX_DELIVERIES advisory, and one scheduler of the two
// reports each: an undeliverable event naming the schedule, the slot and
// the consumer, the counters, and one warning however many there are.
// No scheduler publishes such a fire again.
func TestUndeliverable(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a := startRig(t, srv.URL(), natsconn.Options{})
	b := startRig(t, srv.URL(), natsconn.Options{})
	ctx := context.Background()
	cons, err := a.js.CreateOrUpdateConsumer(ctx, "SCHED_FIRES", jetstream.ConsumerConfig{Durable: "py-workers",
		FilterSubject: "sched.fire.wf.never", AckPolicy: jetstream.AckExplicitPolicy, MaxDeliver: 3, AckWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cons.Consume(func(jetstream.Msg) {}) // takes every delivery, acks none
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.Stop)
	a.put("never", kvstore.Spec{Workflow: "wf", Every: "1s"})

	ev := a.waitEvent(kvstore.EventUndeliverable, 15*time.Second)
	if ev.Schedule != "never" || ev.Slot.IsZero() || ev.SlotID != kvstore.SlotID("never", ev.Slot) || ev.Stream != "SCHED_FIRES" ||
		ev.Seq == 0 || ev.Count != 3 || !strings.Contains(ev.Reason, "py-workers") || ev.Workflow != "wf" {
		t.Errorf("undeliverable event %+v: want the schedule, its slot, the consumer and 3 deliveries", ev)
	}
	testwait.Eventually(t, 15*time.Second, "three undeliverable fires", func() bool {
		return len(a.eventsOf(kvstore.EventUndeliverable)) >= 3
	})
	events := a.eventsOf(kvstore.EventUndeliverable)
	seqs := map[uint64]int{}
	for _, ev := range events {
		seqs[ev.Seq]++
	}
	// A scheduler that handled none has no series of the consumer (-1).
	counted := max(0, a.metric("jetsched_undeliverable_total", `stream="fires"`, `consumer="py-workers"`)) +
		max(0, b.metric("jetsched_undeliverable_total", `stream="fires"`, `consumer="py-workers"`))
	kinds := a.metric("jetsched_events_total", `source="schedules"`, `kind="undeliverable"`) +
		b.metric("jetsched_events_total", `source="schedules"`, `kind="undeliverable"`)
	warns := a.warns("a consumer gave up on a fire") + b.warns("a consumer gave up on a fire")
	fired, dup, lost, _ := a.slots("never", time.Second)
	faulttest.Summarize(t, fmt.Sprintf("FAULT exhaust-undeliverable: fired=%d duplicates=%d lost=%d events=%d counted=%.0f warns=%d",
		fired, dup, lost, len(events), counted, warns))
	for seq, n := range seqs {
		if n != 1 {
			t.Errorf("fire seq %d reported %d times by the fleet; want once", seq, n)
		}
	}
	if counted < 3 || kinds < 3 {
		t.Errorf("jetsched_undeliverable_total %v, jetsched_events_total{kind=undeliverable} %v for %d events", counted, kinds, len(events))
	}
	if warns < 1 || warns > 2 {
		t.Errorf("%d warnings for %d undeliverable fires of one consumer; want one per scheduler at most", warns, len(events))
	}
	if dup != 0 || lost != 0 {
		t.Errorf("%d duplicates, %d lost slots among %d fires: an undeliverable fire is never published again", dup, lost, fired)
	}
}
