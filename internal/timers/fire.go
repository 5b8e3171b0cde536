package timers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/claimttl"
	"github.com/jetsched/jetsched/internal/eventfilter"
	"github.com/jetsched/jetsched/internal/labels"
	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/internal/pipeline"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// process looks at one timer: fires it when due, settles or takes over a
// claim, drops it when expired. It reads the record fresh (the index keeps
// no payloads) and acts by CAS on its revision.
func (e *Engine) process(ctx context.Context, j tjob) tresult {
	r := tresult{key: j.key, settled: j.settled}
	ent, err := e.cfg.Store.GetTimer(ctx, j.key)
	if errors.Is(err, kvstore.ErrNotFound) {
		return r // cancelled or fired meanwhile
	}
	if err != nil && !errors.Is(err, kvstore.ErrInvalid) {
		r.err = err
		return r
	}
	if err == nil {
		// Every record read is validated, whoever wrote it: a forged
		// one is reported, never fired.
		if err = kvstore.ValidateTimer(j.key, ent.Timer); err == nil {
			err = e.checkBucket(ent.Timer)
		}
	}
	if err != nil {
		r = e.invalid(ctx, ent, err)
		r.settled = j.settled
		return r
	}
	t, now := ent.Timer, e.cfg.Clock.Now()
	id := kvstore.WakeupID(j.key, t.Due)
	if c := t.Claim; c != nil && c.Token == j.settled {
		r.err = e.remove(ctx, j.key, ent.Revision) // fired by us; the delete had failed
		return r
	}
	if c := t.Claim; c != nil {
		// Another instance (or a previous life of this one) claimed it.
		if _, err := e.cfg.Store.GetTick(ctx, id); err == nil {
			r.err = e.remove(ctx, j.key, ent.Revision)
			r.settled = c.Token
			return r
		}
		if exp := claimttl.Expiry(*c, now, e.maxClaim); now.Before(exp) {
			r.retry = exp
			return r
		}
		return e.fire(ctx, ent, now, true)
	}
	if now.Before(t.Due) {
		r.retry = t.Due
		return r
	}
	if !t.ExpiresAt.IsZero() && now.After(t.ExpiresAt) {
		r.err = e.expire(ctx, ent, now)
		return r
	}
	return e.fire(ctx, ent, now, false)
}

// fire claims the timer by CAS, publishes the wakeup, records it and
// removes the record. takeover re-publishes an expired claim's wakeup (the
// stream's duplicate window drops it if it had landed).
func (e *Engine) fire(ctx context.Context, ent kvstore.TimerEntry, now time.Time, takeover bool) tresult {
	r := tresult{key: ent.Key}
	t := ent.Timer
	prev := t.Claim
	c := &kvstore.Claim{Slot: t.Due, Token: randomToken(), Owner: e.cfg.Instance, At: now.UTC(), Expires: now.Add(e.cfg.ClaimTTL).UTC()}
	t.Claim = c
	rev, err := e.cfg.Store.UpdateTimer(ctx, ent.Key, t, ent.Revision)
	if errors.Is(err, kvstore.ErrConflict) {
		return r // cancelled, re-registered or claimed meanwhile: the watch brings news
	}
	if err != nil {
		r.err = err
		return r
	}
	id := kvstore.WakeupID(ent.Key, t.Due)
	if t.ConditionKey != "" {
		// One KV get, after the claim (only the claim's holder reads it)
		// and before the publish.
		if res, done := e.checkCondition(ctx, ent.Key, rev, t, id, c, prev, takeover); done {
			return res
		}
	}
	msg := e.wakeupMsg(t, takeover)
	r.fired, r.claimRev = true, rev
	if !takeover {
		// Through the claim pipeline, without waiting: the in-flight
		// tracker records and deletes it once acknowledged.
		settled, err := e.pub.Send(ctx, pipeline.Message{Msg: msg, ID: id, Claim: *c,
			Published: func(ctx context.Context, ack *jetstream.PubAck) error {
				return e.followUp(ctx, ent.Key, rev, t, id, ack, false)
			},
			Failed: func(ctx context.Context, err error) error {
				return e.failTimer(ctx, ent.Key, rev, t, id, err)
			},
		})
		switch {
		case settled:
			r.settled, r.err = c.Token, err
		case err != nil:
			r.fired, r.err = false, err
		}
		return r
	}
	ack, err := e.pub.Publish(ctx, msg, id, *c)
	if natserr.Permanent(err) {
		r.settled = c.Token
		r.err = e.failTimer(ctx, ent.Key, rev, t, id, err)
		return r
	}
	if err != nil {
		r.fired, r.err = false, err
		return r
	}
	r.settled = c.Token
	r.err = e.followUp(ctx, ent.Key, rev, t, id, ack, takeover)
	return r
}

// followUp records a published wakeup and deletes its timer at the fired
// revision. A takeover writes its tick synchronously, as the fire path's
// does: the tick is what settles a claim for everyone else.
func (e *Engine) followUp(ctx context.Context, key string, rev uint64, t kvstore.Timer, id string, ack *jetstream.PubAck, takeover bool) error {
	tick := kvstore.Tick{Schedule: "wakeup", SlotID: id, Workflow: t.Workflow, Slot: t.Due, Status: kvstore.TickFired,
		Owner: e.cfg.Instance, Stream: ack.Stream, Seq: ack.Sequence, Duplicate: ack.Duplicate, At: e.cfg.Clock.Now().UTC()}
	if takeover {
		tick.Reason = "takeover"
		if err := e.cfg.Store.PutTick(ctx, tick); err != nil {
			return err
		}
	} else if err := e.followups.PutTick(ctx, tick); err != nil {
		return err
	}
	return e.followups.DeleteTimer(ctx, key, rev)
}

// failTimer drops a claimed timer whose wakeup can never be published
// (too large for the server or the stream): its ledger entry says failed
// and why, an event and a warning say so, and the timer is deleted, rather
// than retried and taken over for ever.
func (e *Engine) failTimer(ctx context.Context, key string, rev uint64, t kvstore.Timer, id string, cause error) error {
	now := e.cfg.Clock.Now().UTC()
	reason := "not publishable: " + cause.Error()
	e.log.Warn("wakeup cannot be published; recorded as failed and dropped", "key", key, "err", cause)
	tick := kvstore.Tick{Schedule: "wakeup", SlotID: id, Workflow: t.Workflow, Slot: t.Due, Status: kvstore.TickFailed,
		Reason: reason, Owner: e.cfg.Instance, At: now}
	if err := e.cfg.Store.PutTick(ctx, tick); err != nil {
		return err
	}
	// Announced once recorded: whoever the event sends to the ledger finds
	// the entry there.
	e.event(kvstore.EventFailed, key, reason)
	return e.remove(ctx, key, rev)
}

// event publishes an observer event about timer key (best effort, as the
// fire engine's), when Config.Events has its kind:
// sched.event.<kind>.<run>.<step>.
func (e *Engine) event(kind kvstore.EventKind, key, reason string) {
	e.cfg.Observer.Event(kind)
	if !e.cfg.Events.Has(kind) {
		return
	}
	data, err := json.Marshal(kvstore.Event{Kind: kind, Schedule: key, Reason: reason, Owner: e.cfg.Instance, At: e.cfg.Clock.Now().UTC()})
	if err != nil {
		return
	}
	_ = e.cfg.Store.JetStream().Conn().Publish(e.cfg.Store.Layout().TimerEventSubject(kind, key), data)
}

// remove deletes a fired timer at the claimed revision; a conflict means it
// was registered again meanwhile, and the new timer stays.
func (e *Engine) remove(ctx context.Context, key string, rev uint64) error {
	err := e.cfg.Store.DeleteTimer(ctx, key, rev)
	if errors.Is(err, kvstore.ErrConflict) || errors.Is(err, kvstore.ErrNotFound) {
		return nil
	}
	return err
}

// expire drops a timer that was not delivered before its expiry.
func (e *Engine) expire(ctx context.Context, ent kvstore.TimerEntry, now time.Time) error {
	if err := e.cfg.Store.DeleteTimer(ctx, ent.Key, ent.Revision); err != nil {
		if errors.Is(err, kvstore.ErrConflict) {
			return nil
		}
		return err
	}
	t := ent.Timer
	reason := fmt.Sprintf("expired: not delivered by %s (due %s)", t.ExpiresAt.Format(time.RFC3339), t.Due.Format(time.RFC3339))
	e.log.Warn("timer expired undelivered", "key", ent.Key, "due", t.Due, "expires", t.ExpiresAt)
	tick := kvstore.Tick{Schedule: "wakeup", SlotID: kvstore.WakeupID(ent.Key, t.Due), Workflow: t.Workflow, Slot: t.Due,
		Status: kvstore.TickExpired, Reason: reason, Owner: e.cfg.Instance, At: now.UTC()}
	if err := e.cfg.Store.PutTick(ctx, tick); err != nil {
		e.log.Warn("record expired timer", "key", ent.Key, "err", err)
	}
	e.event(kvstore.EventWakeupExpired, ent.Key, reason)
	return nil
}

// wakeupMsg is the wakeup message of timer t.
func (e *Engine) wakeupMsg(t kvstore.Timer, takeover bool) *nats.Msg {
	msg := nats.NewMsg(e.cfg.Store.Layout().WakeupSubject(t.Workflow))
	msg.Data = t.Payload
	loc, err := e.zones.Load(t.Zone)
	if err != nil {
		loc = time.UTC
	}
	msg.Header.Set(kvstore.HeaderRun, t.Run)
	msg.Header.Set(kvstore.HeaderStep, t.Step)
	msg.Header.Set(kvstore.HeaderWorkflow, t.Workflow)
	msg.Header.Set(kvstore.HeaderDueAt, t.Due.In(loc).Format(time.RFC3339Nano))
	msg.Header.Set(kvstore.HeaderDispatchedAt, e.cfg.Clock.Now().UTC().Format(time.RFC3339Nano))
	if t.Condition != "" {
		msg.Header.Set(kvstore.HeaderCondition, t.Condition)
	}
	if t.ConditionKey != "" {
		msg.Header.Set(kvstore.HeaderConditionKey, t.ConditionKey)
	}
	if t.When != "" {
		msg.Header.Set(kvstore.HeaderWhen, t.When)
	}
	if t.Rearms > 0 {
		msg.Header.Set(kvstore.HeaderRearms, strconv.Itoa(t.Rearms))
	}
	if len(t.Labels) > 0 {
		msg.Header.Set(kvstore.HeaderLabels, labels.Format(t.Labels))
	}
	if takeover {
		msg.Header.Set(kvstore.HeaderReason, "takeover")
	}
	return msg
}

// episodes tells the wakeup stream's full or unacknowledged stretches, as
// the fire engine's (see pipeline.Episodes): the event goes on
// sched.event.<kind>.<instance>.
func (e *Engine) episodes() *pipeline.Episodes {
	stream := e.cfg.Store.Layout().WakeupsStream
	return &pipeline.Episodes{Stream: stream, Log: e.log, Quiet: pipeline.DefaultQuiet,
		Blocked: func(r natserr.Refusal, on bool) { e.cfg.Observer.PublishBlocked(string(r), on) },
		Began: func(r natserr.Refusal, id string, err error) {
			ev := pipeline.EpisodeEvent(r, e.cfg.Instance, stream, id, err, e.cfg.Clock.Now())
			e.cfg.Observer.Event(ev.Kind)
			if !e.cfg.Events.Has(ev.Kind) {
				return
			}
			if data, err := json.Marshal(ev); err == nil {
				_ = e.cfg.Store.JetStream().Conn().Publish(e.cfg.Store.Layout().EventSubject(ev.Kind, eventfilter.SubjectID(ev)), data)
			}
		}}
}
