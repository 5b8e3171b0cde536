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
// ReadEntry, ParseHead) and the entry and head types with their MACs
// (Entry.Sign, Entry.Valid, Head.Sign, Head.SignedBy) keep their
// signatures within a major version. The scheduler's writer of the trail
// (appending intents and checkpoints, anchoring heads) is not part of
// this package.
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

	"github.com/nats-io/nats.go/jetstream"
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

// mac computes an entry's MAC.
func mac(key []byte, e Entry) string {
	e.MAC = ""
	body, _ := json.Marshal(e)
	h := hmac.New(sha256.New, key)
	h.Write([]byte(e.Prev))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// Sign returns e with the MAC of its content chained onto e.Prev, as a
// writer appends it.
func (e Entry) Sign(key []byte) Entry {
	e.MAC = mac(key, e)
	return e
}

// Valid reports whether e's MAC is right for key (the entry itself is
// unaltered; whether it follows its predecessor is the chain's business).
func (e Entry) Valid(key []byte) bool {
	return hmac.Equal([]byte(e.MAC), []byte(mac(key, e)))
}

// ReadEntry reads and decodes the entry at seq of the trail's stream s.
func ReadEntry(ctx context.Context, s jetstream.Stream, seq uint64) (Entry, error) {
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
