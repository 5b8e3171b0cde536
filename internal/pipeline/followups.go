package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Followups sends the writes that follow an acknowledged fire (a ledger
// tick, a fired timer's delete) without making the sender wait for them:
// one goroutine waits for their acknowledgements, in order, and retries a
// failed write until its deadline. The protocol never depends on a
// follow-up landing: a fire whose tick is missing is settled by a takeover,
// which re-publishes into the duplicate window (a no-op) and writes the
// tick itself.
type Followups struct {
	store    *jsstore.Store
	retryFor time.Duration
	log      *slog.Logger
	pending  chan followup
	done     chan struct{}
}

type followup struct {
	what  string
	f     jetstream.PubAckFuture
	sent  time.Time
	retry func(context.Context) error
}

// AckWait is how long a write sent without waiting may go unacknowledged
// before it is treated as failed (and redone: every write this package
// pipelines is idempotent or conditional). A JetStream reply can be lost
// without the connection dropping, during a leader election say, and then
// its future would never resolve.
const AckWait = 5 * time.Second

// AckTimer waits for the acknowledgements of writes sent without waiting,
// one at a time; its zero value is not usable: use NewAckTimer.
type AckTimer struct{ t *time.Timer }

// NewAckTimer returns an AckTimer; Stop it when done.
func NewAckTimer() AckTimer { return AckTimer{t: time.NewTimer(AckWait)} }

// Await returns f's acknowledgement, or its error, or
// context.DeadlineExceeded once AckWait has passed since sent.
func (a AckTimer) Await(f jetstream.PubAckFuture, sent time.Time) (*jetstream.PubAck, error) {
	a.t.Reset(max(time.Until(sent.Add(AckWait)), 0))
	select {
	case ack := <-f.Ok():
		return ack, nil
	case err := <-f.Err():
		return nil, err
	case <-a.t.C:
		return nil, context.DeadlineExceeded
	}
}

// Stop releases the timer.
func (a AckTimer) Stop() { a.t.Stop() }

// StartFollowups starts the goroutine that settles follow-up writes to
// store; each failed one is retried for up to retryFor. Close stops it.
func StartFollowups(store *jsstore.Store, retryFor time.Duration, log *slog.Logger) *Followups {
	f := &Followups{store: store, retryFor: retryFor, log: log, pending: make(chan followup, 1024), done: make(chan struct{})}
	go f.run()
	return f
}

// PutTick sends a ledger entry; ctx bounds only the wait for room in the
// queue (it is full when acknowledgements lag far behind).
func (f *Followups) PutTick(ctx context.Context, t kvstore.Tick) error {
	fut, err := f.store.PutTickAsync(ctx, t)
	if err != nil {
		return err
	}
	return f.queue(ctx, followup{what: "tick " + t.Key(), f: fut, sent: time.Now(), retry: func(ctx context.Context) error { return f.store.PutTick(ctx, t) }})
}

// DeleteTimer sends the delete of a fired timer at revision rev. A timer
// registered again meanwhile (a newer revision) stays.
func (f *Followups) DeleteTimer(ctx context.Context, key string, rev uint64) error {
	fut, err := f.store.DeleteTimerAsync(ctx, key, rev)
	if err != nil {
		return err
	}
	return f.queue(ctx, followup{what: "delete timer " + key, f: fut, sent: time.Now(), retry: func(ctx context.Context) error {
		err := f.store.DeleteTimer(ctx, key, rev)
		if errors.Is(err, kvstore.ErrConflict) || errors.Is(err, kvstore.ErrNotFound) {
			return nil
		}
		return err
	}})
}

func (f *Followups) queue(ctx context.Context, fu followup) error {
	select {
	case f.pending <- fu:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *Followups) run() {
	defer close(f.done)
	acks := NewAckTimer()
	defer acks.Stop()
	for fu := range f.pending {
		if _, err := acks.Await(fu.f, fu.sent); err != nil && !natserr.WrongLastSequence(err) {
			f.retry(fu, err) // (a conditional write that lost has nothing to redo)
		}
	}
}

func (f *Followups) retry(fu followup, first error) {
	ctx, cancel := context.WithTimeout(context.Background(), f.retryFor)
	defer cancel()
	if err := backoff.Retry(func() error { return fu.retry(ctx) }, Backoff(ctx)); err != nil {
		f.log.Warn("follow-up write failed; a takeover will redo it", "write", fu.what, "first_err", first, "err", err)
	}
}

// Backoff is the retry schedule of a NATS write retried until ctx ends:
// exponential from 20 ms to 1 s, with jitter.
func Backoff(ctx context.Context) backoff.BackOffContext {
	return backoff.WithContext(backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(20*time.Millisecond),
		backoff.WithMaxInterval(time.Second),
		backoff.WithMaxElapsedTime(0),
	), ctx)
}

// Close waits for the follow-ups already sent, then stops. Call it once
// nothing sends any more.
func (f *Followups) Close() {
	close(f.pending)
	<-f.done
}
