package fires_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testlog"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestUnacknowledgedFireIsPublishedAgain: a fire sent while the fire stream
// is gone is not acknowledged; the engine publishes it again until the
// stream is back, and it lands once, with its tick.
func TestUnacknowledgedFireIsPublishedAgain(t *testing.T) {
	js, store := natstest.Start(t).Store(t)
	ctx := context.Background()
	h := testlog.NewSignal("publishing it again")
	e, err := fires.New(fires.Config{Store: store, Logger: h.Logger(), ClaimTTL: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Stop(context.Background()) })
	<-e.Ready()
	fires := store.Layout().FiresStream
	if err := js.DeleteStream(ctx, fires); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Truncate(time.Millisecond)
	if _, err := store.PutSpec(ctx, "once", kvstore.Spec{Workflow: "wf", At: &at}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Seen:
	case <-time.After(15 * time.Second):
		t.Fatal("the fire's failed publish was not retried")
	}
	if err := kvstore.Setup(ctx, js, kvstore.SetupConfig{}); err != nil {
		t.Fatal(err)
	}
	slotID := kvstore.SlotID("once", at)
	waitFor(t, 15*time.Second, func() bool {
		tk, err := store.GetTick(ctx, slotID)
		return err == nil && tk.Status == kvstore.TickDispatched
	})
	s, err := js.Stream(ctx, fires)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := s.GetLastMsgForSubject(ctx, store.Layout().FireSubject("wf"))
	if err != nil || msg.Header.Get(jetstream.MsgIDHeader) != slotID {
		t.Fatalf("fire in the stream: %v (%v), want slot %s", msg, err, slotID)
	}
	if info, err := s.Info(ctx); err != nil || info.State.Msgs != 1 {
		t.Fatalf("stream holds %v messages (%v), want 1", info.State.Msgs, err)
	}
}
