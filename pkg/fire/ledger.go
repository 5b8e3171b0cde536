package fire

import (
	"context"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// ledger writes the ticks of freshly published slots without holding the
// worker: the worker sends the put and moves on; the ledger waits for the
// acknowledgements in order and retries a failed put until the claim TTL.
//
// The protocol does not depend on it: the fire was acknowledged before the
// tick is sent, so a tick that never lands (a crash in between) leaves an
// unsettled claim, which a takeover re-publishes into the stream's
// duplicate window (a no-op) and then records.
type ledger struct {
	e       *Engine
	pending chan sentTick
	done    chan struct{}
}

type sentTick struct {
	f    jetstream.PubAckFuture
	tick kvstore.Tick
}

func newLedger(e *Engine) *ledger {
	return &ledger{e: e, pending: make(chan sentTick, 1024), done: make(chan struct{})}
}

// put sends t; ctx bounds only the wait for room in the queue.
func (l *ledger) put(ctx context.Context, t kvstore.Tick) error {
	f, err := l.e.store.PutTickAsync(t)
	if err != nil {
		return err
	}
	select {
	case l.pending <- sentTick{f: f, tick: t}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run settles the sent ticks until close, then returns once each is.
func (l *ledger) run() {
	defer close(l.done)
	for s := range l.pending {
		select {
		case <-s.f.Ok():
		case err := <-s.f.Err():
			l.retry(s.tick, err)
		}
	}
}

// close stops the ledger after the ticks already sent; call it once no
// worker sends any more.
func (l *ledger) close() {
	close(l.pending)
	<-l.done
}

func (l *ledger) retry(t kvstore.Tick, first error) {
	ctx, cancel := context.WithTimeout(context.Background(), l.e.cfg.ClaimTTL)
	defer cancel()
	err := backoff.Retry(func() error { return l.e.store.PutTick(ctx, t) }, natsRetry(ctx))
	if err != nil {
		l.e.log.Warn("ledger tick not written; the slot was published", "schedule", t.Schedule, "slot", t.Slot.Format(time.RFC3339Nano), "first_err", first, "err", err)
	}
}
