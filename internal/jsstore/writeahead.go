package jsstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Auditor writes the audit trail ahead of the store's changes (auditlog.Log
// is one). Intend is called before a change is applied; when it fails the
// change is not applied. Abandon is called, best effort, when a change
// whose intent was appended was then not applied.
type Auditor interface {
	// Intend appends in and returns its trail sequence (never 0).
	Intend(ctx context.Context, in Intent) (uint64, error)
	// Abandon records that the changes of the intents at seqs were not
	// applied, and why.
	Abandon(ctx context.Context, seqs []uint64, reason string) error
}

// BatchAuditor is an Auditor that appends many intents in one go, in
// order (auditlog.Log is one): SaveSpecs uses it when the store's auditor has
// it, else Intend per write.
type BatchAuditor interface {
	// IntendAll appends one intent per element of ins and returns their
	// sequences. On error, the first len(seqs) were appended.
	IntendAll(ctx context.Context, ins []Intent) ([]uint64, error)
}

// AuditMark is the trail sequence of a change's intent (0: the store has
// no auditor). A write carries it in AuditSeqHeader.
type AuditMark uint64

// set puts the mark on m's headers.
func (a AuditMark) set(m *nats.Msg) {
	if a == 0 {
		return
	}
	if m.Header == nil {
		m.Header = nats.Header{}
	}
	m.Header.Set(kvstore.AuditSeqHeader, strconv.FormatUint(uint64(a), 10))
}

// Intend appends in to the audit trail ahead of its change and returns
// the mark its write carries; with no auditor, the zero mark. An error
// wraps ErrAuditUnavailable: the change must not be made.
func (s *Store) Intend(ctx context.Context, in Intent) (AuditMark, error) {
	if s.auditor == nil {
		return 0, nil
	}
	seq, err := s.auditor.Intend(ctx, in)
	if err != nil {
		return 0, auditUnavailable(in.Action, in.Target, err)
	}
	return AuditMark(seq), nil
}

// auditUnavailable is the refusal of action on target because the trail
// could not be appended.
func auditUnavailable(action, target string, err error) error {
	return &fieldcheck.UserError{Kind: kvstore.ErrAuditUnavailable, Err: err, Msg: fmt.Sprintf(
		"audit_unavailable: the audit trail could not be written, so %s %s was not done (nothing changed): %s",
		action, target, usererr.Message(err))}
}

// Abandon records, best effort, that the change of mark was not made
// because of cause. A trail that cannot take it leaves an intent with no
// write naming it, which `audit verify` reads as not applied.
func (s *Store) Abandon(ctx context.Context, cause error, marks ...AuditMark) {
	if s.auditor == nil || len(marks) == 0 {
		return
	}
	seqs := make([]uint64, 0, len(marks))
	for _, m := range marks {
		if m != 0 {
			seqs = append(seqs, uint64(m))
		}
	}
	if len(seqs) == 0 {
		return
	}
	reason := "not applied"
	if cause != nil {
		reason = usererr.Message(cause)
	}
	_ = s.auditor.Abandon(context.WithoutCancel(ctx), seqs, reason)
}

// WriteAhead appends in's intent, then runs write with its mark; when
// write fails the intent is abandoned. It is Intend, write and Abandon
// for a change made in one go.
func (s *Store) WriteAhead(ctx context.Context, in Intent, write func(AuditMark) error) error {
	mark, err := s.Intend(ctx, in)
	if err != nil {
		return err
	}
	if err := write(mark); err != nil {
		s.Abandon(ctx, err, mark)
		return err
	}
	return nil
}

// writeMarked writes data to key of kv carrying mark, on the condition
// that the key is at revision rev (0: that it has never been written). A
// lost condition is jetstream.ErrKeyRevisionMismatch.
func (s *Store) writeMarked(ctx context.Context, kv jetstream.KeyValue, key string, data []byte, rev uint64, mark AuditMark) (uint64, error) {
	m := s.updateMsg(kv, key, data, rev)
	mark.set(m)
	return s.publishKV(ctx, m)
}

// createMarked writes data to key of kv carrying mark if the key does not
// exist (never written, or deleted), as KeyValue.Create does.
func (s *Store) createMarked(ctx context.Context, kv jetstream.KeyValue, key string, data []byte, mark AuditMark) (uint64, error) {
	rev, err := s.writeMarked(ctx, kv, key, data, 0, mark)
	if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return rev, err
	}
	last, deleted, lerr := s.lastOp(ctx, kv, key)
	if lerr != nil || !deleted {
		return 0, err
	}
	return s.writeMarked(ctx, kv, key, data, last, mark)
}

// putMarked writes data to key of kv carrying mark, whatever it holds.
func (s *Store) putMarked(ctx context.Context, kv jetstream.KeyValue, key string, data []byte, mark AuditMark) (uint64, error) {
	m := nats.NewMsg(s.kvSubject(kv, key))
	m.Data = data
	mark.set(m)
	return s.publishKV(ctx, m)
}

// publishKV publishes a key-value write and returns its revision; a lost
// condition is jetstream.ErrKeyRevisionMismatch.
func (s *Store) publishKV(ctx context.Context, m *nats.Msg) (uint64, error) {
	ack, err := s.js.PublishMsg(ctx, m)
	if err != nil {
		if natserr.WrongLastSequence(err) {
			return 0, fmt.Errorf("%w: %v", jetstream.ErrKeyRevisionMismatch, err)
		}
		return 0, err
	}
	return ack.Sequence, nil
}

// lastOp reads the last revision of key in kv and whether it is a delete
// or purge marker.
func (s *Store) lastOp(ctx context.Context, kv jetstream.KeyValue, key string) (uint64, bool, error) {
	st, err := s.js.Stream(ctx, "KV_"+kv.Bucket())
	if err != nil {
		return 0, false, err
	}
	m, err := st.GetLastMsgForSubject(ctx, "$KV."+kv.Bucket()+"."+key)
	if err != nil {
		return 0, false, err
	}
	op := m.Header.Get("KV-Operation")
	return m.Sequence, op == "DEL" || op == "PURGE", nil
}

// Intent is a change about to be made: what the audit trail records ahead
// of it.
type Intent struct {
	// Action is what is done ("schedule.put", "schedule.pause", ...) and
	// Target what it is done to (a schedule id, a calendar name, a timer
	// key).
	Action, Target string
	// Detail is the change's content (the spec written, the pause, ...).
	Detail any
	// Bucket and Key name the key-value entry the change writes.
	Bucket, Key string
	// Expect is the revision the entry is expected at when the intent is
	// written (0: not known, or the entry does not exist).
	Expect uint64
	// SHA256 is the hex SHA-256 of the value to be written, when it is
	// known before the write ("" for a delete, or a value that depends on
	// a re-read).
	SHA256 string
}
