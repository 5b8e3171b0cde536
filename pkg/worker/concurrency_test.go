package worker_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
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

// TestLargeFiresOverASlowLink: a handler with many places fetches fires
// whose inputs are at the size limit over a link slower than the server
// without its connection being closed as a slow consumer: a fetch asks
// for a byte limit as well as a count. Asking for its 128 places' worth,
// 128 fires of 256 KiB published at once (32 MiB, four times the test
// server's limit of pending bytes) were all on their way to it together.
// The same on the legacy subject (sched.fire.<workflow>, schedulers from
// before per-schedule subjects, during an upgrade), whose consumer asked
// without waiting, by count alone.
func TestLargeFiresOverASlowLink(t *testing.T) {
	t.Parallel()
	for _, legacy := range []bool{false, true} {
		t.Run(map[bool]string{false: "per-schedule subjects", true: "legacy subject"}[legacy], func(t *testing.T) {
			t.Parallel()
			largeFiresOverASlowLink(t, legacy)
		})
	}
}

func largeFiresOverASlowLink(t *testing.T, legacy bool) {
	srv := natstest.StartTight(t)
	e := newEnvOn(t, srv)
	const n = 128
	input := []byte(fmt.Sprintf(`{"pad":%q}`, strings.Repeat("x", kvstore.MaxInputBytes-16)))
	nc, js := natstest.Dial(t, natstest.SlowLink(t, srv.URL(), 8<<10)) // 8 KiB per millisecond at most
	e.worker(worker.Config{JetStream: js, MaxWorkers: 128, MaxWorkersTotal: 128}, func(w *worker.Worker) {
		_ = w.Handle("big", func(_ context.Context, f worker.Fire) error {
			if len(f.Input) != len(input) {
				return fmt.Errorf("input of %d bytes, want %d", len(f.Input), len(input))
			}
			return nil
		})
	})
	at := time.Now()
	for i := range n { // as fast as the server takes them
		m, id := fireMsg(fmt.Sprintf("s%03d", i), "big", at, input)
		if legacy {
			m.Subject = "sched.fire.big"
		}
		if _, err := e.js.PublishMsgAsync(m, jetstream.WithMsgID(id)); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-e.js.PublishAsyncComplete():
	case <-time.After(time.Minute):
		t.Fatal("the fires not published within a minute")
	}
	for range n {
		if d := e.done(time.Minute); d.Outcome != "completed" {
			t.Fatalf("fire %s: %s %s", d.SlotID, d.Outcome, d.Error)
		}
	}
	srv.KeptUp(t, nc, "the worker")
}
