package jsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// PutTimer writes a timer under key, replacing any pending one, without
// an audit intent (PutTimerAudited writes one first).
func (s *Store) PutTimer(ctx context.Context, key string, t kvstore.Timer) (uint64, error) {
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
func (s *Store) PutTimerAudited(ctx context.Context, action, key string, t kvstore.Timer) (uint64, error) {
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
func (s *Store) GetTimer(ctx context.Context, key string) (kvstore.TimerEntry, error) {
	e, err := get(ctx, s.wakeups, "timer", key)
	if err != nil {
		return kvstore.TimerEntry{}, fmt.Errorf("kvstore: get timer %s: %w", key, err)
	}
	t, err := kvstore.DecodeTimer(e.Value())
	return kvstore.TimerEntry{Key: key, Timer: t, Revision: e.Revision()}, err
}

// UpdateTimer writes t if the timer is still at revision rev.
func (s *Store) UpdateTimer(ctx context.Context, key string, t kvstore.Timer, rev uint64) (uint64, error) {
	data, err := json.Marshal(t)
	if err != nil {
		return 0, fmt.Errorf("kvstore: encode timer %s: %w", key, err)
	}
	n, err := s.wakeups.Update(ctx, key, data, rev)
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, jetstream.ErrKeyRevisionMismatch):
		return 0, fmt.Errorf("kvstore: update timer %s at revision %d: %w", key, rev, kvstore.ErrConflict)
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
		return 0, fmt.Errorf("kvstore: delete timer %s at revision %d: %w", key, rev, kvstore.ErrConflict)
	}
	return 0, fmt.Errorf("kvstore: delete timer %s: %w", key, err)
}

// ListTimers returns the pending timers whose keys match filter (">" for
// all, "<escaped run>.*" for one run).
func (s *Store) ListTimers(ctx context.Context, filter string) ([]kvstore.TimerEntry, error) {
	var out []kvstore.TimerEntry
	err := s.readAll(ctx, s.wakeups, filter, func(e jetstream.KeyValueEntry) {
		if t, err := kvstore.DecodeTimer(e.Value()); err == nil {
			out = append(out, kvstore.TimerEntry{Key: e.Key(), Timer: t, Revision: e.Revision()})
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
func (s *Store) CreateTick(ctx context.Context, t kvstore.Tick) (created bool, err error) {
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
