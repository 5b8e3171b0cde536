// Package auditlog writes the audit trail that pkg/audit verifies: every
// change made through the scheduler's API is appended as an intent before
// its write (Log.Intend, Log.IntendAll), operator actions are recorded
// (Log.Record), and checkpoints are appended and anchored in the head
// bucket (Log.Checkpoint). The trail's format (entries, heads, their MACs)
// is pkg/audit's; this package is the scheduler's writer of it and may
// change with the scheduler.
package auditlog

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/internal/pipeline"
	"github.com/jetsched/jetsched/pkg/audit"
)

// Log appends to the trail. It is safe for concurrent use, also across
// processes: an append expects the stream's last sequence and retries.
type Log struct {
	js       jetstream.JetStream
	key      []byte
	by       string
	trail    audit.Trail
	rollback func(error)
	failure  func(Failure)
}

// Failure is an append the trail did not take: the action and target it
// was for, and why.
type Failure struct {
	Action, Target string
	Err            error
}

// New returns a Log on the default trail that signs with key; by names the
// writer in every entry ("scheduler:<instance>").
func New(js jetstream.JetStream, key []byte, by string) *Log {
	return &Log{js: js, key: key, by: by, trail: audit.Trail{}.WithDefaults(), rollback: func(error) {}, failure: func(Failure) {}}
}

// WithTrail returns a copy of l that writes to trail t.
func (l *Log) WithTrail(t audit.Trail) *Log {
	c := *l
	c.trail = t.WithDefaults()
	return &c
}

// WithRollback returns a copy of l that calls report when a checkpoint
// finds the trail does not extend its anchored head (a *audit.RollbackError);
// the checkpoint is then not anchored.
func (l *Log) WithRollback(report func(error)) *Log {
	c := *l
	c.rollback = report
	return &c
}

// WithFailure returns a copy of l that calls report when an intent, an
// abandoned entry or the checkpoint after an intent cannot be appended
// (the daemon logs it, counts it and publishes an audit_unavailable
// event).
func (l *Log) WithFailure(report func(Failure)) *Log {
	c := *l
	c.failure = report
	return &c
}

// Trail is the trail l writes to.
func (l *Log) Trail() audit.Trail { return l.trail }

// Requester is who asked for an action, as the admin API learned it.
type Requester struct {
	// User and Account are the NATS user and account the server reported
	// for the request (the Nats-Request-Info header it adds when a request
	// crosses a service import); both empty when the server vouched for
	// nobody.
	User, Account string
	// Claimed is who the caller said it was (the Sched-Actor header).
	Claimed string
}

// Actor is the name recorded as an entry's actor: the user, else the
// account ("account:<name>", an import that does not share the user),
// else "unauthenticated".
func (r Requester) Actor() string {
	switch {
	case r.User != "":
		return r.User
	case r.Account != "":
		return "account:" + r.Account
	}
	return "unauthenticated"
}

type requesterKey struct{}

// WithRequester tells Record who asked for the action.
func WithRequester(ctx context.Context, r Requester) context.Context {
	return context.WithValue(ctx, requesterKey{}, r)
}

// Record appends an action that writes nothing (and, every Interval
// entries, a checkpoint).
func (l *Log) Record(ctx context.Context, action, target string, detail any) error {
	e, err := l.actionEntry(ctx, jsstore.Intent{Action: action, Target: target, Detail: detail})
	if err != nil {
		return err
	}
	_, err = l.appendAction(ctx, e)
	return err
}

// Intend appends the intent of a change before it is made (the
// kvstore.Auditor the store writes ahead with) and returns its sequence,
// which the change's write carries. Every Interval entries a checkpoint
// follows; one that fails is reported (WithFailure) but the intent stands.
func (l *Log) Intend(ctx context.Context, in jsstore.Intent) (uint64, error) {
	e, err := l.actionEntry(ctx, in)
	if err != nil {
		return 0, err
	}
	e.Phase = audit.PhaseIntent
	seq, err := l.appendAction(ctx, e)
	if seq == 0 {
		l.failure(Failure{Action: in.Action, Target: in.Target, Err: err})
		return 0, err
	}
	if err != nil {
		l.failure(Failure{Action: "checkpoint", Target: l.trail.Stream, Err: err})
	}
	return seq, nil
}

// Abandon appends the record that the intents at seqs were not applied,
// and why.
func (l *Log) Abandon(ctx context.Context, seqs []uint64, reason string) error {
	e, err := l.actionEntry(ctx, jsstore.Intent{Action: "intent.abandoned", Target: l.trail.Stream, Detail: map[string]string{"reason": reason}})
	if err != nil {
		return err
	}
	e.Phase, e.Intents = audit.PhaseAbandoned, seqs
	if seq, err := l.appendAction(ctx, e); err != nil {
		l.failure(Failure{Action: e.Action, Target: fmt.Sprint(seqs), Err: err})
		if seq == 0 {
			return err
		}
	}
	return nil
}

// appendAction appends e and, when its sequence is a multiple of
// Interval, a checkpoint. It returns e's sequence (0 when e was not
// appended) and the error of whichever failed.
func (l *Log) appendAction(ctx context.Context, e audit.Entry) (uint64, error) {
	seq, err := l.Append(ctx, e)
	if err != nil {
		return 0, err
	}
	if seq%Interval == 0 {
		_, err = l.Checkpoint(ctx)
	}
	return seq, err
}

// actionEntry is the action entry of in, with the requester ctx carries,
// unsigned and unchained.
func (l *Log) actionEntry(ctx context.Context, in jsstore.Intent) (audit.Entry, error) {
	e := audit.Entry{Kind: audit.KindAction, Actor: l.by, By: l.by, Action: in.Action, Target: in.Target,
		Bucket: in.Bucket, Key: in.Key, Expect: in.Expect, SHA256: in.SHA256}
	if r, ok := ctx.Value(requesterKey{}).(Requester); ok {
		e.Actor, e.ActorAccount, e.ClaimedActor = r.Actor(), r.Account, r.Claimed
	}
	if in.Detail != nil {
		b, err := json.Marshal(in.Detail)
		if err != nil {
			return e, fmt.Errorf("auditlog: detail of %s %s: %w", in.Action, in.Target, err)
		}
		e.Detail = b
	}
	return e, nil
}

// Append signs e, chains it onto the trail's last entry and appends it,
// returning its sequence. Digest entries go to "<subject>.digest.<target>",
// the others to "<subject>.<kind>", so that the last of each is found
// without a scan.
func (l *Log) Append(ctx context.Context, e audit.Entry) (uint64, error) {
	seq, _, err := l.append(ctx, e)
	return seq, err
}

// append is Append that also returns the stream info it chained onto.
func (l *Log) append(ctx context.Context, e audit.Entry) (uint64, *jetstream.StreamInfo, error) {
	e.By = cmp.Or(e.By, l.by)
	e.Actor = cmp.Or(e.Actor, l.by)
	subject := l.trail.Subject + "." + e.Kind
	if e.Kind == audit.KindDigest {
		subject += "." + e.Target
	}
	stream, err := l.js.Stream(ctx, l.trail.Stream)
	if err != nil {
		return 0, nil, fmt.Errorf("auditlog: stream %s: %w", l.trail.Stream, err)
	}
	// Another writer appending meanwhile moves the trail's last sequence:
	// chain onto theirs, after the shared backoff (bounded, and by ctx).
	var seq uint64
	var info *jetstream.StreamInfo
	err = backoff.Retry(func() error {
		i, prev, err := lastEntry(ctx, stream)
		if err != nil {
			return backoff.Permanent(err)
		}
		e.At, e.Prev = time.Now().UTC(), prev
		e = e.Sign(l.key)
		data, _ := json.Marshal(e)
		ack, err := l.js.Publish(ctx, subject, data, jetstream.WithExpectLastSequence(i.State.LastSeq))
		switch {
		case err == nil:
			i.State.LastSeq = ack.Sequence
			seq, info = ack.Sequence, i
			return nil
		case natserr.WrongLastSequence(err):
			return errTrailMoved
		}
		return backoff.Permanent(fmt.Errorf("auditlog: append: %w", err))
	}, backoff.WithMaxRetries(pipeline.Backoff(ctx), appendRetries))
	switch {
	case errors.Is(err, errTrailMoved):
		return 0, nil, fmt.Errorf("auditlog: append: the trail kept moving; gave up after %d attempts", appendRetries+1)
	case err != nil:
		return 0, nil, err
	}
	return seq, info, nil
}

// appendRetries bounds the appends that find the trail moved on by
// another writer.
const appendRetries = 20

// errTrailMoved: another writer appended between reading the last entry
// and publishing onto it.
var errTrailMoved = errors.New("the trail moved on")

// lastEntry returns the stream's info and its last entry's MAC ("" when
// empty).
func lastEntry(ctx context.Context, s jetstream.Stream) (*jetstream.StreamInfo, string, error) {
	info, err := s.Info(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("auditlog: stream info: %w", err)
	}
	if info.State.Msgs == 0 {
		return info, "", nil
	}
	e, err := audit.ReadEntry(ctx, s, info.State.LastSeq)
	if err != nil {
		return nil, "", err
	}
	return info, e.MAC, nil
}
