package fires

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/testlog"
)

// stubWatch is a started watch that records its Stop.
type stubWatch struct{ stopped atomic.Bool }

func (w *stubWatch) Updates() <-chan jetstream.KeyValueEntry { return nil }
func (w *stubWatch) Stop() error                             { w.stopped.Store(true); return nil }

// A watch that cannot start is retried, each failure logged, until it
// starts; Watcher then returns it, and Stop stops it.
func TestLaterWatchRetriesUntilItStarts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w := &stubWatch{}
	var tries atomic.Int32
	logged := testlog.NewSignal("cannot start a watch")
	lw := watchLater(ctx, "specs", func(context.Context) (jetstream.KeyWatcher, error) {
		if tries.Add(1) < 3 {
			return nil, errors.New("no responders")
		}
		return w, nil
	}, logged.Logger())
	got := lw.Watcher(ctx)
	if got != w {
		t.Fatalf("Watcher = %v after %d tries, want the started watch", got, tries.Load())
	}
	select {
	case <-logged.Seen:
	default:
		t.Fatal("the failed starts were not logged")
	}
	if err := lw.Stop(); err != nil || !w.stopped.Load() || tries.Load() != 3 {
		t.Fatalf("Stop = %v, stopped %v after %d tries, want the watch stopped after 3", err, w.stopped.Load(), tries.Load())
	}
}

// Stopped before it starts, a watch is given up: Watcher returns nil and
// the starting goroutine has returned (the package's goleak check).
func TestLaterWatchStoppedBeforeItStarts(t *testing.T) {
	started := make(chan struct{})
	lw := watchLater(context.Background(), "specs", func(ctx context.Context) (jetstream.KeyWatcher, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}, testlog.NewSignal("").Logger())
	<-started
	if err := lw.Stop(); err != nil {
		t.Fatal(err)
	}
	if got := lw.Watcher(context.Background()); got != nil {
		t.Fatalf("Watcher after Stop = %v, want nil", got)
	}
}
