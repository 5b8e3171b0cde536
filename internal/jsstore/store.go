package jsstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsname"
	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/internal/pipelined"
	"github.com/jetsched/jetsched/internal/slotid"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Store reads and writes jetsched's records. It is safe for concurrent use.
type Store struct {
	auditor Auditor

	layout    kvstore.Layout
	js        jetstream.JetStream
	specs     jetstream.KeyValue
	state     jetstream.KeyValue
	ticks     jetstream.KeyValue
	calendars jetstream.KeyValue
	leases    jetstream.KeyValue
	wakeups   jetstream.KeyValue

	firesMu sync.Mutex
	fires   jetstream.Stream // the fire stream's handle, once looked up

	// pub sends the writes that do not wait for their acknowledgements
	// (PublishAsync).
	pub *pipelined.Publisher

	// specTraces: spec writes keep the writer's trace context (see
	// RecordSpecTraces).
	specTraces atomic.Bool
}

// RecordSpecTraces makes spec writes through s keep the trace context of
// the writer's span (ctx) in the spec's trace field, which every fire's
// dispatch span then links to. Off by default: a scheduler of the
// previous release refuses a spec with a field it does not know
// (docs/records.md, "Compatibility"), so turn it on (scheduler run does
// when tracing is on) once every scheduler reads the field.
func (s *Store) RecordSpecTraces(on bool) { s.specTraces.Store(on) }

// Open binds to the buckets of layout, which Setup must have created.
func Open(ctx context.Context, js jetstream.JetStream, layout kvstore.Layout) (*Store, error) {
	layout = layout.WithDefaults()
	s := &Store{layout: layout, js: js, pub: pipelined.NewPublisher(js.Conn(), 0, 0)}
	for _, b := range []struct {
		name string
		kv   *jetstream.KeyValue
	}{
		{layout.SpecsBucket, &s.specs},
		{layout.StateBucket, &s.state},
		{layout.TicksBucket, &s.ticks},
		{layout.CalendarsBucket, &s.calendars},
		{layout.LeasesBucket, &s.leases},
		{layout.WakeupsBucket, &s.wakeups},
	} {
		kv, err := js.KeyValue(ctx, b.name)
		if err != nil {
			if errors.Is(err, jetstream.ErrBucketNotFound) {
				return nil, fmt.Errorf("kvstore: bucket %s does not exist (run `scheduler run` once, or kvstore.Setup): %w", b.name, err)
			}
			return nil, fmt.Errorf("kvstore: open bucket %s: %w", b.name, err)
		}
		*b.kv = kv
	}
	return s, nil
}

// SetAuditor makes every change through the store (and WriteAhead)
// append its intent to an audit trail first. Call before use.
func (s *Store) SetAuditor(a Auditor) { s.auditor = a }

// deleteKey writes a delete marker for key, if the key is still at
// revision last (0: whatever it is), carrying mark, and returns the
// marker's revision (what kv.Delete does, with the audit mark).
func (s *Store) deleteKey(ctx context.Context, kv jetstream.KeyValue, key string, last uint64, mark AuditMark) (uint64, error) {
	msg := &nats.Msg{Subject: s.kvSubject(kv, key), Header: nats.Header{"KV-Operation": []string{"DEL"}}}
	mark.set(msg)
	var opts []jetstream.PublishOpt
	if last > 0 {
		opts = append(opts, jetstream.WithExpectLastSequencePerSubject(last))
	}
	ack, err := s.js.PublishMsg(ctx, msg, opts...)
	if err != nil {
		if natserr.WrongLastSequence(err) {
			return 0, fmt.Errorf("%w: %v", jetstream.ErrKeyRevisionMismatch, err)
		}
		return 0, err
	}
	return ack.Sequence, nil
}

// Layout is the store's layout, with defaults filled in.
func (s *Store) Layout() kvstore.Layout { return s.layout }

// Leases is the shard leases bucket.
func (s *Store) Leases() jetstream.KeyValue { return s.leases }

// Shards is the shard count fixed in the leases bucket.
func (s *Store) Shards(ctx context.Context) (int, error) {
	st, err := s.leases.Status(ctx)
	if err != nil {
		return 0, fmt.Errorf("kvstore: leases bucket status: %w", err)
	}
	n, err := strconv.Atoi(st.Config().Metadata[ShardsMetadata])
	if err != nil || n < 1 {
		return DefaultShards, nil
	}
	return n, nil
}

// JetStream is the JetStream context the store was opened with.
func (s *Store) JetStream() jetstream.JetStream { return s.js }

// PublishAsync sends m to its stream without waiting: the future reports
// the acknowledgement, or the stream's refusal, or a timeout after
// pipelined.DefaultTimeout. m's headers carry what the stream must check
// (jetstream.MsgIDHeader, ExpectedStreamHeader, ExpectedLastSubjSeqHeader).
// While pipelined.DefaultMaxPending of the store's writes are
// unacknowledged it waits for room, until ctx ends. The store's
// acknowledgements are read on a subscription of its own, made at the
// first such write, under the connection's inbox prefix; it lasts as long
// as the connection.
func (s *Store) PublishAsync(ctx context.Context, m *nats.Msg) (jetstream.PubAckFuture, error) {
	return s.pub.Publish(ctx, m)
}

// PublishAsyncTo is PublishAsync for a message that must be stored in
// stream: its future fails (pipelined.ErrWrongStream) when another stream
// acknowledges it. Fires and wakeups go this way, with no
// Nats-Expected-Stream header (stored and delivered with every message).
func (s *Store) PublishAsyncTo(ctx context.Context, m *nats.Msg, stream string) (jetstream.PubAckFuture, error) {
	return s.pub.PublishTo(ctx, m, stream)
}

// SpecEntry is a spec with its key and revision.
type SpecEntry struct {
	ID       string
	Spec     kvstore.Spec
	Revision uint64
	// Written is when this revision was stored.
	Written time.Time
}

// GetSpec reads and decodes the spec of id. A record that does not decode
// is returned with its error wrapping ErrInvalid.
func (s *Store) GetSpec(ctx context.Context, id string) (SpecEntry, error) {
	e, err := get(ctx, s.specs, "schedule", id)
	if err != nil {
		return SpecEntry{}, fmt.Errorf("kvstore: get spec %q: %w", id, err)
	}
	spec, err := kvstore.DecodeSpec(e.Value())
	return SpecEntry{ID: id, Spec: spec, Revision: e.Revision(), Written: e.Created()}, err
}

// SpecRecord reads id's spec as the KV entry the spec watch delivers (a
// scheduler loading its index fetches the specs of due schedules ahead of
// the watch). ErrNotFound: there is none.
func (s *Store) SpecRecord(ctx context.Context, id string) (jetstream.KeyValueEntry, error) {
	e, err := get(ctx, s.specs, "schedule", id)
	if err != nil {
		return nil, fmt.Errorf("kvstore: get spec %q: %w", id, err)
	}
	return e, nil
}

// DeleteSpec removes the spec of id and its state. Removing an unknown id
// returns ErrNotFound.
func (s *Store) DeleteSpec(ctx context.Context, id string) error {
	return s.DeleteSpecAt(ctx, id, 0)
}

// DeleteSpecAt removes the spec of id and its state like DeleteSpec; with
// rev > 0, only if the spec is still at revision rev (ErrConflict when it
// changed since). A static schedule is not removed: ErrStatic.
func (s *Store) DeleteSpecAt(ctx context.Context, id string, rev uint64) error {
	return s.deleteSpec(ctx, id, rev, "")
}

// deleteSpec removes the spec of id and its state for owner (see
// SaveOptions.Owner), by compare-and-swap on the revision it read.
func (s *Store) deleteSpec(ctx context.Context, id string, rev uint64, owner string) error {
	for range maxUpdateAttempts {
		e, err := get(ctx, s.specs, "schedule", id)
		if err != nil {
			return fmt.Errorf("kvstore: delete spec %q: %w", id, err)
		}
		if rev != 0 && e.Revision() != rev {
			return revisionConflict(id, e.Revision(), rev, "removed")
		}
		if stored, derr := kvstore.DecodeSpec(e.Value()); derr == nil {
			if err := (SaveOptions{Owner: owner}).checkOwner(id, stored); err != nil {
				return err
			}
		}
		mark, err := s.Intend(ctx, Intent{Action: "schedule.delete", Target: id, Bucket: s.layout.SpecsBucket, Key: id, Expect: e.Revision()})
		if err != nil {
			return err
		}
		_, err = s.deleteKey(ctx, s.specs, id, e.Revision(), mark)
		if err != nil {
			s.Abandon(ctx, err, mark)
		}
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			if rev != 0 {
				return revisionConflict(id, 0, rev, "removed")
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("kvstore: delete spec %q: %w", id, err)
		}
		if _, err := s.deleteKey(ctx, s.state, id, 0, mark); err != nil {
			return fmt.Errorf("kvstore: delete state %q: %w", id, err)
		}
		return nil
	}
	return fmt.Errorf("kvstore: delete spec %q: it kept changing; gave up after %d attempts: %w", id, maxUpdateAttempts, kvstore.ErrConflict)
}

// ListSpecs returns every spec. Records that do not decode are returned
// too, with their error in the second result keyed by id.
func (s *Store) ListSpecs(ctx context.Context) ([]SpecEntry, map[string]error, error) {
	var out []SpecEntry
	bad := map[string]error{}
	err := s.readAll(ctx, s.specs, ">", func(e jetstream.KeyValueEntry) {
		spec, err := kvstore.DecodeSpec(e.Value())
		if err != nil {
			bad[e.Key()] = err
		}
		out = append(out, SpecEntry{ID: e.Key(), Spec: spec, Revision: e.Revision(), Written: e.Created()})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("kvstore: list specs: %w", err)
	}
	return out, bad, nil
}

// WatchSpecs watches every spec: current values first, then a nil entry,
// then changes (including deletes).
func (s *Store) WatchSpecs(ctx context.Context) (jetstream.KeyWatcher, error) {
	return s.watch(ctx, s.specs, watchOpts{})
}

// WatchState watches every state record, like WatchSpecs.
func (s *Store) WatchState(ctx context.Context) (jetstream.KeyWatcher, error) {
	return s.watch(ctx, s.state, watchOpts{})
}

// GetState reads the state of id.
func (s *Store) GetState(ctx context.Context, id string) (kvstore.State, uint64, error) {
	e, err := get(ctx, s.state, "state of schedule", id)
	if err != nil {
		return kvstore.State{}, 0, fmt.Errorf("kvstore: get state %q: %w", id, err)
	}
	st, err := kvstore.DecodeState(e.Value())
	return st, e.Revision(), err
}

// CreateState writes the first state of id. ErrConflict: it exists.
func (s *Store) CreateState(ctx context.Context, id string, st kvstore.State) (uint64, error) {
	data, err := st.Encode()
	if err != nil {
		return 0, fmt.Errorf("kvstore: encode state %q: %w", id, err)
	}
	rev, err := s.state.Create(ctx, id, data)
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return 0, fmt.Errorf("kvstore: create state %q: %w", id, kvstore.ErrConflict)
		}
		return 0, fmt.Errorf("kvstore: create state %q: %w", id, err)
	}
	return rev, nil
}

// UpdateState writes st if the record is still at revision rev.
// ErrConflict: it changed; re-read and re-decide.
func (s *Store) UpdateState(ctx context.Context, id string, st kvstore.State, rev uint64) (uint64, error) {
	data, err := st.Encode()
	if err != nil {
		return 0, fmt.Errorf("kvstore: encode state %q: %w", id, err)
	}
	n, err := s.update(ctx, s.state, id, data, rev)
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return 0, fmt.Errorf("kvstore: update state %q at revision %d: %w", id, rev, kvstore.ErrConflict)
		}
		return 0, fmt.Errorf("kvstore: update state %q: %w", id, err)
	}
	return n, nil
}

// WriteState writes st for an operator's action, carrying its audit mark:
// if the record is still at revision rev, or, with rev 0, if there is
// none (CreateState). ErrConflict: it changed; re-read and re-decide.
func (s *Store) WriteState(ctx context.Context, id string, st kvstore.State, rev uint64, mark AuditMark) (uint64, error) {
	data, err := st.Encode()
	if err != nil {
		return 0, fmt.Errorf("kvstore: encode state %q: %w", id, err)
	}
	var n uint64
	if rev == 0 {
		n, err = s.createMarked(ctx, s.state, id, data, mark)
	} else {
		n, err = s.writeMarked(ctx, s.state, id, data, rev, mark)
	}
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return 0, fmt.Errorf("kvstore: write state %q at revision %d: %w", id, rev, kvstore.ErrConflict)
	}
	if err != nil {
		return 0, fmt.Errorf("kvstore: write state %q: %w", id, err)
	}
	return n, nil
}

// update is kv.Update through the store's publisher (PublishAsync, and
// wait): data becomes key's value if the key is still at revision rev,
// and a conflict is jetstream.ErrKeyRevisionMismatch. The hot paths' own
// writes (a window record, a state record) skip nats.go's request and
// its decoding of the acknowledgement.
func (s *Store) update(ctx context.Context, kv jetstream.KeyValue, key string, data []byte, rev uint64) (uint64, error) {
	f, err := s.PublishAsync(ctx, s.updateMsg(kv, key, data, rev))
	return pipelined.AwaitRevision(ctx, f, err)
}

// updateMsg is the write of data to key of kv on the condition that the
// key is still at revision rev (0: that it has never been written).
func (s *Store) updateMsg(kv jetstream.KeyValue, key string, data []byte, rev uint64) *nats.Msg {
	m := nats.NewMsg(s.kvSubject(kv, key))
	m.Data = data
	m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(rev, 10))
	return m
}

// DeleteState removes the state of id if it is still at revision rev.
func (s *Store) DeleteState(ctx context.Context, id string, rev uint64) error {
	err := s.state.Delete(ctx, id, jetstream.LastRevision(rev))
	switch {
	case err == nil:
		return nil
	case errors.Is(err, jetstream.ErrKeyRevisionMismatch):
		return fmt.Errorf("kvstore: delete state %q at revision %d: %w", id, rev, kvstore.ErrConflict)
	default:
		return fmt.Errorf("kvstore: delete state %q: %w", id, err)
	}
}

// PutTick writes a slot's ledger entry.
func (s *Store) PutTick(ctx context.Context, t kvstore.Tick) error {
	data, err := t.Encode()
	if err != nil {
		return fmt.Errorf("kvstore: encode tick: %w", err)
	}
	key := t.Key()
	if _, err := s.ticks.Put(ctx, key, data); err != nil {
		return fmt.Errorf("kvstore: put tick %s: %w", key, err)
	}
	return nil
}

// GetTick reads a slot's ledger entry; ErrNotFound when there is none.
// An entry without a slot time has the one its slot id names (see
// slotid.TickWithSlotOf).
func (s *Store) GetTick(ctx context.Context, slotID string) (kvstore.Tick, error) {
	e, err := get(ctx, s.ticks, "slot", slotID)
	if err != nil {
		return kvstore.Tick{}, fmt.Errorf("kvstore: get tick %s: %w", slotID, err)
	}
	t, err := kvstore.DecodeTick(e.Value())
	if err != nil {
		return kvstore.Tick{}, err
	}
	return slotid.TickWithSlotOf(t, slotID), nil
}

// History returns the ledger of schedule id (see Ledger), oldest slot
// first.
func (s *Store) History(ctx context.Context, id string) ([]kvstore.Tick, error) {
	ledger, err := s.Ledger(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]kvstore.Tick, 0, len(ledger))
	for _, t := range ledger {
		out = append(out, t)
	}
	slices.SortFunc(out, func(x, y kvstore.Tick) int { return cmp.Or(x.Slot.Compare(y.Slot), strings.Compare(x.Key(), y.Key())) })
	return out, nil
}

// get maps a missing or deleted key to NotFound(kind, key).
func get(ctx context.Context, kv jetstream.KeyValue, kind, key string) (jetstream.KeyValueEntry, error) {
	e, err := kv.Get(ctx, key)
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			return nil, usererr.NotFound(kind, key)
		}
		return nil, err
	}
	return e, nil
}

// PutTickAsync sends a slot's ledger entry without waiting: the future
// reports its acknowledgement (see PublishAsync, which waits for room).
func (s *Store) PutTickAsync(ctx context.Context, t kvstore.Tick) (jetstream.PubAckFuture, error) {
	data, err := t.Encode()
	if err != nil {
		return nil, fmt.Errorf("kvstore: encode tick: %w", err)
	}
	key := t.Key()
	m := nats.NewMsg(s.kvSubject(s.ticks, key))
	m.Data = data
	f, err := s.PublishAsync(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("kvstore: put tick %s: %w", key, err)
	}
	return f, nil
}

// LeaseOwners reads the owner of every live shard lease, by shard. A lease
// that cannot be read is left out.
func (s *Store) LeaseOwners(ctx context.Context) map[int]string {
	out := map[int]string{}
	kv := s.leases
	keys, err := kv.ListKeysFiltered(ctx, "shard.*")
	if err != nil {
		return out
	}
	defer keys.Stop()
	for k := range keys.Keys() {
		n, err := strconv.Atoi(strings.TrimPrefix(k, "shard."))
		if err != nil {
			continue
		}
		e, err := kv.Get(ctx, k)
		if err != nil {
			continue
		}
		var v struct {
			Owner string `json:"owner"`
		}
		if json.Unmarshal(e.Value(), &v) == nil {
			out[n] = v.Owner
		}
	}
	return out
}

// SpecCreated is when schedule id was created: the time of the first
// revision of its spec since it was last deleted. known is false when the
// spec's kept history (the bucket keeps 16 revisions) does not reach back
// to its creation.
func (s *Store) SpecCreated(ctx context.Context, id string) (created time.Time, known bool, err error) {
	hist, err := s.specs.History(ctx, id)
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return time.Time{}, false, fmt.Errorf("kvstore: history of spec %q: %w", id, usererr.NotFound("schedule", id))
		}
		return time.Time{}, false, fmt.Errorf("kvstore: history of spec %q: %w", id, err)
	}
	first := 0
	for i, e := range hist {
		if op := e.Operation(); op == jetstream.KeyValueDelete || op == jetstream.KeyValuePurge {
			first = i + 1
		}
	}
	if first >= len(hist) {
		return time.Time{}, false, fmt.Errorf("kvstore: spec %q: %w", id, usererr.NotFound("schedule", id))
	}
	st, err := s.specs.Status(ctx)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("kvstore: specs bucket status: %w", err)
	}
	// Without a delete marker in it, a full history may have lost the
	// creation to the bucket's history limit.
	known = first > 0 || len(hist) < int(st.History())
	return hist[first].Created(), known, nil
}

// kvSubject is the subject a write to key of bucket kv is published on
// (see jsname.KV).
func (s *Store) kvSubject(kv jetstream.KeyValue, key string) string {
	return jsname.KV(s.js, kv.Bucket(), key)
}
