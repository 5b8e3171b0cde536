// Package pipelined sends JetStream publishes without waiting for each
// acknowledgement, and waits when too many are unacknowledged: nats.go
// fails an asynchronous publish once its window of pending
// acknowledgements (jetstream.WithPublishAsyncMaxPending, 4,000 by default)
// has been full for a short stall; a bulk writer then has to wait for room,
// not give up.
package pipelined

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Publish sends m asynchronously. When the window is full it waits for
// acknowledgements to make room and tries again, until ctx ends. The
// future reports m's own acknowledgement.
func Publish(ctx context.Context, js jetstream.JetStream, m *nats.Msg, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	wait := time.Millisecond
	for {
		f, err := js.PublishMsgAsync(m, opts...)
		if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
			return f, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for room among %d unacknowledged publishes: %w", js.PublishAsyncPending(), ctx.Err())
		case <-js.PublishAsyncComplete():
			// every pending publish acknowledged: room at once
		case <-time.After(wait):
			wait = min(2*wait, 100*time.Millisecond)
		}
	}
}
