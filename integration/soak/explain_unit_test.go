package soak

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// explainFires finds every message of the slots asked for, the two of a
// duplicate included, and tells who dispatched each and when.
func TestExplainFires(t *testing.T) {
	srv := natstest.Start(t)
	js, _ := srv.Store(t)
	ctx := context.Background()
	slot := time.Date(2026, 12, 5, 0, 35, 34, 0, time.UTC)
	publish := func(id, instance string, at time.Time) {
		t.Helper()
		m := nats.NewMsg("sched.fire.wf")
		m.Header.Set(kvstore.HeaderScheduleID, id)
		m.Header.Set(kvstore.HeaderMsgID, kvstore.SlotID(id, slot)+"."+instance) // two messages: no dedupe
		m.Header.Set(kvstore.HeaderInstance, instance)
		m.Header.Set(kvstore.HeaderDispatchedAt, at.Format(time.RFC3339Nano))
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	publish("a", "s1", slot.Add(59*time.Second))
	publish("b", "s2", slot)
	publish("a", "s3", slot.Add(time.Second))
	lines, err := explainFires(ctx, js, []string{kvstore.SlotID("a", slot) + ".s1", kvstore.SlotID("a", slot) + ".s3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || !strings.Contains(lines[0], "seq 1 ") || !strings.Contains(lines[0], "instance s1 dispatched 2026-12-05T00:36:33Z") ||
		!strings.Contains(lines[1], "seq 3 ") || !strings.Contains(lines[1], "instance s3") {
		t.Errorf("explained:\n%s", strings.Join(lines, "\n"))
	}
}
