package pipelined_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/pipelined"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// With a window of 8 unacknowledged publishes and a stall of 1 ms, plain
// PublishMsgAsync fails under load; Publish waits for room and every
// message lands.
func TestPublishWaitsForRoom(t *testing.T) {
	srv := natstest.Start(t)
	nc, _ := srv.Connect(t)
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(8))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "P", Subjects: []string{"p.>"}}); err != nil {
		t.Fatal(err)
	}
	const n = 5000
	stalled := 0
	for i := range n {
		m := nats.NewMsg(fmt.Sprintf("p.%d", i))
		if _, err := js.PublishMsgAsync(m, jetstream.WithStallWait(time.Millisecond)); err != nil {
			stalled++ // what a bulk writer used to die of
		}
	}
	if stalled == 0 {
		t.Fatal("no plain publish stalled: the window is not being filled, so this test proves nothing")
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(30 * time.Second):
		t.Fatal("pending publishes never completed")
	}
	for i := range n {
		m := nats.NewMsg(fmt.Sprintf("p.w.%d", i))
		if _, err := pipelined.Publish(ctx, js, m, jetstream.WithStallWait(time.Millisecond)); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(30 * time.Second):
		t.Fatal("pending publishes never completed")
	}
	s, err := js.Stream(ctx, "P")
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter("p.w.>"))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(info.State.Subjects); got != n {
		t.Fatalf("%d of %d waited-for publishes stored", got, n)
	}
}
