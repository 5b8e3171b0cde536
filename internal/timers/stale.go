package timers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/claimttl"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// checkCondition reads the condition key of a timer this instance has just
// claimed (claim c at revision rev; prev is the expired claim a takeover
// replaced). It returns done false when the condition holds, and the
// timer is to be published. Otherwise the timer is settled here: recorded
// stale, announced and deleted, never published; or, on a takeover whose
// predecessor had already published it, recorded fired. A read that fails
// decides nothing: the claim stays and is taken over when it expires.
func (e *Engine) checkCondition(ctx context.Context, key string, rev uint64, t kvstore.Timer, id string, c, prev *kvstore.Claim, takeover bool) (tresult, bool) {
	r := tresult{key: key}
	var reason string
	if bucket, k, err := fieldcheck.ConditionKey(t.ConditionKey); err != nil {
		// Written straight into the bucket: nothing can vouch for it.
		reason = fmt.Sprintf("condition key %q cannot be read: %v", t.ConditionKey, err)
	} else {
		f, st, err := e.conds.read(ctx, bucket, k)
		if err != nil {
			r.err = err
			return r, true
		}
		if reason = staleReason(t.ConditionKey, t.Condition, f, st); reason == "" {
			return r, false
		}
	}
	r.settled = c.Token
	if takeover && prev != nil {
		ack, err := e.publishedBefore(ctx, t, id, prev)
		if err != nil {
			r.settled, r.err = "", err
			return r, true
		}
		if ack != nil {
			// The run was woken before its condition changed: that is
			// the outcome to record, whatever the key holds now.
			r.fired, r.claimRev = true, rev
			r.err = e.followUp(ctx, key, rev, t, id, ack, true)
			return r, true
		}
	}
	r.err = e.stale(ctx, key, rev, t, id, reason)
	return r, true
}

// stale drops a claimed timer whose condition no longer holds: a ledger
// entry with status stale naming what was found, an event on
// sched.event.stale.<run>, and the delete at the claimed revision. The
// tick is written first and synchronously: it is what settles the claim
// for every other instance.
func (e *Engine) stale(ctx context.Context, key string, rev uint64, t kvstore.Timer, id, reason string) error {
	now := e.cfg.Clock.Now().UTC()
	tick := kvstore.Tick{Schedule: "wakeup", SlotID: id, Workflow: t.Workflow, Slot: t.Due, Status: kvstore.TickStale,
		Reason: reason, Owner: e.cfg.Instance, At: now}
	if err := e.cfg.Store.PutTick(ctx, tick); err != nil {
		return err
	}
	e.log.Info("stale timer dropped unpublished: its condition no longer holds", "key", key, "reason", reason)
	e.cfg.Observer.Event(kvstore.EventStale)
	if !e.cfg.Events.Has(kvstore.EventStale) {
		return e.remove(ctx, key, rev)
	}
	if data, err := json.Marshal(kvstore.Event{Kind: kvstore.EventStale, Schedule: key, Run: t.Run, Step: t.Step,
		Slot: t.Due, Reason: reason, Owner: e.cfg.Instance, At: now}); err == nil {
		_ = e.cfg.Store.JetStream().Conn().Publish(e.cfg.Store.Layout().EventSubject(kvstore.EventStale, kvstore.EscapeTimerID(t.Run)), data)
	}
	return e.remove(ctx, key, rev)
}

// publishedBefore looks in the wakeup stream for message id, which the
// expired claim prev may have published before it lapsed, so that a
// takeover finding the condition changed records what happened: fired if
// the message is there (its ack is returned), stale otherwise. It reads
// the timer's subject, headers only, from one claim TTL before prev was
// made to one claim TTL after it expired (the margins absorb clock skew
// between schedulers and the server): a claim's owner publishes only
// before its claim expires.
func (e *Engine) publishedBefore(ctx context.Context, t kvstore.Timer, id string, prev *kvstore.Claim) (*jetstream.PubAck, error) {
	name := e.cfg.Store.Layout().WakeupsStream
	stream, err := e.cfg.Store.JetStream().Stream(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("wakeup: look for %s in %s: %w", id, name, err)
	}
	last := stream.CachedInfo().State.LastSeq
	if last == 0 {
		return nil, nil
	}
	from := prev.At.Add(-e.cfg.ClaimTTL)
	to := claimttl.Expiry(*prev, e.cfg.Clock.Now(), e.maxClaim).Add(e.cfg.ClaimTTL)
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{e.cfg.Store.Layout().WakeupSubject(t.Workflow)},
		DeliverPolicy:  jetstream.DeliverByStartTimePolicy, OptStartTime: &from, HeadersOnly: true,
	})
	if err != nil {
		return nil, fmt.Errorf("wakeup: look for %s in %s: %w", id, name, err)
	}
	for {
		batch, err := cons.Fetch(256, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return nil, fmt.Errorf("wakeup: look for %s in %s: %w", id, name, err)
		}
		n, done := 0, false
		var ack *jetstream.PubAck
		for m := range batch.Messages() { // read to the end: the fetch stops then
			n++
			meta, err := m.Metadata()
			if done || err != nil {
				continue
			}
			if m.Headers().Get(kvstore.HeaderMsgID) == id {
				ack, done = &jetstream.PubAck{Stream: name, Sequence: meta.Sequence.Stream, Duplicate: true}, true
			} else if meta.Sequence.Stream >= last || meta.Timestamp.After(to) {
				done = true
			}
		}
		if done {
			return ack, nil
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("wakeup: look for %s in %s: %w", id, name, err)
		}
		if n == 0 {
			return nil, nil // nothing more since from
		}
	}
}
