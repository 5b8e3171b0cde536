package kvstore

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Followups sends the writes that follow an acknowledged fire (a ledger
// tick, a fired timer's delete) without making the sender wait for them:
// one goroutine waits for their acknowledgements, in order, and retries a
// failed write until its deadline. The protocol never depends on a
// follow-up landing: a fire whose tick is missing is settled by a takeover,
// which re-publishes into the duplicate window (a no-op) and writes the
// tick itself.
type Followups struct {
	store    *Store
	retryFor time.Duration
	log      *slog.Logger
	pending  chan followup
	done     chan struct{}
}

type followup struct {
	what  string
	f     jetstream.PubAckFuture
	retry func(context.Context) error
}

// StartFollowups starts the goroutine that settles follow-up writes; each
// failed one is retried for up to retryFor. Close stops it.
func (s *Store) StartFollowups(retryFor time.Duration, log *slog.Logger) *Followups {
	f := &Followups{store: s, retryFor: retryFor, log: log, pending: make(chan followup, 1024), done: make(chan struct{})}
	go f.run()
	return f
}

// PutTick sends a ledger entry; ctx bounds only the wait for room in the
// queue (it is full when acknowledgements lag far behind).
func (f *Followups) PutTick(ctx context.Context, t Tick) error {
	fut, err := f.store.PutTickAsync(t)
	if err != nil {
		return err
	}
	return f.queue(ctx, followup{what: "tick " + t.Key(), f: fut, retry: func(ctx context.Context) error { return f.store.PutTick(ctx, t) }})
}

// DeleteTimer sends the delete of a fired timer at revision rev. A timer
// registered again meanwhile (a newer revision) stays.
func (f *Followups) DeleteTimer(ctx context.Context, key string, rev uint64) error {
	m := nats.NewMsg("$KV." + f.store.wakeups.Bucket() + "." + key)
	m.Header.Set("KV-Operation", "DEL")
	m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(rev, 10))
	fut, err := f.store.js.PublishMsgAsync(m)
	if err != nil {
		return err
	}
	return f.queue(ctx, followup{what: "delete timer " + key, f: fut, retry: func(ctx context.Context) error {
		err := f.store.DeleteTimer(ctx, key, rev)
		if errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound) {
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
	for fu := range f.pending {
		select {
		case <-fu.f.Ok():
		case err := <-fu.f.Err():
			if isWrongLastSequence(err) {
				continue // a conditional write that lost: nothing to redo
			}
			f.retry(fu, err)
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

// isWrongLastSequence reports JetStream's "wrong last sequence": 10071,
// or 10164 from a replicated stream.
func isWrongLastSequence(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
