package jsstore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
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

	"github.com/jetsched/jetsched/internal/compile"
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

// PutSpec validates spec (including that a named calendar exists) and
// writes it under id, creating or replacing the schedule (SaveSpec with
// no options). An every spec is first given its anchor
// ([Spec.WithAnchor]): the time of the first write, kept when the same
// interval is registered again. Nothing is written when validation fails
// (the error is a *FieldError), when the stored spec is the same
// (SameSpec; the stored revision is returned), or when the schedule is
// static (ErrStatic).
func (s *Store) PutSpec(ctx context.Context, id string, spec kvstore.Spec) (uint64, error) {
	r, err := s.SaveSpec(ctx, id, spec, SaveOptions{})
	return r.Revision, err
}

// CreateSpec validates spec like PutSpec and writes it only if there is no
// schedule id: ErrExists (an ErrConflict) when there is.
func (s *Store) CreateSpec(ctx context.Context, id string, spec kvstore.Spec) (uint64, error) {
	r, err := s.SaveSpec(ctx, id, spec, SaveOptions{Create: true})
	return r.Revision, err
}

// UpdateSpec validates spec like PutSpec and replaces the schedule id,
// which must exist (ErrNotFound otherwise). With rev > 0 the spec is
// replaced only if it is still at revision rev: ErrConflict when it
// changed (or was removed and added again) since. As with PutSpec, an
// every spec keeps the stored anchor of the same interval, and a spec
// the same as the stored one is not written again.
func (s *Store) UpdateSpec(ctx context.Context, id string, spec kvstore.Spec, rev uint64) (uint64, error) {
	r, err := s.SaveSpec(ctx, id, spec, SaveOptions{Update: true, IfRevision: rev})
	return r.Revision, err
}

// SaveOptions say how SaveSpec writes.
type SaveOptions struct {
	// Create refuses an id that exists: ErrExists.
	Create bool
	// Update refuses an id that does not exist: ErrNotFound.
	Update bool
	// IfRevision, when not zero, writes only if the spec is still at this
	// revision (ErrConflict otherwise); it implies Update.
	IfRevision uint64
	// Owner is the static source the write is for (Spec.Static), "" for a
	// dynamic write (the admin API, the CLI, client.Schedule). A dynamic
	// write refuses a spec with static set (field static) and a stored
	// static spec (ErrStatic); a source's write must carry its own label
	// and refuses a spec another source declares (ErrStatic). A source
	// takes a dynamic schedule of the same id over.
	Owner string
	// Now, when not zero, refuses a one-shot whose at is not after Now
	// (field at), unless the stored spec is the same one: re-registering
	// a one-shot that has fired is no error.
	Now time.Time
}

// Saved is what SaveSpec did.
type Saved struct {
	// Revision is the spec's revision: the one written, or the stored one
	// when Unchanged.
	Revision uint64
	// Created: there was no schedule id before.
	Created bool
	// Unchanged: the stored spec is the same (SameSpec); nothing was
	// written and no audit entry recorded.
	Unchanged bool
}

// maxUpdateAttempts bounds SaveSpec's re-reads when the spec keeps
// changing under a write without an expected revision.
const maxUpdateAttempts = 10

// SaveSpec validates spec for id (including that a named calendar exists),
// gives an every spec its anchor over the stored one ([Spec.WithAnchor]),
// and creates or replaces the schedule as o says, by compare-and-swap on
// the revision it read: instances registering the same schedule at once
// agree on one anchor and make one write. Nothing is written when
// validation fails (a *FieldError), when the stored spec is the same
// (Saved.Unchanged), or when o refuses the write (ErrExists, ErrNotFound,
// ErrConflict, ErrStatic).
func (s *Store) SaveSpec(ctx context.Context, id string, spec kvstore.Spec, o SaveOptions) (Saved, error) {
	if err := o.checkStatic(spec); err != nil {
		return Saved{}, err
	}
	for range maxUpdateAttempts {
		cur, err := get(ctx, s.specs, "schedule", id)
		if errors.Is(err, kvstore.ErrNotFound) {
			cur = nil
		} else if err != nil {
			return Saved{}, fmt.Errorf("kvstore: read spec %q: %w", id, err)
		}
		p, err := s.planSpec(ctx, id, spec, cur, o, s.CalendarSource(ctx))
		if err != nil || p.unchanged {
			return p.saved, err
		}
		mark, err := s.Intend(ctx, p.intent(s.layout, id, cur))
		if err != nil {
			return Saved{}, err
		}
		if cur == nil {
			rev, err := s.createMarked(ctx, s.specs, id, p.data, mark)
			if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
				s.Abandon(ctx, err, mark)
				if o.Create {
					return Saved{}, existsError(id)
				}
				continue // created meanwhile: compare with it
			}
			if err != nil {
				s.Abandon(ctx, err, mark)
				return Saved{}, fmt.Errorf("kvstore: create spec %q: %w", id, err)
			}
			return Saved{Revision: rev, Created: true}, nil
		}
		n, err := s.writeMarked(ctx, s.specs, id, p.data, cur.Revision(), mark)
		if err == nil {
			return Saved{Revision: n}, nil
		}
		s.Abandon(ctx, err, mark)
		if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return Saved{}, fmt.Errorf("kvstore: update spec %q: %w", id, err)
		}
		if o.IfRevision != 0 {
			return Saved{}, revisionConflict(id, 0, o.IfRevision, "written")
		}
	}
	return Saved{}, fmt.Errorf("kvstore: save spec %q: it kept changing; gave up after %d attempts: %w", id, maxUpdateAttempts, kvstore.ErrConflict)
}

// intent is the audit intent of writing p over cur (nil: none).
func (p specPlan) intent(l kvstore.Layout, id string, cur jetstream.KeyValueEntry) Intent {
	in := Intent{Action: "schedule.put", Target: id, Detail: p.written, Bucket: l.SpecsBucket, Key: id, SHA256: sha256Hex(p.data)}
	if cur != nil {
		in.Expect = cur.Revision()
	}
	return in
}

// sha256Hex is the hex SHA-256 of data.
func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// checkStatic refuses a spec whose static label is not the writer's.
func (o SaveOptions) checkStatic(spec kvstore.Spec) error {
	if spec.Static == o.Owner {
		return nil
	}
	if o.Owner == "" {
		return fieldErr("static", spec.Static, "is set by the source that declares a static schedule (scheduler run --schedules, client.Static), not by a put")
	}
	return fieldErr("static", spec.Static, fmt.Sprintf("want %q, the source writing it", o.Owner))
}

// specPlan is what a save of one spec over the stored entry does.
type specPlan struct {
	// saved is the result when nothing is to be written (unchanged).
	saved     Saved
	unchanged bool
	// written is the spec to write and data its bytes.
	written kvstore.Spec
	data    []byte
}

// planSpec decides a save of spec under id over cur (nil: no schedule),
// as o says: unchanged, a refusal, or the spec to write, validated over
// the stored one (see prepareSpec) with calendars from cals.
func (s *Store) planSpec(ctx context.Context, id string, spec kvstore.Spec, cur jetstream.KeyValueEntry, o SaveOptions, cals compile.CalendarSource) (specPlan, error) {
	if spec.Trace == nil && s.specTraces.Load() {
		spec.Trace = TraceContextOf(ctx) // the writer's span, for the dispatch spans' links
	}
	if cur == nil {
		if o.Update || o.IfRevision != 0 {
			return specPlan{}, usererr.NotFound("schedule", id)
		}
		written, data, err := s.prepareSpec(id, spec, nil, o, cals)
		return specPlan{written: written, data: data}, err
	}
	if o.Create {
		if err := compile.Validate(spec, id, nil); err != nil {
			return specPlan{}, err // bad input is invalid, whatever is stored
		}
		return specPlan{}, existsError(id)
	}
	if o.IfRevision != 0 && cur.Revision() != o.IfRevision {
		return specPlan{}, revisionConflict(id, cur.Revision(), o.IfRevision, "written")
	}
	var stored *kvstore.Spec
	if st, derr := kvstore.DecodeSpec(cur.Value()); derr == nil {
		if kvstore.SameSpec(st, spec) {
			return specPlan{saved: Saved{Revision: cur.Revision(), Unchanged: true}, unchanged: true}, nil
		}
		if err := o.checkOwner(id, st); err != nil {
			return specPlan{}, err
		}
		stored = &st
	}
	written, data, err := s.prepareSpec(id, spec, stored, o, cals)
	return specPlan{written: written, data: data}, err
}

// checkAt refuses a one-shot in the past when o.Now is set.
func (o SaveOptions) checkAt(spec kvstore.Spec) error {
	if o.Now.IsZero() || spec.At == nil || spec.At.After(o.Now) {
		return nil
	}
	return fieldErr("at", spec.At.Format(time.RFC3339), "is in the past; a one-shot must be in the future")
}

// checkOwner refuses to replace or remove a stored static spec that the
// writer does not own.
func (o SaveOptions) checkOwner(id string, stored kvstore.Spec) error {
	switch {
	case stored.Static == "" || stored.Static == o.Owner:
		return nil
	case o.Owner == "":
		return StaticError(id, stored.Static)
	}
	return userErrorf(kvstore.ErrStatic, "schedule %q is declared in %s, not in %s: one static source owns a schedule", id, stored.Static, o.Owner)
}

// StaticError is the error for a change to static schedule id, declared
// by source, that its source did not make.
func StaticError(id, source string) error {
	return userErrorf(kvstore.ErrStatic, "schedule %q is static: declared in %s (scheduler run --schedules or client.Static); change it there", id, source)
}

func existsError(id string) error {
	return userErrorf(kvstore.ErrExists, "conflict: schedule %q exists (update it, or create with upsert)", id)
}

// revisionConflict is the error of a write or removal whose expected
// revision want is not the stored one (have; 0 when unknown).
func revisionConflict(id string, have, want uint64, done string) error {
	if have == 0 {
		return userErrorf(kvstore.ErrConflict, "conflict: schedule %q is no longer at revision %d; nothing was %s", id, want, done)
	}
	return userErrorf(kvstore.ErrConflict, "conflict: schedule %q is at revision %d, not %d; nothing was %s", id, have, want, done)
}

// CheckSpec validates spec for id as a write over nothing would
// (including that a named calendar exists), without writing.
func (s *Store) CheckSpec(ctx context.Context, id string, spec kvstore.Spec) error {
	_, _, err := s.prepareSpec(id, spec, nil, SaveOptions{}, s.CalendarSource(ctx))
	return err
}

// prepareSpec gives spec its anchor over stored (nil: none; see
// Spec.WithAnchor), validates it for id (with o.Now, a one-shot in the
// past is refused), resolves its calendar from cals, and encodes it; it
// returns the spec as it will be written and its bytes.
func (s *Store) prepareSpec(id string, spec kvstore.Spec, stored *kvstore.Spec, o SaveOptions, cals compile.CalendarSource) (kvstore.Spec, []byte, error) {
	now := time.Now()
	spec = spec.WithAnchor(stored, now)
	if err := compile.CheckFields(spec, id); err != nil {
		return spec, nil, err
	}
	if err := o.checkAt(spec); err != nil {
		return spec, nil, err
	}
	// What the scheduler checks on every record it reads (the two
	// cannot drift).
	if _, err := compile.CheckRecord(spec, id, cals, nil, now); err != nil {
		return spec, nil, err
	}
	data, err := spec.Encode()
	if err != nil {
		return spec, nil, fmt.Errorf("kvstore: encode spec %q: %w", id, err)
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
