package fire_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/fire"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// signalHandler is a slog handler that reports each record whose message
// contains match.
type signalHandler struct {
	match string
	seen  chan struct{}
}

func (h signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h signalHandler) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.match) {
		select {
		case h.seen <- struct{}{}:
		default:
		}
	}
	return nil
}
func (h signalHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h signalHandler) WithGroup(string) slog.Handler      { return h }

// TestUnacknowledgedFireIsPublishedAgain: a fire sent while the fire stream
// is gone is not acknowledged; the engine publishes it again until the
// stream is back, and it lands once, with its tick.
func TestUnacknowledgedFireIsPublishedAgain(t *testing.T) {
	js, store := natstest.Start(t).Store(t)
	ctx := context.Background()
	h := signalHandler{match: "publishing it again", seen: make(chan struct{}, 1)}
	e, err := fire.New(fire.Config{Store: store, Logger: slog.New(h), ClaimTTL: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Stop)
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
	case <-h.seen:
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
