package jsstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jetsched/jetsched/internal/slotid"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The fire stream is the ledger of dispatched slots: every fire is
// published on sched.fire.<workflow>.<schedule id> with its slot id as
// Nats-Msg-Id, so "was slot X published?" and "what did schedule S fire?"
// are answered by the stream itself. sched_ticks keeps only what the
// stream cannot say: slots skipped, missed, moved or failed, completion
// outcomes, and the dispatched entries of schedulers from before the
// change (see docs/records.md, "The ledger").

// Fired is one dispatched slot as the fire stream records it.
type Fired struct {
	// Schedule, Workflow and SlotID come from the message's headers.
	Schedule string
	Workflow string
	SlotID   string
	// Slot is the scheduled time (Sched-Scheduled-At).
	Slot time.Time
	// Reason is Sched-Reason, with Sched-Note after a colon when set;
	// Instance is Sched-Instance.
	Reason   string
	Instance string
	// Stream and Seq locate the message; At is when the stream stored it.
	Stream string
	Seq    uint64
	At     time.Time
}

// Tick is the ledger entry the fire stands for: dispatched, with its
// stream sequence.
func (f Fired) Tick() kvstore.Tick {
	t := kvstore.Tick{Schedule: f.Schedule, Workflow: f.Workflow, Slot: f.Slot.UTC(), Status: kvstore.TickDispatched,
		Reason: f.Reason, Owner: f.Instance, Stream: f.Stream, Seq: f.Seq, At: f.At.UTC()}
	if f.SlotID != kvstore.SlotID(f.Schedule, f.Slot) {
		t.SlotID = f.SlotID // a trigger or backfill slot
	}
	return t
}

// firedOf reads a fire message's headers; ok is false for a message that
// is not a scheduler's fire (no slot id, no schedule).
func firedOf(h nats.Header, stream string, seq uint64, at time.Time) (Fired, bool) {
	f := Fired{Schedule: h.Get(kvstore.HeaderScheduleID), Workflow: h.Get(kvstore.HeaderWorkflow), SlotID: h.Get(kvstore.HeaderMsgID),
		Reason: h.Get(kvstore.HeaderReason), Instance: h.Get(kvstore.HeaderInstance), Stream: stream, Seq: seq, At: at}
	if f.Schedule == "" || f.SlotID == "" {
		return Fired{}, false
	}
	if note := h.Get(kvstore.HeaderNote); note != "" {
		f.Reason += ": " + note // as the ledger entry of a moved slot says it
	}
	if slot, err := time.Parse(time.RFC3339Nano, h.Get(kvstore.HeaderScheduledAt)); err == nil {
		f.Slot = slot
	} else if _, slot, err := kvstore.ParseSlotID(f.SlotID); err == nil {
		f.Slot = slot
	}
	return f, true
}

// LastFired returns the last fire of schedule id in the fire stream,
// whatever its workflow; ErrNotFound when the stream holds none (never
// fired, or aged out). Only fires published on the per-schedule subject
// are found: fires of schedulers from before it are in sched_ticks.
func (s *Store) LastFired(ctx context.Context, id string) (Fired, error) {
	stream, err := s.firesStream(ctx)
	if err != nil {
		return Fired{}, err
	}
	m, err := stream.GetLastMsgForSubject(ctx, s.layout.ScheduleFires(id))
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return Fired{}, usererr.NotFound("fire of schedule", id)
	case err != nil:
		return Fired{}, fmt.Errorf("kvstore: last fire of %q in %s: %w", id, s.layout.FiresStream, err)
	}
	f, ok := firedOf(m.Header, s.layout.FiresStream, m.Sequence, m.Time)
	if !ok || f.Schedule != id {
		return Fired{}, fmt.Errorf("%w: message %d on %s is not a fire of %q", kvstore.ErrInvalid, m.Sequence, m.Subject, id)
	}
	return f, nil
}

// firesStream is the fire stream's handle, looked up once.
func (s *Store) firesStream(ctx context.Context) (jetstream.Stream, error) {
	s.firesMu.Lock()
	defer s.firesMu.Unlock()
	if s.fires == nil {
		st, err := s.js.Stream(ctx, s.layout.FiresStream)
		if err != nil {
			return nil, fmt.Errorf("kvstore: open stream %s: %w", s.layout.FiresStream, err)
		}
		s.fires = st
	}
	return s.fires, nil
}

// Published reports whether slot slotID of schedule id is in the fire
// stream, and where: it is, when the schedule's last fire is that slot.
// This answers for the slot a schedule's state record holds in doubt (its
// latest claim): no later fire of the schedule can exist while that claim
// is unsettled, so if it was published it is the last one.
func (s *Store) Published(ctx context.Context, id, slotID string) (Fired, bool, error) {
	f, err := s.LastFired(ctx, id)
	switch {
	case errors.Is(err, kvstore.ErrNotFound):
		return Fired{}, false, nil
	case err != nil:
		return Fired{}, false, err
	}
	return f, f.SlotID == slotID, nil
}

// FiresOf calls fn with every fire of schedule id in the fire stream,
// oldest first (in stream order), reading headers only, until fn returns
// false or the stream has no more. Its consumer is deleted when it
// returns: left to its inactivity threshold, a thousand calls within it
// (an audit of every schedule, a console paging the ledger) would reach
// the server's consumers per stream (1,000 by default from nats-server
// 2.15) and workers could not create theirs.
func (s *Store) FiresOf(ctx context.Context, id string, fn func(Fired) bool) error {
	stream := s.layout.FiresStream
	cons, err := s.js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{s.layout.ScheduleFires(id)}, DeliverPolicy: jetstream.DeliverAllPolicy,
		HeadersOnly: true, InactiveThreshold: time.Minute,
	})
	if err != nil {
		return fmt.Errorf("kvstore: read the fires of %q in %s: %w", id, stream, err)
	}
	defer s.deleteConsumer(stream, cons)
	for {
		batch, err := cons.FetchNoWait(256)
		if err != nil {
			return fmt.Errorf("kvstore: read the fires of %q in %s: %w", id, stream, err)
		}
		n, last := 0, false
		for m := range batch.Messages() {
			n++
			if last {
				continue // drain the batch
			}
			md, err := m.Metadata()
			if err != nil {
				continue
			}
			if f, ok := firedOf(m.Headers(), stream, md.Sequence.Stream, md.Timestamp); ok && f.Schedule == id && !fn(f) {
				last = true
			}
			if md.NumPending == 0 {
				last = true
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return fmt.Errorf("kvstore: read the fires of %q in %s: %w", id, stream, err)
		}
		if n == 0 || last {
			return nil
		}
	}
}

// DeleteConsumer deletes ordered consumer cons of stream once a read is
// done with it, as the store's own reads do (deleteConsumer).
func (s *Store) DeleteConsumer(stream string, cons jetstream.Consumer) {
	s.deleteConsumer(stream, cons)
}

// deleteConsumer deletes an ordered consumer a read is done with, under
// a context of its own (the read's may have ended).
func (s *Store) deleteConsumer(stream string, cons jetstream.Consumer) {
	info := cons.CachedInfo()
	if info == nil || info.Name == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.js.DeleteConsumer(ctx, stream, info.Name) // gone already, or the server away: its inactivity threshold ends it
}

// scheduleOfSlot is the schedule id of a slot id: "<id>.<unix ms>" or
// "<id>.<kind>-<unix ms>".
func scheduleOfSlot(slotID string) (string, error) {
	i := strings.LastIndexByte(slotID, '.')
	if i <= 0 {
		return "", fmt.Errorf("%w: slot id %q: want <id>.<unix ms>", kvstore.ErrInvalid, slotID)
	}
	return slotID[:i], nil
}

// SlotEntry is the ledger entry of one slot: its sched_ticks entry (a
// slot skipped, missed or failed, an outcome a worker reported, a slot
// dispatched by a scheduler from before per-schedule subjects), with the
// stream's sequence filled in from its fire; or, without one, the
// dispatched entry its fire in the stream stands for. ErrNotFound when
// neither holds it.
func (s *Store) SlotEntry(ctx context.Context, slotID string) (kvstore.Tick, error) {
	id, err := scheduleOfSlot(slotID)
	if err != nil {
		return kvstore.Tick{}, err
	}
	t, terr := s.GetTick(ctx, slotID)
	if terr != nil && !errors.Is(terr, kvstore.ErrNotFound) {
		return kvstore.Tick{}, terr
	}
	if terr == nil && t.Seq > 0 {
		return t, nil
	}
	var fired *Fired
	err = s.FiresOf(ctx, id, func(f Fired) bool {
		if f.SlotID == slotID {
			fired = &f
			return false
		}
		return true
	})
	switch {
	case err != nil && terr == nil:
		return t, nil // the entry, without its sequence
	case err != nil:
		return kvstore.Tick{}, err
	case fired == nil && terr != nil:
		return kvstore.Tick{}, usererr.NotFound("slot", slotID)
	case fired == nil:
		return t, nil
	case terr != nil:
		return fired.Tick(), nil
	}
	return mergeFired(t, *fired), nil
}

// mergeFired completes ledger entry t with the fire f of its slot: the
// entry's status and outcome, the fire's stream position.
func mergeFired(t kvstore.Tick, f Fired) kvstore.Tick {
	if t.Seq == 0 {
		t.Stream, t.Seq = f.Stream, f.Seq
	}
	t.Workflow = cmp.Or(t.Workflow, f.Workflow)
	if t.Reason == "" {
		t.Reason = f.Reason
	}
	return t
}

// TickRetention is how long sched_ticks keeps a ledger entry: the
// bucket's TTL, 0 when it keeps them for ever. The ledger holds nothing
// older than now less it (the fire stream may hold older fires).
func (s *Store) TickRetention(ctx context.Context) (time.Duration, error) {
	st, err := s.ticks.Status(ctx)
	if err != nil {
		return 0, fmt.Errorf("kvstore: status of %s: %w", s.ticks.Bucket(), err)
	}
	return st.TTL(), nil
}

// Ledger is the ledger of schedule id: its sched_ticks entries merged
// with its fires in the stream (see SlotEntry), keyed by slot id. An
// entry without a slot time has the one its key names (slotid.TickWithSlotOf).
func (s *Store) Ledger(ctx context.Context, id string) (map[string]kvstore.Tick, error) {
	out := map[string]kvstore.Tick{}
	err := s.readAll(ctx, s.ticks, id+".*", func(e jetstream.KeyValueEntry) {
		if t, err := kvstore.DecodeTick(e.Value()); err == nil {
			out[e.Key()] = slotid.TickWithSlotOf(t, e.Key())
		}
	})
	if err != nil {
		return nil, fmt.Errorf("kvstore: ledger of %q: %w", id, err)
	}
	err = s.FiresOf(ctx, id, func(f Fired) bool {
		if t, ok := out[f.SlotID]; ok {
			out[f.SlotID] = mergeFired(t, f)
		} else {
			out[f.SlotID] = f.Tick()
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("kvstore: ledger of %q: %w", id, err)
	}
	return out, nil
}
