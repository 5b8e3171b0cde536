// Package audit keeps a tamper-evident trail of every schedule mutation and
// operator action in the stream SCHED_AUDIT (DenyDelete, DenyPurge). Each
// entry carries the HMAC-SHA256 of the previous entry's MAC and its own
// content, so changing, inserting or removing an entry breaks the chain;
// every Interval entries a signed checkpoint lets Verify start from there
// instead of from the beginning. The key comes from a file or an
// environment variable and never enters NATS.
package audit

import (
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

	"github.com/jetsched/jetsched/internal/natserr"
)

// Stream and subject of the trail.
const (
	Stream  = "SCHED_AUDIT"
	Subject = "sched.audit"
)

// Entry is one audited action.
type Entry struct {
	Kind   string          `json:"kind"` // "action" or "checkpoint"
	At     time.Time       `json:"at"`
	Actor  string          `json:"actor"`  // "cli:alice@host", "api", "client:<service>"
	Action string          `json:"action"` // "schedule.put", "schedule.delete", "schedule.pause", "calendar.put", ...
	Target string          `json:"target"` // the schedule id, calendar name, timer key
	Detail json.RawMessage `json:"detail,omitempty"`
	// Covers is the stream sequence a checkpoint vouches for (every entry
	// up to it verified by the chain).
	Covers uint64 `json:"covers,omitempty"`
	// Prev is the MAC of the previous entry ("" for the first); MAC is
	// HMAC-SHA256(key, Prev || the entry without MAC), hex.
	Prev string `json:"prev"`
	MAC  string `json:"mac"`
}

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

// Setup creates the audit stream (append-only).
func Setup(ctx context.Context, js jetstream.JetStream, replicas int) error {
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: Stream, Description: "jetsched audit trail (HMAC chain)", Subjects: []string{Subject + ".>"},
		Storage: jetstream.FileStorage, Replicas: max(replicas, 1), DenyDelete: true, DenyPurge: true,
		Retention: jetstream.LimitsPolicy, Discard: jetstream.DiscardNew,
	})
	if err != nil {
		return fmt.Errorf("audit: create stream %s: %w", Stream, err)
	}
	return nil
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

// Log appends to the trail. It is safe for concurrent use, also across
// processes: an append expects the stream's last sequence and retries.
type Log struct {
	js    jetstream.JetStream
	key   []byte
	actor string
}

// New returns a Log that signs with key and records actor.
func New(js jetstream.JetStream, key []byte, actor string) *Log {
	return &Log{js: js, key: key, actor: actor}
}

type actorKey struct{}

// WithActor tells Record who asked for the action (for example the
// operator an admin API request names); it is recorded after the log's own
// actor: "scheduler:a1 for cli:alice@host".
func WithActor(ctx context.Context, actor string) context.Context {
	if actor == "" {
		return ctx
	}
	return context.WithValue(ctx, actorKey{}, actor)
}

// Record appends an action (and, every Interval entries, a checkpoint).
func (l *Log) Record(ctx context.Context, action, target string, detail any) error {
	actor := l.actor
	if on, ok := ctx.Value(actorKey{}).(string); ok {
		actor += " for " + on
	}
	var raw json.RawMessage
	if detail != nil {
		b, err := json.Marshal(detail)
		if err != nil {
			return fmt.Errorf("audit: detail: %w", err)
		}
		raw = b
	}
	seq, err := l.append(ctx, Entry{Kind: "action", Actor: actor, Action: action, Target: target, Detail: raw})
	if err != nil {
		return err
	}
	if seq%Interval == 0 {
		_, err = l.append(ctx, Entry{Kind: "checkpoint", Actor: l.actor, Action: "checkpoint", Covers: seq})
	}
	return err
}

func (l *Log) append(ctx context.Context, e Entry) (uint64, error) {
	stream, err := l.js.Stream(ctx, Stream)
	if err != nil {
		return 0, fmt.Errorf("audit: stream %s: %w", Stream, err)
	}
	for attempt := 0; attempt < 20; attempt++ {
		last, prev, err := lastEntry(ctx, stream)
		if err != nil {
			return 0, err
		}
		e.At, e.Prev = time.Now().UTC(), prev
		e.MAC = mac(l.key, e)
		data, _ := json.Marshal(e)
		ack, err := l.js.Publish(ctx, Subject+"."+e.Kind, data, jetstream.WithExpectLastSequence(last))
		if err == nil {
			return ack.Sequence, nil
		}
		if natserr.WrongLastSequence(err) {
			time.Sleep(time.Duration(attempt+1) * 5 * time.Millisecond)
			continue // someone appended meanwhile: chain onto theirs
		}
		return 0, fmt.Errorf("audit: append: %w", err)
	}
	return 0, errors.New("audit: append: the trail kept moving; gave up")
}

// lastEntry returns the last sequence and its MAC (0, "" when empty).
func lastEntry(ctx context.Context, s jetstream.Stream) (uint64, string, error) {
	info, err := s.Info(ctx)
	if err != nil {
		return 0, "", fmt.Errorf("audit: stream info: %w", err)
	}
	if info.State.Msgs == 0 {
		return info.State.LastSeq, "", nil
	}
	m, err := s.GetMsg(ctx, info.State.LastSeq)
	if err != nil {
		return 0, "", fmt.Errorf("audit: last entry: %w", err)
	}
	var e Entry
	if err := json.Unmarshal(m.Data, &e); err != nil {
		return 0, "", fmt.Errorf("audit: last entry %d is not an entry: %w", info.State.LastSeq, err)
	}
	return info.State.LastSeq, e.MAC, nil
}

// Report is what Verify found.
type Report struct {
	From, To uint64 // the sequences walked
	Entries  int
	// Broken names the first broken link ("" when the chain holds).
	Broken string
	// BrokenSeq is its stream sequence.
	BrokenSeq uint64
}

// Verify walks the trail from the last checkpoint (or from sequence from,
// when not zero) to the end and reports the first broken link: an entry
// whose MAC does not match (forged or altered), whose Prev is not the MAC
// before it (inserted or reordered), or a missing sequence (deleted).
func Verify(ctx context.Context, js jetstream.JetStream, key []byte, from uint64) (Report, error) {
	s, err := js.Stream(ctx, Stream)
	if err != nil {
		return Report{}, fmt.Errorf("audit: stream %s: %w", Stream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return Report{}, err
	}
	r := Report{To: info.State.LastSeq}
	if info.State.Msgs == 0 {
		return r, nil
	}
	start := from
	if start == 0 {
		start = lastCheckpoint(ctx, s, info.State.FirstSeq, info.State.LastSeq)
	}
	start = max(start, info.State.FirstSeq)
	r.From = start
	prevMAC := ""
	if start > info.State.FirstSeq {
		m, err := s.GetMsg(ctx, start-1)
		if err != nil {
			r.Broken, r.BrokenSeq = fmt.Sprintf("entry %d (before the starting point) is missing: deleted", start-1), start-1
			return r, nil
		}
		var e Entry
		_ = json.Unmarshal(m.Data, &e)
		prevMAC = e.MAC
	}
	for seq := start; seq <= info.State.LastSeq; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				r.Broken, r.BrokenSeq = fmt.Sprintf("entry %d is missing: deleted from the trail", seq), seq
				return r, nil
			}
			return r, err
		}
		var e Entry
		if err := json.Unmarshal(m.Data, &e); err != nil {
			r.Broken, r.BrokenSeq = fmt.Sprintf("entry %d is not an audit entry: forged", seq), seq
			return r, nil
		}
		switch {
		case e.Prev != prevMAC:
			r.Broken, r.BrokenSeq = fmt.Sprintf("entry %d does not follow entry %d (its prev is not that entry's MAC): inserted, reordered, or an entry before it was removed", seq, seq-1), seq
			return r, nil
		case !hmac.Equal([]byte(e.MAC), []byte(mac(key, e))):
			r.Broken, r.BrokenSeq = fmt.Sprintf("entry %d (%s %s by %s) has a wrong MAC: forged or altered", seq, e.Action, e.Target, e.Actor), seq
			return r, nil
		}
		prevMAC = e.MAC
		r.Entries++
	}
	return r, nil
}

// lastCheckpoint finds the newest checkpoint entry's covered sequence (the
// first sequence when there is none).
func lastCheckpoint(ctx context.Context, s jetstream.Stream, first, last uint64) uint64 {
	m, err := s.GetLastMsgForSubject(ctx, Subject+".checkpoint")
	if err != nil {
		return first
	}
	var e Entry
	if json.Unmarshal(m.Data, &e) != nil || e.Covers < first || e.Covers >= m.Sequence || m.Sequence > last {
		return first
	}
	// The walk includes the checkpoint itself, so a forged one is caught.
	return e.Covers
}
