package jsstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/specwrite"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/nats-io/nats.go/jetstream"
)

// PutSpec validates spec (including that a named calendar exists) and
// writes it under id, creating or replacing the schedule (SaveSpec with
// no options). An every spec is first given its anchor
// (specwrite.WithAnchor): the time of the first write, kept when the same
// interval is registered again. Nothing is written when validation fails
// (the error is a *FieldError), when the stored spec is the same
// (specwrite.Same; the stored revision is returned), or when the schedule is
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
	// DryRun plans the write and checks it, and returns what it would do
	// (Saved.Spec, Saved.Previous), without writing or auditing anything.
	DryRun bool
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
	// Unchanged: the stored spec is the same (specwrite.Same); nothing was
	// written and no audit entry recorded.
	Unchanged bool
	// Spec is the spec as written (or, with DryRun, as it would be; when
	// Unchanged, as stored), with what the store fills in.
	Spec kvstore.Spec
	// Previous is the stored spec the write replaced (nil: none, or a
	// stored record that does not decode).
	Previous *kvstore.Spec
}

// maxUpdateAttempts bounds SaveSpec's re-reads when the spec keeps
// changing under a write without an expected revision.
const maxUpdateAttempts = 10

// SaveSpec validates spec for id (including that a named calendar exists),
// gives an every spec its anchor over the stored one (specwrite.WithAnchor),
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
	return s.saveSpec(ctx, id, o, func(jetstream.KeyValueEntry) (kvstore.Spec, error) { return spec, nil })
}

// saveSpec is SaveSpec with the spec to write made from the entry read
// (nil: none) at each attempt: a patch applies to what is stored then.
func (s *Store) saveSpec(ctx context.Context, id string, o SaveOptions, specFor func(cur jetstream.KeyValueEntry) (kvstore.Spec, error)) (Saved, error) {
	for range maxUpdateAttempts {
		cur, err := get(ctx, s.specs, "schedule", id)
		if errors.Is(err, kvstore.ErrNotFound) {
			cur = nil
		} else if err != nil {
			return Saved{}, fmt.Errorf("kvstore: read spec %q: %w", id, err)
		}
		spec, err := specFor(cur)
		if err != nil {
			return Saved{}, err
		}
		p, err := s.planSpec(ctx, id, spec, cur, o, s.CalendarSource(ctx))
		if err != nil || p.unchanged {
			return p.saved, err
		}
		if o.DryRun {
			saved := Saved{Spec: p.written, Previous: p.stored, Created: cur == nil}
			if cur != nil {
				saved.Revision = cur.Revision()
			}
			return saved, nil
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
			return Saved{Revision: rev, Created: true, Spec: p.written}, nil
		}
		n, err := s.writeMarked(ctx, s.specs, id, p.data, cur.Revision(), mark)
		if err == nil {
			return Saved{Revision: n, Spec: p.written, Previous: p.stored}, nil
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
	// written is the spec to write and data its bytes; stored is the spec
	// it replaces (nil: none, or one that does not decode).
	written kvstore.Spec
	data    []byte
	stored  *kvstore.Spec
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
		spec = withCalendarZone(spec, nil, cals)
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
		stored = &st
	}
	spec = withCalendarZone(spec, stored, cals)
	if stored != nil {
		if specwrite.Same(*stored, spec) {
			return specPlan{saved: Saved{Revision: cur.Revision(), Unchanged: true, Spec: *stored, Previous: stored}, unchanged: true}, nil
		}
		if err := o.checkOwner(id, *stored); err != nil {
			return specPlan{}, err
		}
	}
	written, data, err := s.prepareSpec(id, spec, stored, o, cals)
	return specPlan{written: written, data: data, stored: stored}, err
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
// specwrite.WithAnchor), validates it for id (with o.Now, a one-shot in the
// past is refused), resolves its calendar from cals, and encodes it; it
// returns the spec as it will be written and its bytes.
func (s *Store) prepareSpec(id string, spec kvstore.Spec, stored *kvstore.Spec, o SaveOptions, cals compile.CalendarSource) (kvstore.Spec, []byte, error) {
	now := time.Now()
	spec = specwrite.WithAnchor(spec, stored, now)
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
