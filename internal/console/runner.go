package console

import (
	"context"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
)

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
