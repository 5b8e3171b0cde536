package worker_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/worker"
)

// TestHandlersRunConcurrently: MaxWorkers handlers of one workflow run
// at once; a slow fire does not hold up the others.
func TestHandlersRunConcurrently(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 4
	started, release := make(chan string, n), make(chan struct{})
	e.worker(worker.Config{MaxWorkers: n}, func(w *worker.Worker) {
		_ = w.Handle("batch", func(ctx context.Context, f worker.Fire) error {
			started <- f.SlotID
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		})
	})
	for i := range n {
		e.publishFireAt("s", "batch", time.Now().Add(time.Duration(i)*time.Millisecond))
	}
	// All n run at the same time: none returns before the last started.
	for i := range n {
		testwait.Receive(t, 5*time.Second, fmt.Sprintf("handler %d of %d running at once", i+1, n), started)
	}
	close(release)
	for range n {
		e.done(5 * time.Second)
	}
}

// TestMaxWorkersBoundsHandlers: no more than MaxWorkers handlers of a
// workflow run at once, and WithMaxWorkers overrides it per workflow.
func TestMaxWorkersBoundsHandlers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var running, most atomic.Int32
	e.worker(worker.Config{MaxWorkers: 8}, func(w *worker.Worker) {
		_ = w.Handle("narrow", func(context.Context, worker.Fire) error {
			n := running.Add(1)
			defer running.Add(-1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(20 * time.Millisecond) // models work, so that deliveries overlap
			return nil
		}, worker.WithMaxWorkers(2))
	})
	for i := range 10 {
		e.publishFireAt("s", "narrow", time.Now().Add(time.Duration(i)*time.Millisecond))
	}
	for range 10 {
		e.done(10 * time.Second)
	}
	if m := most.Load(); m > 2 || m < 1 {
		t.Fatalf("%d handlers ran at once, want at most 2 (WithMaxWorkers)", m)
	}
}

// TestNoMessageAgesInABuffer: with every worker busy, the next fire stays
// in the stream rather than in a client buffer where it would outlive
// AckWait and be redelivered; and a handler running 3x AckWait is
// delivered exactly once, kept alive by in-progress pings.
func TestNoMessageAgesInABuffer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	calls := map[string][]int{} // slot -> delivery numbers seen
	first := make(chan struct{})
	e.worker(worker.Config{AckWait: time.Second, MaxWorkers: 1}, func(w *worker.Worker) {
		_ = w.Handle("slow", func(_ context.Context, f worker.Fire) error {
			mu.Lock()
			calls[f.SlotID] = append(calls[f.SlotID], f.Delivery)
			n := len(calls)
			mu.Unlock()
			if n == 1 {
				close(first)
				time.Sleep(3 * time.Second) // models a handler running 3x AckWait
			}
			return nil
		})
	})
	a := e.publishFire("a", "slow")
	testwait.Done(t, 5*time.Second, "the first handler", first)
	b := e.publishFire("b", "slow") // waits while a's handler runs
	e.done(15 * time.Second)
	e.done(15 * time.Second)
	info := e.settled("svc-fire-slow", 5*time.Second)
	mu.Lock()
	defer mu.Unlock()
	if len(calls[a]) != 1 || len(calls[b]) != 1 || calls[b][0] != 1 {
		t.Fatalf("deliveries per slot: a %v, b %v; want one each, the first", calls[a], calls[b])
	}
	if info.Delivered.Consumer != 2 {
		t.Fatalf("the server delivered %d times, want 2 (no redelivery)", info.Delivered.Consumer)
	}
}
