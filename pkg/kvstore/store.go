package kvstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/natserr"
)

// Auditor records mutations and operator actions (package audit).
type Auditor interface {
	Record(ctx context.Context, action, target string, detail any) error
	// RecordWrite records an action that wrote revision rev of a key in
	// bucket: the watch for external changes skips that revision.
	RecordWrite(ctx context.Context, action, target string, detail any, bucket string, rev uint64) error
}

// Store reads and writes jetsched's records. It is safe for concurrent use.
type Store struct {
	auditor Auditor

	layout    Layout
	js        jetstream.JetStream
	specs     jetstream.KeyValue
	state     jetstream.KeyValue
	ticks     jetstream.KeyValue
	calendars jetstream.KeyValue
	leases    jetstream.KeyValue
	wakeups   jetstream.KeyValue
}

// Open binds to the buckets of layout, which Setup must have created.
func Open(ctx context.Context, js jetstream.JetStream, layout Layout) (*Store, error) {
	layout = layout.WithDefaults()
	s := &Store{layout: layout, js: js}
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

// SetAuditor makes every mutation through the store (and Audit) append to
// an audit trail. Call before use.
func (s *Store) SetAuditor(a Auditor) { s.auditor = a }

// Audit records an operator action when an auditor is set.
func (s *Store) Audit(ctx context.Context, action, target string, detail any) error {
	if s.auditor == nil {
		return nil
	}
	if err := s.auditor.Record(ctx, action, target, detail); err != nil {
		return fmt.Errorf("kvstore: %s %s done, but the audit trail was not written: %w", action, target, err)
	}
	return nil
}

// AuditWrite records an action that wrote revision rev of a key in
// bucket, when an auditor is set.
func (s *Store) AuditWrite(ctx context.Context, action, target string, detail any, bucket string, rev uint64) error {
	if s.auditor == nil {
		return nil
	}
	if err := s.auditor.RecordWrite(ctx, action, target, detail, bucket, rev); err != nil {
		return fmt.Errorf("kvstore: %s %s done, but the audit trail was not written: %w", action, target, err)
	}
	return nil
}

// deleteKey writes a delete marker for key, if the key is still at
// revision last (0: whatever it is), and returns the marker's revision
// (what kv.Delete does, keeping the revision for the audit trail).
func (s *Store) deleteKey(ctx context.Context, kv jetstream.KeyValue, key string, last uint64) (uint64, error) {
	msg := &nats.Msg{Subject: "$KV." + kv.Bucket() + "." + key, Header: nats.Header{"KV-Operation": []string{"DEL"}}}
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
func (s *Store) Layout() Layout { return s.layout }

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

// SpecEntry is a spec with its key and revision.
type SpecEntry struct {
	ID       string
	Spec     Spec
	Revision uint64
	// Written is when this revision was stored.
	Written time.Time
}

// GetSpec reads and decodes the spec of id. A record that does not decode
// is returned with its error wrapping ErrInvalid.
func (s *Store) GetSpec(ctx context.Context, id string) (SpecEntry, error) {
	e, err := get(ctx, s.specs, id)
	if err != nil {
		return SpecEntry{}, fmt.Errorf("kvstore: get spec %q: %w", id, err)
	}
	spec, err := DecodeSpec(e.Value())
	return SpecEntry{ID: id, Spec: spec, Revision: e.Revision(), Written: e.Created()}, err
}

// PutSpec validates spec (including that a named calendar exists) and
// writes it under id, creating or replacing the schedule. An every spec is
// first given its anchor ([Spec.WithAnchor]): the time of the first write,
// kept when the same interval is registered again. A spec equal to the
// stored one is not written again (no new revision, no audit entry); the
// stored revision is returned. Nothing is written when validation fails;
// the error is a *FieldError. The write is a compare-and-swap on the
// revision read, so instances registering the same schedule at once agree
// on one anchor and make one write.
func (s *Store) PutSpec(ctx context.Context, id string, spec Spec) (uint64, error) {
	const attempts = 5
	for range attempts {
		cur, err := s.readSpec(ctx, id)
		if err != nil {
			return 0, fmt.Errorf("kvstore: put spec %q: %w", id, err)
		}
		written, data, err := s.prepareSpec(ctx, id, spec, cur)
		switch {
		case errors.Is(err, errUnchanged):
			return cur.rev, nil
		case err != nil:
			return 0, err
		}
		var rev uint64
		if cur == nil {
			rev, err = s.specs.Create(ctx, id, data)
		} else {
			rev, err = s.specs.Update(ctx, id, data, cur.rev)
		}
		switch {
		case errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch):
			continue // another writer got in between: read again
		case err != nil:
			return 0, fmt.Errorf("kvstore: put spec %q: %w", id, err)
		}
		return rev, s.AuditWrite(ctx, "schedule.put", id, written, s.layout.SpecsBucket, rev)
	}
	return 0, fmt.Errorf("kvstore: put spec %q: %d writers raced: %w", id, attempts, ErrConflict)
}

// CreateSpec validates spec like PutSpec and writes it only if there is no
// schedule id: ErrExists (an ErrConflict) when there is.
func (s *Store) CreateSpec(ctx context.Context, id string, spec Spec) (uint64, error) {
	written, data, err := s.prepareSpec(ctx, id, spec, nil)
	if err != nil {
		return 0, err
	}
	rev, err := s.specs.Create(ctx, id, data)
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return 0, fmt.Errorf("%w: schedule %q (update it, or create with upsert)", ErrExists, id)
		}
		return 0, fmt.Errorf("kvstore: create spec %q: %w", id, err)
	}
	return rev, s.AuditWrite(ctx, "schedule.put", id, written, s.layout.SpecsBucket, rev)
}

// maxUpdateAttempts bounds UpdateSpec's re-reads when the spec keeps
// changing under a write without an expected revision.
const maxUpdateAttempts = 10

// UpdateSpec validates spec like PutSpec and replaces the schedule id,
// which must exist (ErrNotFound otherwise). With rev > 0 the spec is
// replaced only if it is still at revision rev: ErrConflict when it
// changed (or was removed and added again) since. As with PutSpec, an
// every spec keeps the stored anchor of the same interval, and a spec
// equal to the stored one is not written again.
func (s *Store) UpdateSpec(ctx context.Context, id string, spec Spec, rev uint64) (uint64, error) {
	for range maxUpdateAttempts {
		cur, err := s.readSpec(ctx, id)
		if err == nil && cur == nil {
			err = fmt.Errorf("%w: %s", ErrNotFound, id)
		}
		if err != nil {
			return 0, fmt.Errorf("kvstore: update spec %q: %w", id, err)
		}
		written, data, err := s.prepareSpec(ctx, id, spec, cur)
		switch {
		case errors.Is(err, errUnchanged) && (rev == 0 || rev == cur.rev):
			return cur.rev, nil
		case errors.Is(err, errUnchanged):
			return 0, fmt.Errorf("%w: schedule %q is at revision %d, not %d; nothing was written", ErrConflict, id, cur.rev, rev)
		case err != nil:
			return 0, err
		}
		at := rev
		if at == 0 {
			at = cur.rev
		}
		n, err := s.specs.Update(ctx, id, data, at)
		if err == nil {
			return n, s.AuditWrite(ctx, "schedule.put", id, written, s.layout.SpecsBucket, n)
		}
		if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return 0, fmt.Errorf("kvstore: update spec %q: %w", id, err)
		}
		if rev != 0 {
			return 0, fmt.Errorf("%w: schedule %q is at revision %d, not %d; nothing was written", ErrConflict, id, cur.rev, rev)
		}
	}
	return 0, fmt.Errorf("kvstore: update spec %q: it kept changing; gave up after %d attempts: %w", id, maxUpdateAttempts, ErrConflict)
}

// storedSpec is a spec record as read: its bytes, revision and (when it
// decodes) the spec.
type storedSpec struct {
	data []byte
	rev  uint64
	spec *Spec
}

// readSpec reads the record of id; nil, nil when there is none.
func (s *Store) readSpec(ctx context.Context, id string) (*storedSpec, error) {
	e, err := get(ctx, s.specs, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	cur := &storedSpec{data: e.Value(), rev: e.Revision()}
	if spec, err := DecodeSpec(cur.data); err == nil {
		cur.spec = &spec
	}
	return cur, nil
}

// errUnchanged: the spec to write equals the stored record.
var errUnchanged = errors.New("kvstore: spec unchanged")

// prepareSpec gives spec its anchor over the stored record cur (nil: none;
// see Spec.WithAnchor), validates it for id, resolves its calendar, and
// encodes it; it returns the spec as it will be written and its bytes, or
// errUnchanged when they equal cur's (a one-shot that fired is then not
// refused for being in the past: nothing changes).
func (s *Store) prepareSpec(ctx context.Context, id string, spec Spec, cur *storedSpec) (Spec, []byte, error) {
	now := time.Now()
	var stored *Spec
	if cur != nil {
		stored = cur.spec
	}
	spec = spec.WithAnchor(stored, now)
	if err := spec.Validate(id); err != nil {
		return spec, nil, err
	}
	c, err := spec.Compile(id, s.CalendarSource(ctx))
	if err != nil {
		return spec, nil, err
	}
	data, err := spec.Encode()
	if err != nil {
		return spec, nil, fmt.Errorf("kvstore: encode spec %q: %w", id, err)
	}
	if cur != nil && bytes.Equal(data, cur.data) {
		return spec, data, errUnchanged
	}
	if err := c.CheckFires(now); err != nil {
		return spec, nil, err
	}
	return spec, data, nil
}

// DeleteSpec removes the spec of id and its state. Removing an unknown id
// returns ErrNotFound.
func (s *Store) DeleteSpec(ctx context.Context, id string) error {
	return s.DeleteSpecAt(ctx, id, 0)
}

// DeleteSpecAt removes the spec of id and its state like DeleteSpec; with
// rev > 0, only if the spec is still at revision rev (ErrConflict when it
// changed since).
func (s *Store) DeleteSpecAt(ctx context.Context, id string, rev uint64) error {
	e, err := get(ctx, s.specs, id)
	if err != nil {
		return fmt.Errorf("kvstore: delete spec %q: %w", id, err)
	}
	marker, err := s.deleteKey(ctx, s.specs, id, rev)
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return fmt.Errorf("%w: schedule %q is at revision %d, not %d; nothing was removed", ErrConflict, id, e.Revision(), rev)
		}
		return fmt.Errorf("kvstore: delete spec %q: %w", id, err)
	}
	if err := s.state.Delete(ctx, id); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("kvstore: delete state %q: %w", id, err)
	}
	return s.AuditWrite(ctx, "schedule.delete", id, nil, s.layout.SpecsBucket, marker)
}

// ListSpecs returns every spec. Records that do not decode are returned
// too, with their error in the second result keyed by id.
func (s *Store) ListSpecs(ctx context.Context) ([]SpecEntry, map[string]error, error) {
	var out []SpecEntry
	bad := map[string]error{}
	err := readAll(ctx, s.specs, ">", func(e jetstream.KeyValueEntry) {
		spec, err := DecodeSpec(e.Value())
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
	return s.specs.WatchAll(ctx)
}

// WatchState watches every state record, like WatchSpecs.
func (s *Store) WatchState(ctx context.Context) (jetstream.KeyWatcher, error) {
	return s.state.WatchAll(ctx)
}

// GetState reads the state of id.
func (s *Store) GetState(ctx context.Context, id string) (State, uint64, error) {
	e, err := get(ctx, s.state, id)
	if err != nil {
		return State{}, 0, fmt.Errorf("kvstore: get state %q: %w", id, err)
	}
	st, err := DecodeState(e.Value())
	return st, e.Revision(), err
}

// CreateState writes the first state of id. ErrConflict: it exists.
func (s *Store) CreateState(ctx context.Context, id string, st State) (uint64, error) {
	data, err := st.Encode()
	if err != nil {
		return 0, fmt.Errorf("kvstore: encode state %q: %w", id, err)
	}
	rev, err := s.state.Create(ctx, id, data)
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return 0, fmt.Errorf("kvstore: create state %q: %w", id, ErrConflict)
		}
		return 0, fmt.Errorf("kvstore: create state %q: %w", id, err)
	}
	return rev, nil
}

// UpdateState writes st if the record is still at revision rev.
// ErrConflict: it changed; re-read and re-decide.
func (s *Store) UpdateState(ctx context.Context, id string, st State, rev uint64) (uint64, error) {
	data, err := st.Encode()
	if err != nil {
		return 0, fmt.Errorf("kvstore: encode state %q: %w", id, err)
	}
	n, err := s.state.Update(ctx, id, data, rev)
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return 0, fmt.Errorf("kvstore: update state %q at revision %d: %w", id, rev, ErrConflict)
		}
		return 0, fmt.Errorf("kvstore: update state %q: %w", id, err)
	}
	return n, nil
}

// DeleteState removes the state of id if it is still at revision rev.
func (s *Store) DeleteState(ctx context.Context, id string, rev uint64) error {
	err := s.state.Delete(ctx, id, jetstream.LastRevision(rev))
	switch {
	case err == nil:
		return nil
	case errors.Is(err, jetstream.ErrKeyRevisionMismatch):
		return fmt.Errorf("kvstore: delete state %q at revision %d: %w", id, rev, ErrConflict)
	default:
		return fmt.Errorf("kvstore: delete state %q: %w", id, err)
	}
}

// PutTick writes a slot's ledger entry.
func (s *Store) PutTick(ctx context.Context, t Tick) error {
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
func (s *Store) GetTick(ctx context.Context, slotID string) (Tick, error) {
	e, err := get(ctx, s.ticks, slotID)
	if err != nil {
		return Tick{}, fmt.Errorf("kvstore: get tick %s: %w", slotID, err)
	}
	return DecodeTick(e.Value())
}

// History returns the ledger of schedule id, oldest slot first.
func (s *Store) History(ctx context.Context, id string) ([]Tick, error) {
	var out []Tick
	err := readAll(ctx, s.ticks, id+".*", func(e jetstream.KeyValueEntry) {
		if t, err := DecodeTick(e.Value()); err == nil {
			out = append(out, t)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("kvstore: history of %q: %w", id, err)
	}
	return out, nil
}

// get maps a missing or deleted key to ErrNotFound.
func get(ctx context.Context, kv jetstream.KeyValue, key string) (jetstream.KeyValueEntry, error) {
	e, err := kv.Get(ctx, key)
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, key)
		}
		return nil, err
	}
	return e, nil
}

// PutTickAsync sends a slot's ledger entry without waiting: the future
// reports its acknowledgement (see jetstream.JetStream.PublishAsync).
func (s *Store) PutTickAsync(t Tick) (jetstream.PubAckFuture, error) {
	data, err := t.Encode()
	if err != nil {
		return nil, fmt.Errorf("kvstore: encode tick: %w", err)
	}
	key := t.Key()
	f, err := s.js.PublishAsync("$KV."+s.ticks.Bucket()+"."+key, data)
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
			return time.Time{}, false, fmt.Errorf("kvstore: history of spec %q: %w", id, ErrNotFound)
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
		return time.Time{}, false, fmt.Errorf("kvstore: spec %q: %w", id, ErrNotFound)
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
