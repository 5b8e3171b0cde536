package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Publisher is the claim pipeline's publish stage, the same for a fire and
// a wakeup: a claimed message goes to its stream with its slot id as
// Nats-Msg-Id, and is settled on the stream's acknowledgement or published
// again, never after its claim's deadline (so that it never races a
// takeover); a message the stream refuses for good is reported at once.
// A stream or account out of room (natserr.Exhausted) is no refusal for
// good: the message is retried like an unacknowledged one, and Episodes
// tells the operators once.
type Publisher struct {
	// JS publishes what waits for its acknowledgement (Publish). Required.
	JS jetstream.JetStream
	// Async sends what does not (Send): the store's publisher, which
	// reads the acknowledgements without encoding/json. Required.
	Async AsyncSender
	// Stream is the stream the messages must land in (SCHED_FIRES,
	// SCHED_WAKEUPS). Required.
	Stream string
	// Clock reads the claims' expiries. Default: the system clock.
	Clock clock.Clock
	// ClaimTTL sets the margin before a claim's expiry when publishing
	// stops (a tenth of it).
	ClaimTTL time.Duration
	// Inflight tracks the messages sent without waiting. Required for Send.
	Inflight *Inflight
	// Log receives the retries and give-ups. Required.
	Log *slog.Logger
	// Republished, when set, is called when a message sent without
	// waiting was not acknowledged and is published again.
	Republished func()
	// AttemptFailed, when set, is called for every publish attempt that failed
	// (not acknowledged, refused), retried or not, with why: the publish
	// error metric.
	AttemptFailed func(natserr.Refusal)
	// Episodes, when set, is told of every failed attempt, every message
	// given up at its claim's deadline and every acknowledgement: one
	// warning and one event per stretch of a full stream or account.
	Episodes *Episodes
}

// AsyncSender sends a message to a stream without waiting for the
// acknowledgement, which the future reports, failing it when another
// stream acknowledges it (kvstore.Store.PublishAsyncTo); it waits for room
// among its unacknowledged messages until ctx ends.
type AsyncSender interface {
	PublishAsyncTo(ctx context.Context, m *nats.Msg, stream string) (jetstream.PubAckFuture, error)
}

// Margin is how long before its claim expires an owner stops trying to
// publish, so that it never races a takeover at the boundary.
func Margin(claimTTL time.Duration) time.Duration { return claimTTL / 10 }

// Message is a claimed message and what to do when it is settled.
type Message struct {
	// Msg is the message; ID its slot id (Nats-Msg-Id).
	Msg *nats.Msg
	ID  string
	// Claim is the claim it is published under: its expiry bounds the
	// retries.
	Claim kvstore.Claim
	// Published runs once the stream acknowledged it (perhaps as a
	// duplicate): the observations and the follow-ups.
	Published func(ctx context.Context, ack *jetstream.PubAck) error
	// Failed runs when the stream refuses it for good (too large): record
	// it, so that the schedule or timer moves on.
	Failed func(ctx context.Context, err error) error
	// Abandoned, when set, runs when a message sent without waiting is
	// given up at its claim's deadline, neither published nor refused
	// (the claim is taken over when it expires).
	Abandoned func(err error)
}

// Send publishes m without waiting for the acknowledgement; the in-flight
// tracker runs m.Published when it comes, or publishes m again (Publish)
// and runs Published or Failed, or gives up at the claim's deadline (the
// claim is then taken over when it expires, as after a crash). When m
// cannot even be sent, Send publishes it at once and settles it itself:
// settled is true when Published or Failed ran (and err is theirs).
func (p *Publisher) Send(ctx context.Context, m Message) (settled bool, err error) {
	if m.Msg.Header == nil {
		m.Msg.Header = nats.Header{}
	}
	m.Msg.Header.Set(jetstream.MsgIDHeader, m.ID)
	sent := time.Now()
	f, err := p.Async.PublishAsyncTo(ctx, m.Msg, p.Stream)
	if err == nil {
		p.Inflight.Add(f, sent, func(first error) (*jetstream.PubAck, error) {
			p.Log.Debug("not acknowledged; publishing it again", "id", m.ID, "err", first)
			p.attemptFailed(m.ID, first)
			if p.Republished != nil {
				p.Republished()
			}
			ack, err := p.Publish(context.Background(), m.Msg, m.ID, m.Claim)
			switch {
			case natserr.Permanent(err):
				if ferr := m.Failed(context.Background(), err); ferr != nil {
					p.Log.Warn("recording an unpublishable message failed; its claim will be checked", "id", m.ID, "err", ferr)
				}
			case err != nil:
				if m.Abandoned != nil {
					m.Abandoned(err)
				}
			}
			return ack, err
		}, func(ack *jetstream.PubAck) {
			p.Episodes.Acknowledged(sent, ack != nil && ack.Duplicate)
			if err := m.Published(context.Background(), ack); err != nil {
				p.Log.Warn("follow-up not sent; the claim will be checked", "id", m.ID, "err", err)
			}
		})
		return false, nil
	}
	ack, err := p.Publish(ctx, m.Msg, m.ID, m.Claim)
	switch {
	case natserr.Permanent(err):
		return true, m.Failed(ctx, err)
	case err != nil:
		return false, err
	}
	return true, m.Published(ctx, ack)
}

func (p *Publisher) attemptFailed(id string, err error) {
	if p.AttemptFailed != nil {
		p.AttemptFailed(natserr.Classify(err))
	}
	p.Episodes.Refused(id, err)
}

// gaveUp logs a message given up at its claim's deadline: at debug level
// when an episode (Episodes) stands for it, which warns once; a warning
// otherwise.
func (p *Publisher) gaveUp(id string, err error) {
	if p.Episodes.GaveUp(id, err) {
		p.Log.Debug("not published before its claim expires; it will be taken over", "id", id, "err", err)
		return
	}
	p.Log.Warn("not published before its claim expires; it will be taken over", "id", id, "err", err)
}

// Acknowledged tells the Episodes of an acknowledgement that did not come
// through Send or Publish (a window's), of a publish sent at sent.
func (p *Publisher) Acknowledged(sent time.Time, ack *jetstream.PubAck) {
	p.Episodes.Acknowledged(sent, ack != nil && ack.Duplicate)
}

// Publish publishes msg and waits for the acknowledgement, retrying with
// backoff (each attempt bounded by AckWait) until shortly before claim c
// expires; an error the stream gives for good stops it at once (check with
// natserr.Permanent).
func (p *Publisher) Publish(ctx context.Context, msg *nats.Msg, id string, c kvstore.Claim) (*jetstream.PubAck, error) {
	pctx, cancel := p.Clock.WithDeadline(ctx, c.Expires.Add(-Margin(p.ClaimTTL)))
	defer cancel()
	var ack *jetstream.PubAck
	var sent time.Time
	err := backoff.Retry(func() error {
		actx, acancel := context.WithTimeout(pctx, AckWait)
		defer acancel()
		sent = time.Now()
		a, err := p.JS.PublishMsg(actx, msg, jetstream.WithMsgID(id), jetstream.WithExpectStream(p.Stream))
		if err != nil {
			p.Log.Debug("publish failed; retrying", "id", id, "err", err)
			p.attemptFailed(id, err)
			if natserr.Permanent(err) {
				return backoff.Permanent(err) // no retry can succeed
			}
			return err
		}
		ack = a
		return nil
	}, Backoff(pctx))
	if err != nil {
		if !natserr.Permanent(err) && ctx.Err() == nil {
			p.gaveUp(id, err)
		}
		return nil, fmt.Errorf("publish %s before its claim expires: %w", id, err)
	}
	p.Episodes.Acknowledged(sent, ack.Duplicate)
	return ack, nil
}
