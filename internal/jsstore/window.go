package jsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsonenc"
	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Window is a claim that covers many slots at once: the value of key
// window.<shard> in sched_leases. The owner of a shard writes it by
// compare-and-swap on the key's revision before it publishes the slots it
// lists, so that one write claims a whole batch; each slot's state record
// is written after its publish was acknowledged (with the claim's Seq set,
// which settles it). An instance that gains the shard turns every listed
// slot whose state record does not show it yet into an ordinary claim on
// that record, which the per-slot protocol then settles or takes over
// (see docs/protocol.md, "Window claims").
type Window struct {
	// Shard is the shard the window belongs to.
	Shard int `json:"shard"`
	// Seq counts the shard's windows (1 for the first).
	Seq uint64 `json:"seq"`
	// Token is unique per window; the slots' claims carry it.
	Token string `json:"token"`
	// Owner is the instance that wrote the window.
	Owner string `json:"owner"`
	// At is when the window was claimed; Expires is when its owner stops
	// publishing its slots (the claim TTL later).
	At      time.Time `json:"at"`
	Expires time.Time `json:"expires"`
	// Slots are the slots the window claims.
	Slots []WindowSlot `json:"slots"`
}

// WindowSlot is one slot of a window claim.
type WindowSlot struct {
	// Schedule is the schedule id.
	Schedule string `json:"schedule"`
	// Slot is the scheduled time.
	Slot time.Time `json:"slot"`
	// Reason is the fire's reason ("moved" when a calendar moved it).
	Reason string `json:"reason,omitempty"`
}

// Claim is the per-slot claim a window stands for on slot s: the window's
// token, owner and lifetime, so that whoever settles it later (or takes it
// over when it expired) treats it like any claim.
func (w Window) Claim(s WindowSlot) kvstore.Claim {
	return kvstore.Claim{Slot: s.Slot.UTC(), Token: w.Token, Owner: w.Owner, At: w.At, Expires: w.Expires, Reason: s.Reason, Window: w.Name()}
}

// Name is "<shard>/<seq>".
func (w Window) Name() string { return strconv.Itoa(w.Shard) + "/" + strconv.FormatUint(w.Seq, 10) }

// WindowKey is the key of shard's window claim in sched_leases.
func WindowKey(shard int) string { return "window." + strconv.Itoa(shard) }

// DecodeWindow parses a window record.
func DecodeWindow(data []byte) (Window, error) {
	var w Window
	if err := json.Unmarshal(data, &w); err != nil {
		return Window{}, fmt.Errorf("%w: window record: %v", kvstore.ErrInvalid, err)
	}
	return w, nil
}

// Encode returns the record's JSON, as AppendJSON writes it into a new
// buffer.
func (w Window) Encode() ([]byte, error) {
	return w.appendJSON(make([]byte, 0, windowSizeHint+windowSlotSizeHint*len(w.Slots)))
}

// GetWindow reads shard's window claim and its revision; ErrNotFound when
// the shard has none. A record that does not decode is returned as
// ErrInvalid with its revision, so that a new window can replace it.
func (s *Store) GetWindow(ctx context.Context, shard int) (Window, uint64, error) {
	key := WindowKey(shard)
	e, err := get(ctx, s.leases, "window claim", key)
	if err != nil {
		return Window{}, 0, fmt.Errorf("kvstore: get %s: %w", key, err)
	}
	w, err := DecodeWindow(e.Value())
	if err == nil && w.Shard != shard {
		err = fmt.Errorf("%w: window record %s names shard %d", kvstore.ErrInvalid, key, w.Shard)
	}
	return w, e.Revision(), err
}

// PutWindow writes shard's window claim if the key is still at revision
// rev (0: it does not exist). ErrConflict: another window (or an
// instance's check of it) came first; re-read.
func (s *Store) PutWindow(ctx context.Context, w Window, rev uint64) (uint64, error) {
	data, err := w.Encode()
	if err != nil {
		return 0, fmt.Errorf("kvstore: encode window %s: %w", w.Name(), err)
	}
	key := WindowKey(w.Shard)
	var n uint64
	if rev == 0 {
		n, err = s.leases.Create(ctx, key, data)
	} else {
		n, err = s.update(ctx, s.leases, key, data, rev)
	}
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return 0, fmt.Errorf("kvstore: claim window %s at revision %d: %w", w.Name(), rev, kvstore.ErrConflict)
		}
		return 0, fmt.Errorf("kvstore: claim window %s: %w", w.Name(), err)
	}
	return n, nil
}

// PutWindowAsync sends w as shard w.Shard's window record on the
// condition that the record is still at revision rev (which must not be
// 0: a first window is created by PutWindow), without waiting: the
// steady path claims the windows of several shards at once and awaits
// them together. WindowAck reads the future's outcome as PutWindow
// returns it.
func (s *Store) PutWindowAsync(ctx context.Context, w Window, rev uint64) (jetstream.PubAckFuture, error) {
	if rev == 0 {
		return nil, fmt.Errorf("kvstore: claim window %s: an asynchronous claim needs the record's revision", w.Name())
	}
	data, err := w.Encode()
	if err != nil {
		return nil, fmt.Errorf("kvstore: encode window %s: %w", w.Name(), err)
	}
	f, err := s.PublishAsync(ctx, s.updateMsg(s.leases, WindowKey(w.Shard), data, rev))
	if err != nil {
		return nil, fmt.Errorf("kvstore: claim window %s: %w", w.Name(), err)
	}
	return f, nil
}

// WindowAck is the outcome of window w's PutWindowAsync at revision rev
// from its acknowledgement or error: the new revision, or an error that
// wraps kvstore.ErrConflict when the record changed since rev.
func WindowAck(w Window, rev uint64, ack *jetstream.PubAck, err error) (uint64, error) {
	switch {
	case err == nil:
		return ack.Sequence, nil
	case natserr.WrongLastSequence(err):
		return 0, fmt.Errorf("kvstore: claim window %s at revision %d: %w", w.Name(), rev, kvstore.ErrConflict)
	default:
		return 0, fmt.Errorf("kvstore: claim window %s: %w", w.Name(), err)
	}
}

// UpdateStateAsync sends st as the state of id on the condition that the
// record is still at revision rev (0: that it has never been written),
// without waiting: the future reports the new revision (its sequence) or
// the conflict (check with StateConflict). Over a delete marker, rev is
// the marker's revision.
// It waits for room as PublishAsync does.
func (s *Store) UpdateStateAsync(ctx context.Context, id string, st kvstore.State, rev uint64) (jetstream.PubAckFuture, error) {
	data, err := st.Encode()
	if err != nil {
		return nil, fmt.Errorf("kvstore: encode state %q: %w", id, err)
	}
	f, err := s.PublishAsync(ctx, s.updateMsg(s.state, id, data, rev))
	if err != nil {
		return nil, fmt.Errorf("kvstore: update state %q: %w", id, err)
	}
	return f, nil
}

// StateConflict reports whether err is a conditional state write's
// refusal: the record changed since the revision it was sent against.
func StateConflict(err error) bool { return natserr.WrongLastSequence(err) }

// windowSizeHint and windowSlotSizeHint size Window.Encode's buffer: the
// fields around the slots, and a slot (about 60 bytes with a short id).
const (
	windowSizeHint     = 192
	windowSlotSizeHint = 80
)

// appendJSON appends the window record's JSON to b and returns the
// extended buffer, in the form internal/jsonenc describes. It fails, like
// json.Marshal, on a time whose year is outside [0, 9999] or whose zone
// offset is 24 hours or more, with an error that wraps ErrInvalid; b is
// returned unchanged then.
func (w Window) appendJSON(b []byte) ([]byte, error) {
	e := jsonenc.Encoder{B: append(b, '{')}
	e.Int(`"shard":`, int64(w.Shard), false)
	e.Uint(`"seq":`, w.Seq, false)
	e.Str(`"token":`, w.Token, false)
	e.Str(`"owner":`, w.Owner, false)
	e.Time(`"at":`, w.At, false)
	e.Time(`"expires":`, w.Expires, false)
	e.Key(`"slots":`)
	if w.Slots == nil {
		e.B = append(e.B, "null"...) // as encoding/json writes a nil slice
	} else {
		e.B = append(e.B, '[')
		for i := range w.Slots {
			s := &w.Slots[i]
			e.Element("slots[].")
			e.Str(`"schedule":`, s.Schedule, false)
			e.Time(`"slot":`, s.Slot, false)
			e.Str(`"reason":`, s.Reason, true)
			e.Close()
		}
		e.B = append(e.B, ']')
	}
	e.Close()
	out, err := e.Result(b)
	if err != nil {
		return b, fmt.Errorf("%w: window record: %w", kvstore.ErrInvalid, err)
	}
	return out, nil
}
