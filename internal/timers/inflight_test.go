package timers_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/internal/timers"
	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestUnacknowledgedWakeupIsPublishedAgain: a wakeup sent while the wakeup
// stream is gone is not acknowledged; the engine publishes it again until
// the stream is back, then records it and deletes the timer. The stream
// holds it once.
func TestUnacknowledgedWakeupIsPublishedAgain(t *testing.T) {
	t.Parallel()
	js, store := natstest.Start(t).Store(t)
	ctx := context.Background()
	fe, err := fires.New(fires.Config{Store: store, Instance: "one"})
	if err != nil {
		t.Fatal(err)
	}
	if err := fe.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer fe.Stop(context.Background())
	republished := make(chan struct{}, 1)
	we, err := timers.New(timers.Config{Store: store, Owner: fe, Instance: "one", ClaimTTL: 20 * time.Second,
		StepHook: func(s timers.Step) {
			if s == timers.StepRepublish {
				select {
				case republished <- struct{}{}:
				default:
				}
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := we.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer we.Stop(context.Background())
	stream := store.Layout().WakeupsStream
	if err := js.DeleteStream(ctx, stream); err != nil {
		t.Fatal(err)
	}
	ent, err := wakeups.Client{Store: store}.Register(ctx, wakeups.Request{Run: "r", Step: "s", Workflow: "wf", When: "1ms"})
	if err != nil {
		t.Fatal(err)
	}
	testwait.Done(t, 15*time.Second, "the wakeup's failed publish retried", republished)
	if err := jsstore.Setup(ctx, js, jsstore.SetupConfig{}); err != nil {
		t.Fatal(err)
	}
	id := kvstore.WakeupID(ent.Key, ent.Timer.Due)
	err = testwait.Until(15*time.Second, "the timer fired and removed after the stream came back", func() error {
		_, terr := store.GetTimer(ctx, ent.Key)
		tk, kerr := store.GetTick(ctx, id)
		if errors.Is(terr, kvstore.ErrNotFound) && kerr == nil && tk.Status == kvstore.TickFired {
			return nil
		}
		return fmt.Errorf("timer err %v, tick %+v err %v", terr, tk, kerr)
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := s.Info(ctx); err != nil || info.State.Msgs != 1 {
		t.Fatalf("stream holds %v wakeups (%v), want 1", info.State.Msgs, err)
	}
}
