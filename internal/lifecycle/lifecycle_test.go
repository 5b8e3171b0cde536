package lifecycle_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/lifecycle"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// loop runs until its life ends, then takes linger to finish.
func loop(runs *int, linger time.Duration) lifecycle.Setup {
	return func(_, life context.Context) (func(), error) {
		*runs++
		return func() {
			<-life.Done()
			time.Sleep(linger) // the body's own shutdown work, in the bubble's time
		}, nil
	}
}

func TestStartStopRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s lifecycle.Service
		ctx := context.Background()
		if err := s.Stop(ctx); err != nil {
			t.Fatalf("Stop before Start: %v", err)
		}
		runs := 0
		if err := s.Start(ctx, loop(&runs, time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx, loop(&runs, time.Second)); err != nil || runs != 1 {
			t.Fatalf("second Start: %v, %d runs; want nil and one run", err, runs)
		}
		if !s.Running() {
			t.Fatal("not running after Start")
		}
		// A Stop whose context ends first returns its error; the body
		// goes on stopping.
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		if err := s.Stop(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Stop with a short context: %v", err)
		}
		if err := s.Start(ctx, loop(&runs, 0)); !errors.Is(err, lifecycle.ErrStopping) {
			t.Fatalf("Start while stopping: %v", err)
		}
		if err := s.Stop(ctx); err != nil {
			t.Fatalf("second Stop: %v", err)
		}
		if s.Running() {
			t.Fatal("running after Stop")
		}
		// Restartable.
		if err := s.Start(ctx, loop(&runs, 0)); err != nil || runs != 2 {
			t.Fatalf("restart: %v, %d runs", err, runs)
		}
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSetupErrorLeavesItStopped(t *testing.T) {
	var s lifecycle.Service
	boom := errors.New("boom")
	err := s.Start(context.Background(), func(_, _ context.Context) (func(), error) { return nil, boom })
	if !errors.Is(err, boom) || s.Running() {
		t.Fatalf("Start: %v, running %v", err, s.Running())
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// The run's life does not end with the Start context: a Start bounded by a
// timeout starts a run that lasts until Stop.
func TestLifeOutlivesTheStartContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s lifecycle.Service
		ctx, cancel := context.WithCancel(context.Background())
		lived := make(chan struct{})
		err := s.Start(ctx, func(_, life context.Context) (func(), error) {
			return func() { <-life.Done(); close(lived) }, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		synctest.Wait()
		select {
		case <-lived:
			t.Fatal("the run ended with the Start context")
		default:
		}
		if err := s.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		<-lived
	})
}

// TestReadyRenewsAfterClose: a run's channel is kept until it is closed;
// the next run then gets a new, open one.
func TestReadyRenewsAfterClose(t *testing.T) {
	var r lifecycle.Ready
	first := r.Next()
	if r.C() != first || r.Next() != first {
		t.Fatal("an open ready channel was replaced")
	}
	close(first)
	select {
	case <-r.C():
	default:
		t.Fatal("C is not the closed channel of the run that was ready")
	}
	second := r.Next()
	if second == first {
		t.Fatal("a restart kept the closed channel")
	}
	select {
	case <-r.C():
		t.Fatal("the new run's channel is closed")
	default:
	}
}
