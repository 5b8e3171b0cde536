package fires_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestUnacknowledgedFireIsPublishedAgain: a fire sent while the fire stream
// is gone is not acknowledged, and one acknowledged by another stream that
// took the fire subjects meanwhile is not taken as published (a fire
// carries no Nats-Expected-Stream: the acknowledgement's stream is
// checked); the engine publishes it again until the fire stream is back,
// and it lands there once, with its tick. Per slot and in a window.
func TestUnacknowledgedFireIsPublishedAgain(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stray   bool // another stream takes the fire subjects
		windows bool
	}{
		{"stream gone", false, false},
		{"another stream", true, false},
		{"another stream, in a window", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			js, store := natstest.Start(t).Store(t)
			ctx := context.Background()
			steps := make(chan fires.Step, 16)
			cfg := fires.Config{Store: store, ClaimTTL: 20 * time.Second, StepHook: stepsTo(steps)}
			if tc.windows {
				cfg.WindowBusy = -1
			}
			e, err := fires.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = e.Stop(context.Background()) })
			testwait.Done(t, 10*time.Second, "the engine's index", e.Ready())
			stream := store.Layout().FiresStream
			if err := js.DeleteStream(ctx, stream); err != nil {
				t.Fatal(err)
			}
			if tc.stray {
				if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "STRAY", Subjects: []string{store.Layout().Prefix + ".fire.>"}}); err != nil {
					t.Fatal(err)
				}
			}
			at := time.Now().UTC().Truncate(time.Millisecond)
			if _, err := store.PutSpec(ctx, "once", kvstore.Spec{Workflow: "wf", At: &at}); err != nil {
				t.Fatal(err)
			}
			waitStep(t, 15*time.Second, steps, fires.StepRepublish)
			if tc.stray {
				info, err := js.Stream(ctx, "STRAY")
				if err != nil {
					t.Fatal(err)
				}
				if st := info.CachedInfo().State; st.Msgs != 1 {
					t.Fatalf("the other stream holds %d messages: want the first attempt's fire", st.Msgs)
				}
				if err := js.DeleteStream(ctx, "STRAY"); err != nil {
					t.Fatal(err)
				}
			}
			if err := jsstore.Setup(ctx, js, jsstore.SetupConfig{}); err != nil {
				t.Fatal(err)
			}
			slotID := kvstore.SlotID("once", at)
			testwait.Eventually(t, 15*time.Second, "the slot's tick dispatched", func() bool {
				tk, err := store.SlotEntry(ctx, slotID)
				return err == nil && tk.Status == kvstore.TickDispatched
			})
			s, err := js.Stream(ctx, stream)
			if err != nil {
				t.Fatal(err)
			}
			msg, err := s.GetLastMsgForSubject(ctx, store.Layout().FireSubject("wf", "once"))
			if err != nil || msg.Header.Get(jetstream.MsgIDHeader) != slotID {
				t.Fatalf("fire in the stream: %v (%v), want slot %s", msg, err, slotID)
			}
			if info, err := s.Info(ctx); err != nil || info.State.Msgs != 1 {
				t.Fatalf("stream holds %v messages (%v), want 1", info.State.Msgs, err)
			}
		})
	}
}
