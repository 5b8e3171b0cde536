package console

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
)

// runner owns the goroutine of a follower (the index's watches, the fire
// and audit streams): it runs follow until stop, and after a failure
// reports it and opens it again retry later.
type runner struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (r *runner) run(ctx context.Context, retry time.Duration, follow func(context.Context) error, failed func(error)) {
	ctx, r.cancel = context.WithCancel(ctx)
	r.done = make(chan struct{})
	go func() {
		defer close(r.done)
		t := time.NewTimer(0)
		defer t.Stop()
		for {
			err := follow(ctx)
			if ctx.Err() != nil {
				return
			}
			failed(err)
			t.Reset(retry)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// stop ends the follower and waits for it. Stop before run is a no-op.
func (r *runner) stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	<-r.done
}

// eachBatch is how many messages eachMsg pulls at a time at most
// (nats.go's default).
const eachBatch = 500

// eachMsg calls fn with every message of an ordered consumer until ctx
// ends or the consumer fails, pulling them a byte limit at a time on the
// connection nc (kvstore.PullBytes): an audit entry carries the spec it
// wrote (inputs of up to 256 KiB), and 500 of them at once, the pull's
// count, could be past the server's limit of pending bytes.
func eachMsg(ctx context.Context, nc *nats.Conn, cons jetstream.Consumer, fn func(jetstream.Msg)) error {
	it, err := cons.Messages(jetstream.PullMaxMessagesWithBytesLimit(eachBatch, jsstore.PullBytes(nc)))
	if err != nil {
		return err
	}
	// Next blocks; stopping the iterator is what ends it.
	ctx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		it.Stop()
	}()
	defer func() {
		cancel()
		<-stopped
	}()
	for {
		m, err := it.Next()
		if err != nil {
			return err
		}
		fn(m)
	}
}
