package kvstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/strictjson"
)

// Timer is a pending wakeup: the value of key "<run>.<step>" (each part
// escaped, see package wakeup) in sched_wakeups. Registering the same
// (run, step) again replaces it. Times are UTC on the wire.
type Timer struct {
	Run      string `json:"run"`
	Step     string `json:"step"`
	Workflow string `json:"workflow"`
	// Due is when the wakeup fires.
	Due time.Time `json:"due"`
	// When is the form it was registered with ("48 whours", "02:00"...),
	// with the Zone and Calendar it was computed in.
	When     string `json:"when,omitempty"`
	Zone     string `json:"zone,omitempty"`
	Calendar string `json:"calendar,omitempty"`
	// WhenExpr is the expression the due time was computed from
	// (registered with when_expr), evaluated once at registration.
	WhenExpr string `json:"when_expr,omitempty"`
	// Payload is the wakeup message body, unchanged.
	Payload json.RawMessage `json:"payload,omitempty"`
	// Condition is a token the worker checks before acting (for example
	// the activity the run must still be in); a stale wakeup is dropped.
	// With ConditionKey, it is also the value the scheduler checks.
	Condition string `json:"condition,omitempty"`
	// ConditionKey is "<bucket>/<key>", a KV key the workflow side keeps
	// current: at fire time the scheduler reads it, and a value other
	// than Condition (or no value) drops the timer as stale, unpublished.
	ConditionKey string `json:"condition_key,omitempty"`
	// ExpiresAt drops the timer (recorded as expired) if it has not been
	// delivered by then.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	Created   time.Time `json:"created"`
	// Rearms counts "not ready, retry at T" re-registrations.
	Rearms int `json:"rearms,omitempty"`
	// Claim is set while a scheduler fires it.
	Claim *Claim `json:"claim,omitempty"`
}

// WakeupID names one firing of a timer: "wakeup.<key>.<due unix ms>". It
// is the wakeup message's Nats-Msg-Id and its ledger key in sched_ticks.
func WakeupID(key string, due time.Time) string {
	return "wakeup." + key + "." + strconv.FormatInt(due.UnixMilli(), 10)
}

// DecodeTimer parses a sched_wakeups value: a JSON object, no key given
// twice. It does not validate it (ValidateTimer does, ReadTimer does
// both). Errors are *FieldError naming "timer" (or the field holding the
// repeated key).
func DecodeTimer(data []byte) (Timer, error) {
	if err := strictjson.Check(data); err != nil {
		return Timer{}, duplicateKey(err, "timer")
	}
	var t Timer
	if err := json.Unmarshal(data, &t); err != nil {
		return Timer{}, &FieldError{Field: "timer", Reason: "not a timer record (docs/records.md)", Err: err}
	}
	return t, nil
}

// ReadTimer decodes and validates the record stored under key, as the
// scheduler does with every timer it reads: DecodeTimer, then
// ValidateTimer.
func ReadTimer(key string, data []byte) (Timer, error) {
	t, err := DecodeTimer(data)
	if err != nil {
		return Timer{}, err
	}
	return t, ValidateTimer(key, t)
}

// TimerEntry is a timer with its key and revision.
type TimerEntry struct {
	Key      string
	Timer    Timer
	Revision uint64
}

// PutTimer writes a timer under key, replacing any pending one, without
// an audit intent (PutTimerAudited writes one first).
func (s *Store) PutTimer(ctx context.Context, key string, t Timer) (uint64, error) {
	data, err := json.Marshal(t)
	if err != nil {
		return 0, fmt.Errorf("kvstore: encode timer %s: %w", key, err)
	}
	rev, err := s.wakeups.Put(ctx, key, data)
	if err != nil {
		return 0, fmt.Errorf("kvstore: put timer %s: %w", key, err)
	}
	return rev, nil
}

// PutTimerAudited writes a timer under key like PutTimer, after appending
// its intent (action, the timer as detail) to the audit trail: when the
// trail does not take it, nothing is written (ErrAuditUnavailable).
func (s *Store) PutTimerAudited(ctx context.Context, action, key string, t Timer) (uint64, error) {
	data, err := json.Marshal(t)
	if err != nil {
		return 0, fmt.Errorf("kvstore: encode timer %s: %w", key, err)
	}
	var rev uint64
	err = s.WriteAhead(ctx, Intent{Action: action, Target: key, Detail: t, Bucket: s.layout.WakeupsBucket, Key: key, SHA256: sha256Hex(data)},
		func(mark AuditMark) (err error) {
			rev, err = s.putMarked(ctx, s.wakeups, key, data, mark)
			return err
		})
	if err != nil {
		return 0, fmt.Errorf("kvstore: put timer %s: %w", key, err)
	}
	return rev, nil
}

// GetTimer reads a timer; ErrNotFound when none is pending.
func (s *Store) GetTimer(ctx context.Context, key string) (TimerEntry, error) {
	e, err := get(ctx, s.wakeups, "timer", key)
	if err != nil {
		return TimerEntry{}, fmt.Errorf("kvstore: get timer %s: %w", key, err)
	}
	t, err := DecodeTimer(e.Value())
	return TimerEntry{Key: key, Timer: t, Revision: e.Revision()}, err
}

// UpdateTimer writes t if the timer is still at revision rev.
func (s *Store) UpdateTimer(ctx context.Context, key string, t Timer, rev uint64) (uint64, error) {
	data, err := json.Marshal(t)
	if err != nil {
		return 0, fmt.Errorf("kvstore: encode timer %s: %w", key, err)
	}
	n, err := s.wakeups.Update(ctx, key, data, rev)
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, jetstream.ErrKeyRevisionMismatch):
		return 0, fmt.Errorf("kvstore: update timer %s at revision %d: %w", key, rev, ErrConflict)
	}
	return 0, fmt.Errorf("kvstore: update timer %s: %w", key, err)
}

// DeleteTimer removes a timer if it is still at revision rev (a
// scheduler's own delete of a timer it fired: no audit intent).
func (s *Store) DeleteTimer(ctx context.Context, key string, rev uint64) error {
	_, err := s.deleteTimer(ctx, key, rev, 0)
	return err
}

// CancelTimer removes a timer if it is still at revision rev, after
// appending the intent (action "wakeup.cancel", detail) to the audit
// trail: when the trail does not take it, nothing is removed
// (ErrAuditUnavailable). It returns the delete's revision.
func (s *Store) CancelTimer(ctx context.Context, key string, rev uint64, detail any) (uint64, error) {
	var n uint64
	err := s.WriteAhead(ctx, Intent{Action: "wakeup.cancel", Target: key, Detail: detail, Bucket: s.layout.WakeupsBucket, Key: key, Expect: rev},
		func(mark AuditMark) (err error) {
			n, err = s.deleteTimer(ctx, key, rev, mark)
			return err
		})
	return n, err
}

// deleteTimer removes a timer at revision rev, carrying mark.
func (s *Store) deleteTimer(ctx context.Context, key string, rev uint64, mark AuditMark) (uint64, error) {
	n, err := s.deleteKey(ctx, s.wakeups, key, rev, mark)
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, jetstream.ErrKeyRevisionMismatch):
		return 0, fmt.Errorf("kvstore: delete timer %s at revision %d: %w", key, rev, ErrConflict)
	}
	return 0, fmt.Errorf("kvstore: delete timer %s: %w", key, err)
}

// ListTimers returns the pending timers whose keys match filter (">" for
// all, "<escaped run>.*" for one run).
func (s *Store) ListTimers(ctx context.Context, filter string) ([]TimerEntry, error) {
	var out []TimerEntry
	err := s.readAll(ctx, s.wakeups, filter, func(e jetstream.KeyValueEntry) {
		if t, err := DecodeTimer(e.Value()); err == nil {
			out = append(out, TimerEntry{Key: e.Key(), Timer: t, Revision: e.Revision()})
		}
	})
	if err != nil {
		return nil, fmt.Errorf("kvstore: list timers %s: %w", filter, err)
	}
	return out, nil
}

// WatchTimers watches every timer like WatchSpecs.
func (s *Store) WatchTimers(ctx context.Context) (jetstream.KeyWatcher, error) {
	return s.watch(ctx, s.wakeups, watchOpts{})
}

// DeleteTimerAsync sends the delete of timer key at revision rev without
// waiting: the future reports its acknowledgement, or the conflict when
// the timer changed since (registered again). It waits for room as
// PublishAsync does.
func (s *Store) DeleteTimerAsync(ctx context.Context, key string, rev uint64) (jetstream.PubAckFuture, error) {
	m := nats.NewMsg(s.kvSubject(s.wakeups, key))
	m.Header.Set("KV-Operation", "DEL")
	m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(rev, 10))
	f, err := s.PublishAsync(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("kvstore: delete timer %s: %w", key, err)
	}
	return f, nil
}

// CreateTick writes a ledger entry only if there is none under its key
// yet; created is false when one was there (and is kept). For entries a
// forged record may cause (an invalid timer's), which must not overwrite
// what a real firing recorded under the same slot id.
func (s *Store) CreateTick(ctx context.Context, t Tick) (created bool, err error) {
	data, err := t.Encode()
	if err != nil {
		return false, fmt.Errorf("kvstore: encode tick: %w", err)
	}
	key := t.Key()
	_, err = s.ticks.Create(ctx, key, data)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, jetstream.ErrKeyExists):
		return false, nil
	}
	return false, fmt.Errorf("kvstore: create tick %s: %w", key, err)
}
