// Package audit keeps a tamper-evident trail of every mutation and operator
// action in the stream SCHED_AUDIT (DenyDelete, DenyPurge). Each entry
// carries the HMAC-SHA256 of the previous entry's MAC and its own content,
// so changing, inserting or removing an entry breaks the chain; signed
// checkpoints let Verify start from the last one instead of from the
// beginning, and each checkpoint's head (sequence, MAC, the stream's
// creation time) is also anchored in the key-value bucket sched_audit_head,
// outside the stream, so that a trail rolled back to an earlier state is
// caught (Head). Dispatch digests (Digest) cover the fire and wakeup
// streams, and external entries (External) record changes written straight
// into the buckets. The key comes from a file or an environment variable
// and never enters NATS.
//
// Stability: the trail's entries, digests, checkpoints and signatures
// follow docs/operations.md ("Audit trail") and change only compatibly:
// a trail written by one release verifies with the next. The Go API for
// verifying (Verify, VerifyOptions, Report and its parts, ReadAnchors,
// ParseHead) keeps its signatures within a major version; the writing
// side (Log, Setup) is what the scheduler uses and may change with it.
package audit

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/internal/pipeline"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Stream, subject and head bucket of the default trail.
const (
	Stream     = "SCHED_AUDIT"
	Subject    = "sched.audit"
	HeadBucket = "sched_audit_head"
)

// Trail names a trail's stream, the subject prefix its entries are
// published under, and the bucket its head is anchored in. The zero value
// is the default trail (Stream, Subject, HeadBucket).
type Trail struct {
	Stream, Subject, HeadBucket string
}

// WithDefaults fills in the default names.
func (t Trail) WithDefaults() Trail {
	t.Stream = cmp.Or(t.Stream, Stream)
	t.Subject = cmp.Or(t.Subject, Subject)
	t.HeadBucket = cmp.Or(t.HeadBucket, HeadBucket)
	return t
}

// Entry kinds.
const (
	KindAction     = "action"
	KindCheckpoint = "checkpoint"
	KindDigest     = "digest"
	KindExternal   = "external"
)

// Entry is one audited action.
type Entry struct {
	Kind string    `json:"kind"` // KindAction, KindCheckpoint, KindDigest or KindExternal
	At   time.Time `json:"at"`
	// Actor is who asked for the action: the NATS user the server reported
	// for an admin API request ("unauthenticated" when the server vouched
	// for nobody), else the writer itself ("scheduler:<instance>").
	Actor string `json:"actor"`
	// ActorAccount is the NATS account the server reported with the user.
	ActorAccount string `json:"actor_account,omitempty"`
	// ClaimedActor is what the caller said it was (the Sched-Actor header),
	// recorded as given and never verified.
	ClaimedActor string `json:"claimed_actor,omitempty"`
	// By is the process that wrote the entry ("scheduler:<instance>").
	By     string          `json:"by,omitempty"`
	Action string          `json:"action"` // "schedule.put", "wakeup.add", "dispatch.digest", "external.change", ...
	Target string          `json:"target"` // the schedule id, calendar name, timer key, stream or bucket
	Detail json.RawMessage `json:"detail,omitempty"`
	// Bucket and Rev name the key-value revision the action wrote, so that
	// the watch for external changes knows it came through the API: the
	// form of entries written after their write, before write-ahead
	// (Phase ""). An intent names Bucket and Key, not Rev: its write
	// names the intent (header kvstore.AuditSeqHeader).
	Bucket string `json:"bucket,omitempty"`
	Rev    uint64 `json:"rev,omitempty"`
	// Phase is PhaseIntent for an action appended before its write,
	// PhaseAbandoned for the record that intents (Intents) were not
	// applied, "" for an action entry of the earlier form (appended after
	// its write, naming Rev) or one that writes nothing.
	Phase string `json:"phase,omitempty"`
	// Key is the key an intent writes in Bucket; Expect the revision it
	// expected the key at (0: unknown or none); SHA256 the hex SHA-256 of
	// the value it writes ("" for a delete, or a value not known ahead).
	Key    string `json:"key,omitempty"`
	Expect uint64 `json:"expect_rev,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	// Intents are the sequences of the intents an abandoned entry says
	// were not applied.
	Intents []uint64 `json:"intents,omitempty"`
	// Covers is the stream sequence a checkpoint vouches for (every entry
	// up to it verified by the chain).
	Covers uint64 `json:"covers,omitempty"`
	// Prev is the MAC of the previous entry ("" for the first); MAC is
	// HMAC-SHA256(key, Prev || the entry without MAC), hex.
	Prev string `json:"prev"`
	MAC  string `json:"mac"`
}

// Phases of an action entry (Entry.Phase).
const (
	PhaseIntent    = "intent"
	PhaseAbandoned = "abandoned"
)

// Interval is how many entries a checkpoint follows.
const Interval = 100

// LoadKey reads the HMAC key: the file named by keyFile, else the
// environment variable JETSCHED_AUDIT_KEY. At least 16 bytes.
func LoadKey(keyFile string) ([]byte, error) {
	var key []byte
	switch {
	case keyFile != "":
		b, err := os.ReadFile(keyFile)
		if err != nil {
			return nil, fmt.Errorf("audit: key file: %w", err)
		}
		key = []byte(strings.TrimSpace(string(b)))
	case os.Getenv("JETSCHED_AUDIT_KEY") != "":
		key = []byte(os.Getenv("JETSCHED_AUDIT_KEY"))
	default:
		return nil, errors.New("audit: no key: give a key file or set JETSCHED_AUDIT_KEY")
	}
	if len(key) < 16 {
		return nil, errors.New("audit: the key must be at least 16 bytes")
	}
	return key, nil
}

// Setup creates the trail's stream (append-only) and its head bucket.
func Setup(ctx context.Context, js jetstream.JetStream, t Trail, replicas int) error {
	t = t.WithDefaults()
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: t.Stream, Description: "jetsched audit trail (HMAC chain)", Subjects: []string{t.Subject + ".>"},
		Storage: jetstream.FileStorage, Replicas: max(replicas, 1), DenyDelete: true, DenyPurge: true,
		Retention: jetstream.LimitsPolicy, Discard: jetstream.DiscardNew,
	})
	if err != nil {
		return fmt.Errorf("audit: create stream %s: %w", t.Stream, err)
	}
	return setupHead(ctx, js, t, replicas)
}

// mac computes an entry's MAC.
func mac(key []byte, e Entry) string {
	e.MAC = ""
	body, _ := json.Marshal(e)
	h := hmac.New(sha256.New, key)
	h.Write([]byte(e.Prev))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// Valid reports whether e's MAC is right for key (the entry itself is
// unaltered; whether it follows its predecessor is the chain's business).
func (e Entry) Valid(key []byte) bool {
	return hmac.Equal([]byte(e.MAC), []byte(mac(key, e)))
}

// Log appends to the trail. It is safe for concurrent use, also across
// processes: an append expects the stream's last sequence and retries.
type Log struct {
	js       jetstream.JetStream
	key      []byte
	by       string
	trail    Trail
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
	return &Log{js: js, key: key, by: by, trail: Trail{}.WithDefaults(), rollback: func(error) {}, failure: func(Failure) {}}
}

// WithTrail returns a copy of l that writes to trail t.
func (l *Log) WithTrail(t Trail) *Log {
	c := *l
	c.trail = t.WithDefaults()
	return &c
}

// WithRollback returns a copy of l that calls report when a checkpoint
// finds the trail does not extend its anchored head (a *RollbackError);
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
func (l *Log) Trail() Trail { return l.trail }

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
	e, err := l.actionEntry(ctx, kvstore.Intent{Action: action, Target: target, Detail: detail})
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
func (l *Log) Intend(ctx context.Context, in kvstore.Intent) (uint64, error) {
	e, err := l.actionEntry(ctx, in)
	if err != nil {
		return 0, err
	}
	e.Phase = PhaseIntent
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
	e, err := l.actionEntry(ctx, kvstore.Intent{Action: "intent.abandoned", Target: l.trail.Stream, Detail: map[string]string{"reason": reason}})
	if err != nil {
		return err
	}
	e.Phase, e.Intents = PhaseAbandoned, seqs
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
func (l *Log) appendAction(ctx context.Context, e Entry) (uint64, error) {
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
func (l *Log) actionEntry(ctx context.Context, in kvstore.Intent) (Entry, error) {
	e := Entry{Kind: KindAction, Actor: l.by, By: l.by, Action: in.Action, Target: in.Target,
		Bucket: in.Bucket, Key: in.Key, Expect: in.Expect, SHA256: in.SHA256}
	if r, ok := ctx.Value(requesterKey{}).(Requester); ok {
		e.Actor, e.ActorAccount, e.ClaimedActor = r.Actor(), r.Account, r.Claimed
	}
	if in.Detail != nil {
		b, err := json.Marshal(in.Detail)
		if err != nil {
			return e, fmt.Errorf("audit: detail of %s %s: %w", in.Action, in.Target, err)
		}
		e.Detail = b
	}
	return e, nil
}

// Append signs e, chains it onto the trail's last entry and appends it,
// returning its sequence. Digest entries go to "<subject>.digest.<target>",
// the others to "<subject>.<kind>", so that the last of each is found
// without a scan.
func (l *Log) Append(ctx context.Context, e Entry) (uint64, error) {
	seq, _, err := l.append(ctx, e)
	return seq, err
}

// append is Append that also returns the stream info it chained onto.
func (l *Log) append(ctx context.Context, e Entry) (uint64, *jetstream.StreamInfo, error) {
	e.By = cmp.Or(e.By, l.by)
	e.Actor = cmp.Or(e.Actor, l.by)
	subject := l.trail.Subject + "." + e.Kind
	if e.Kind == KindDigest {
		subject += "." + e.Target
	}
	stream, err := l.js.Stream(ctx, l.trail.Stream)
	if err != nil {
		return 0, nil, fmt.Errorf("audit: stream %s: %w", l.trail.Stream, err)
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
		e.MAC = mac(l.key, e)
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
		return backoff.Permanent(fmt.Errorf("audit: append: %w", err))
	}, backoff.WithMaxRetries(pipeline.Backoff(ctx), appendRetries))
	switch {
	case errors.Is(err, errTrailMoved):
		return 0, nil, fmt.Errorf("audit: append: the trail kept moving; gave up after %d attempts", appendRetries+1)
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
		return nil, "", fmt.Errorf("audit: stream info: %w", err)
	}
	if info.State.Msgs == 0 {
		return info, "", nil
	}
	e, err := entryAt(ctx, s, info.State.LastSeq)
	if err != nil {
		return nil, "", err
	}
	return info, e.MAC, nil
}

// entryAt reads and decodes the entry at seq.
func entryAt(ctx context.Context, s jetstream.Stream, seq uint64) (Entry, error) {
	m, err := s.GetMsg(ctx, seq)
	if err != nil {
		return Entry{}, fmt.Errorf("audit: entry %d: %w", seq, err)
	}
	var e Entry
	if err := json.Unmarshal(m.Data, &e); err != nil {
		return Entry{}, fmt.Errorf("audit: entry %d is not an entry: %w", seq, err)
	}
	return e, nil
}
