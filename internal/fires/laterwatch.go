package fires

import (
	"context"
	"log/slog"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go/jetstream"
)

// laterWatch is a watch started on a goroutine of its own, so that the
// run need not wait for it: the loop's watch of the specs. Creating it
// asks the server for the last revision of every spec (the specs keep a
// history, so the server walks every key: 0.7 s at a million on a 2-core
// VM), and due work needs no spec watch to begin (a due schedule's spec is
// fetched ahead of the watch, fetchSpec). Until it starts the index is not
// ready; a start that fails is retried, logged, until the run ends.
type laterWatch struct {
	ready  chan struct{} // closed once w is set
	w      jetstream.KeyWatcher
	cancel context.CancelFunc
	done   chan struct{} // closed when the starting goroutine has returned
}

// watchLater starts what (a watch, named for the log) with start on a
// goroutine of its own, retrying until it starts or ctx ends.
func watchLater(ctx context.Context, what string, start func(context.Context) (jetstream.KeyWatcher, error), log *slog.Logger) *laterWatch {
	ctx, cancel := context.WithCancel(ctx)
	lw := &laterWatch{ready: make(chan struct{}), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(lw.done)
		retry := backoff.WithContext(backoff.NewExponentialBackOff(
			backoff.WithInitialInterval(100*time.Millisecond),
			backoff.WithMaxInterval(5*time.Second),
			backoff.WithMaxElapsedTime(0),
		), ctx)
		for {
			w, err := start(ctx)
			if err == nil {
				lw.w = w
				close(lw.ready)
				return
			}
			if ctx.Err() != nil {
				return
			}
			wait := retry.NextBackOff()
			log.Error("cannot start a watch; the index is not ready until it starts: retrying", "watch", what, "retry_in", wait, "err", err)
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
	}()
	return lw
}

// Watcher waits for the watch to start and returns it, or nil when ctx
// ends or the watch is stopped first.
func (lw *laterWatch) Watcher(ctx context.Context) jetstream.KeyWatcher {
	select {
	case <-lw.ready:
		return lw.w
	case <-lw.done:
		select {
		case <-lw.ready:
			return lw.w
		default:
			return nil
		}
	case <-ctx.Done():
		return nil
	}
}

// Stop gives up starting the watch, waits for its goroutine, and stops
// the watch if it started.
func (lw *laterWatch) Stop() error {
	lw.cancel()
	<-lw.done
	if lw.w != nil {
		return lw.w.Stop()
	}
	return nil
}
