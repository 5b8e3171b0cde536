package auditor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/directget"
	"github.com/jetsched/jetsched/internal/jsname"
	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/internal/skew"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// LeaseKey is the key of the audit lease in sched_leases: its holder writes
// the dispatch digests and the external entries, so that each is written
// once however many schedulers run.
const LeaseKey = "audit"

// lease is the audit lease: one key with a per-key TTL, created by the
// instance that takes it and renewed by compare-and-swap with a fresh TTL,
// as the shard leases are.
type lease struct {
	kv       jetstream.KeyValue
	js       jetstream.JetStream
	instance string
	ttl      time.Duration

	log *slog.Logger
	// event publishes an observer event (the auditor's).
	event func(kvstore.Event)

	rev     uint64
	renewed time.Time
}

// hold renews the lease when held, else tries to take it, and reports
// whether this instance holds it (renewed within 90% of the TTL).
func (l *lease) hold(ctx context.Context) bool {
	value, _ := json.Marshal(map[string]string{"owner": l.instance, "renewed": time.Now().UTC().Format(time.RFC3339Nano), "ttl": l.ttl.String()})
	if l.rev != 0 {
		msg := &nats.Msg{Subject: jsname.KV(l.js, l.kv.Bucket(), LeaseKey), Data: value}
		ack, err := l.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(l.rev), jetstream.WithMsgTTL(l.ttl))
		switch {
		case err == nil:
			l.rev, l.renewed = ack.Sequence, time.Now()
		case natserr.WrongLastSequence(err):
			l.rev = 0 // taken over
		}
	}
	if l.rev == 0 {
		if rev, err := l.kv.Create(ctx, LeaseKey, value, jetstream.KeyTTL(l.ttl)); err == nil {
			l.rev, l.renewed = rev, time.Now()
		} else if over, why, holder := l.untrusted(ctx); over != 0 {
			l.takeOver(ctx, value, over, why, holder)
		}
	}
	return l.rev != 0 && time.Since(l.renewed) < l.ttl*9/10
}

// untrusted reads the lease another holds and judges it by the server's
// clock, as the shard leases are (docs/protocol.md, "Records judged by the
// server's clock"): a value that is no lease, a renewed time implausibly
// far from the server's time of the write, or a record not rewritten
// within its TTL by the server's time now (the leases stream's info
// says it) is not believed. It returns the record's revision, why and the
// owner it names, or 0 when the lease is believed or cannot be read.
func (l *lease) untrusted(ctx context.Context) (rev uint64, why, holder string) {
	e, err := l.kv.Get(ctx, LeaseKey)
	if err != nil {
		return 0, "", ""
	}
	var v struct {
		Owner   string    `json:"owner"`
		Renewed time.Time `json:"renewed"`
		TTL     string    `json:"ttl"`
	}
	switch {
	case json.Unmarshal(e.Value(), &v) != nil || v.Owner == "":
		return e.Revision(), "not a lease record", v.Owner
	case !skew.Plausible(v.Renewed, e.Created()):
		return e.Revision(), "implausible renewed time", v.Owner
	}
	st, err := l.kv.Status(ctx)
	if err != nil {
		return 0, "", ""
	}
	bs, ok := st.(*jetstream.KeyValueBucketStatus)
	if !ok || bs.StreamInfo() == nil || !skew.Stale(e.Created(), bs.StreamInfo().TimeStamp, v.TTL, l.ttl) {
		return 0, "", ""
	}
	return e.Revision(), "stale", v.Owner
}

// takeOver writes the lease over an untrusted record at revision over, by
// CAS with a fresh TTL, and says so.
func (l *lease) takeOver(ctx context.Context, value []byte, over uint64, why, holder string) {
	msg := &nats.Msg{Subject: jsname.KV(l.js, l.kv.Bucket(), LeaseKey), Data: value}
	ack, err := l.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(over), jetstream.WithMsgTTL(l.ttl))
	if err != nil {
		return // written meanwhile: judged again next time
	}
	l.rev, l.renewed = ack.Sequence, time.Now()
	l.log.Warn("audit lease taken over from a record not believed by the server's clock (forged, or written by hand without a TTL)",
		"key", LeaseKey, "why", why, "holder", holder)
	l.event(kvstore.Event{Kind: kvstore.EventLeaseIgnored, Key: LeaseKey, Reason: why, Holder: holder, Owner: l.instance, At: time.Now().UTC()})
}

// release hands the lease back.
func (l *lease) release(ctx context.Context) {
	if l.rev != 0 {
		_ = l.kv.Delete(ctx, LeaseKey, jetstream.LastRevision(l.rev))
		l.rev = 0
	}
}

// lastPerSubject reads the last message of each subject of a stream in
// one direct get (directget), by subject. Subjects without a message, and
// key-value delete markers, are left out.
func lastPerSubject(ctx context.Context, js jetstream.JetStream, stream string, subjects []string) (map[string][]byte, error) {
	out := make(map[string][]byte, len(subjects))
	err := directget.LastPerSubject(ctx, js, stream, subjects, func(m *nats.Msg) {
		if m.Header.Get("KV-Operation") == "" {
			out[m.Header.Get(jetstream.SubjectHeader)] = m.Data
		}
	})
	if err != nil {
		return nil, fmt.Errorf("auditor: %w", err)
	}
	return out, nil
}

// errNotHolder: Round was called on an instance without the audit lease.
var errNotHolder = errors.New("auditor: this instance does not hold the audit lease")
