package worker_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/worker"
)

// TestCancelOtherEndToEnd: a schedule with overlap cancel_other fires
// every second; its first fire's handler blocks until its context ends.
// The next slot's cancel request, from the scheduler, ends it (cause
// ErrCancelRequested); the worker terminates that fire and reports it
// cancelled, which the ledger records. Only the scheduler (the fire
// engine) and pkg/worker take part.
func TestCancelOtherEndToEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	store, err := jsstore.Open(ctx, e.js, kvstore.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	engine, err := fires.New(fires.Config{Store: store, Instance: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer engine.Stop(context.Background())

	first, causes := make(chan string, 1), make(chan error, 1)
	var once sync.Once
	var mu sync.Mutex
	calls := map[string]int{}
	e.worker(worker.Config{}, func(w *worker.Worker) {
		_ = w.Handle("reindex", func(ctx context.Context, f worker.Fire) error {
			mu.Lock()
			calls[f.SlotID]++
			mu.Unlock()
			isFirst := false
			once.Do(func() { isFirst = true })
			if !isFirst {
				return nil
			}
			first <- f.SlotID // the first fire runs until cancelled
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return ctx.Err()
		})
	})
	if _, err := store.PutSpec(ctx, "reindex", kvstore.Spec{Workflow: "reindex", Every: "1s", Overlap: kvstore.OverlapCancelOther}); err != nil {
		t.Fatal(err)
	}
	slot := testwait.Receive(t, 10*time.Second, "the first fire", first)
	if cause := testwait.Receive(t, 10*time.Second, "the cancel request", causes); !errors.Is(cause, worker.ErrCancelRequested) {
		t.Fatalf("cause %v, want ErrCancelRequested", cause)
	}
	for {
		d := e.done(10 * time.Second)
		if d.SlotID != slot {
			continue // the next slots' completions
		}
		if d.Outcome != kvstore.OutcomeCancelled || d.subject != "sched.done.reindex.reindex" {
			t.Fatalf("report %+v, want cancelled on sched.done.reindex.reindex", d)
		}
		break
	}
	err = testwait.Until(10*time.Second, "the ledger's tick of "+slot+" cancelled", func() error {
		tick, err := store.SlotEntry(ctx, slot)
		if err == nil && tick.Status != kvstore.TickCancelled {
			err = fmt.Errorf("tick %+v", tick)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// The cancelled fire is not delivered again.
	if err := store.DeleteSpec(ctx, "reindex"); err != nil {
		t.Fatal(err)
	}
	e.settled("svc-fire-reindex", 10*time.Second)
	mu.Lock()
	defer mu.Unlock()
	if calls[slot] != 1 {
		t.Fatalf("%s was handled %d times, want once", slot, calls[slot])
	}
}
