package auditor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/directget"
	"github.com/jetsched/jetsched/internal/jsname"
	"github.com/jetsched/jetsched/internal/natserr"
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
		}
	}
	return l.rev != 0 && time.Since(l.renewed) < l.ttl*9/10
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
