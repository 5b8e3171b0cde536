package worker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/worker"
)

// TestStoppingCancelsHandlersAndHandsBack: when Start's context ends, or
// on StopAndCancel, a running handler's context ends (cause: the
// context's, or ErrStopped); the fire it gives up on is nak'ed, not
// failed, and the next worker gets it again (half a second later:
// handBackDelay), well before the consumer's AckWait.
func TestStoppingCancelsHandlersAndHandsBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		stop      func(w *worker.Worker, cancelStart context.CancelFunc) error
		wantCause error
	}{
		{"start context ends", func(w *worker.Worker, cancelStart context.CancelFunc) error {
			cancelStart()
			return w.Stop(context.Background())
		}, context.Canceled},
		{"StopAndCancel", func(w *worker.Worker, _ context.CancelFunc) error {
			return w.StopAndCancel(context.Background())
		}, worker.ErrStopped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			started, causes, deliveries := make(chan struct{}, 1), make(chan error, 1), make(chan int, 4)
			handler := func(ctx context.Context, f worker.Fire) error {
				deliveries <- f.Delivery
				if f.Delivery > 1 {
					return nil
				}
				started <- struct{}{}
				<-ctx.Done()
				causes <- context.Cause(ctx)
				return ctx.Err()
			}
			w, err := worker.New(worker.Config{JetStream: e.js, Name: "svc"})
			if err != nil {
				t.Fatal(err)
			}
			_ = w.Handle("jobs", handler)
			startCtx, cancelStart := context.WithCancel(context.Background())
			defer cancelStart()
			if err := w.Start(startCtx); err != nil {
				t.Fatal(err)
			}
			id := e.publishFire("s", "jobs")
			testwait.Receive(t, 5*time.Second, "the handler", started)
			if err := tc.stop(w, cancelStart); err != nil {
				t.Fatalf("stop: %v", err)
			}
			if cause := testwait.Receive(t, time.Second, "the handler's end", causes); !errors.Is(cause, tc.wantCause) {
				t.Fatalf("cause %v, want %v", cause, tc.wantCause)
			}
			// The next worker of the service gets the fire again.
			e.worker(worker.Config{}, func(w *worker.Worker) { _ = w.Handle("jobs", handler) })
			if d := e.done(10 * time.Second); d.SlotID != id || d.Outcome != kvstore.OutcomeCompleted {
				t.Fatalf("first report %+v, want completed (a stop is not a failure)", d)
			}
			if n := []int{testwait.Receive(t, 5*time.Second, "delivery 1", deliveries), testwait.Receive(t, 5*time.Second, "delivery 2", deliveries)}; n[0] != 1 || n[1] != 2 {
				t.Fatalf("deliveries %v, want 1 then 2", n)
			}
		})
	}
}

// TestStopWaitsForHandlers: Stop stops fetching and waits for the running
// handler; when its context ends first it returns ctx.Err() and a later
// Stop waits again; a stopped worker starts again.
func TestStopWaitsForHandlers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	started, release := make(chan string, 4), make(chan struct{})
	w := e.worker(worker.Config{}, func(w *worker.Worker) {
		_ = w.Handle("jobs", func(_ context.Context, f worker.Fire) error {
			started <- f.SlotID
			if f.ScheduleID == "held" {
				<-release // ignores its context
			}
			return nil
		})
	})
	if err := w.Stop(context.Background()); err != nil { // nothing runs: returns at once
		t.Fatal(err)
	}
	if err := w.Start(context.Background()); err != nil {
		t.Fatalf("start after stop: %v", err)
	}
	if err := w.Start(context.Background()); !errors.Is(err, worker.ErrStarted) {
		t.Fatalf("second Start: %v, want ErrStarted", err)
	}
	if err := w.Handle("more", func(context.Context, worker.Fire) error { return nil }); !errors.Is(err, worker.ErrStarted) {
		t.Fatalf("Handle while running: %v, want ErrStarted", err)
	}
	held := e.publishFire("held", "jobs")
	testwait.Receive(t, 5*time.Second, "the held handler", started)

	for _, stop := range []func(context.Context) error{w.Stop, w.StopAndCancel} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		err := stop(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("stop with a handler running past its context: %v, want DeadlineExceeded", err)
		}
	}
	if err := w.Start(context.Background()); !errors.Is(err, worker.ErrStopping) {
		t.Fatalf("Start while stopping: %v, want ErrStopping", err)
	}
	close(release)
	if err := w.Stop(context.Background()); err != nil {
		t.Fatalf("Stop after the handler returned: %v", err)
	}
	// It returned nil although its context was cancelled: acked.
	if d := e.done(5 * time.Second); d.SlotID != held || d.Outcome != kvstore.OutcomeCompleted {
		t.Fatalf("report %+v, want %s completed", d, held)
	}
	next := e.publishFire("next", "jobs") // waits in the stream while stopped
	if err := w.Start(context.Background()); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if got := testwait.Receive(t, 5*time.Second, "the fire published while stopped", started); got != next {
		t.Fatalf("handled %s, want %s", got, next)
	}
}

// TestTimeout: Config.Timeout ends a handler's context with the cause
// ErrTimeout and fails the delivery (retried with the backoff);
// WithTimeout(0) lifts it for one workflow.
func TestTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	causes, errs := make(chan error, 4), make(chan worker.Delivery, 4)
	e.worker(worker.Config{Timeout: 100 * time.Millisecond, BackOff: []time.Duration{50 * time.Millisecond},
		ErrorHandler: func(_ context.Context, d worker.Delivery, err error) {
			if errors.Is(err, context.DeadlineExceeded) {
				errs <- d
			}
		}}, func(w *worker.Worker) {
		_ = w.Handle("bounded", func(ctx context.Context, f worker.Fire) error {
			if f.Delivery > 1 {
				return nil
			}
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return ctx.Err()
		})
		_ = w.Handle("free", func(ctx context.Context, _ worker.Fire) error {
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case <-time.After(300 * time.Millisecond): // three times the worker's Timeout
				return nil
			}
		}, worker.WithTimeout(0))
	})
	id := e.publishFire("b", "bounded")
	if cause := testwait.Receive(t, 5*time.Second, "the timeout", causes); !errors.Is(cause, worker.ErrTimeout) {
		t.Fatalf("cause %v, want ErrTimeout", cause)
	}
	if d := testwait.Receive(t, 5*time.Second, "the ErrorHandler", errs); d.ID != id || d.Number != 1 || d.Kind != worker.KindFire {
		t.Fatalf("ErrorHandler got %+v", d)
	}
	if d := e.done(5 * time.Second); d.SlotID != id || d.Outcome != kvstore.OutcomeCompleted {
		t.Fatalf("report %+v, want completed on the retry", d)
	}
	free := e.publishFire("f", "free")
	if d := e.done(5 * time.Second); d.SlotID != free || d.Outcome != kvstore.OutcomeCompleted {
		t.Fatalf("report %+v, want %s completed (no timeout)", d, free)
	}
}
