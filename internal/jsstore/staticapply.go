package jsstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// StaticSet is a set of static schedules declared together: the schedules
// of one file of `scheduler run --schedules`, or of one client.Static
// call. The set owns its schedules: each carries Source in its spec's
// static field, only the set changes or removes it, and applying the set
// removes the schedules of Source that it no longer lists.
type StaticSet struct {
	// Source labels the set: a file's base name ("schedules.yaml"), or the
	// label code gives. Every instance that declares the set must use the
	// same label.
	Source string
	// Schedules are the set's schedules; their spec's static field is
	// Source or empty (ApplyStatic sets it).
	Schedules []StaticSchedule
}

// Resolve checks the set without a store and returns it ready to apply:
// ids derived where they are missing, every spec marked with Source. It
// checks the source label, each spec (compile.Validate: a named calendar is
// resolved only by ApplyStatic) and that no id comes twice. An error names
// the entry (1-based), its id and the field, and matches kvstore.ErrInvalid.
func (set StaticSet) Resolve() (StaticSet, error) {
	if err := fieldcheck.Source(set.Source); err != nil {
		return set, err
	}
	out := StaticSet{Source: set.Source, Schedules: make([]StaticSchedule, len(set.Schedules))}
	seen := make(map[string]int, len(set.Schedules))
	for i, e := range set.Schedules {
		if e.Spec.Static != "" && e.Spec.Static != set.Source {
			return set, set.entryError(i, e.ID, fieldErr("static", e.Spec.Static, fmt.Sprintf("the set's source is %q", set.Source)))
		}
		e.Spec.Static = set.Source
		if e.ID == "" {
			e.ID = e.Spec.ID
		}
		if e.ID == "" {
			e.ID = kvstore.DefaultKey(e.Spec)
		}
		if err := compile.Validate(e.Spec, e.ID, nil); err != nil {
			return set, set.entryError(i, e.ID, err)
		}
		if j, dup := seen[e.ID]; dup {
			return set, set.entryError(i, e.ID, fieldErr("id", e.ID, fmt.Sprintf("entry %d has it already", j+1)))
		}
		seen[e.ID] = i
		out.Schedules[i] = e
	}
	return out, nil
}

// entryError places err at entry i (id) of the set, for users.
func (set StaticSet) entryError(i int, id string, err error) error {
	kind := kvstore.ErrInvalid
	if errors.Is(err, kvstore.ErrStatic) {
		kind = kvstore.ErrStatic
	}
	return &fieldcheck.UserError{Kind: kind, Err: err, Msg: fmt.Sprintf("%s: entry %d (id %q): %s", set.Source, i+1, id, usererr.Message(err))}
}

// ApplyStatic makes the static schedules of set.Source what set declares.
// It checks every entry first (Resolve, then named calendars, and that no
// other source owns an id), so that a bad set writes nothing; then it
// creates or updates each schedule (one the same as stored is not
// written) and removes the schedules whose static field is set.Source and
// that the set no longer lists. Instances that start together with the
// same set converge: every write is a compare-and-swap, and a removal
// someone else made is no error.
func (s *Store) ApplyStatic(ctx context.Context, set StaticSet) (StaticResult, error) {
	var res StaticResult
	set, err := set.Resolve()
	if err != nil {
		return res, err
	}
	for i, e := range set.Schedules {
		if err := s.CheckSpec(ctx, e.ID, e.Spec); err != nil {
			return res, set.entryError(i, e.ID, err)
		}
		cur, err := s.GetSpec(ctx, e.ID)
		switch {
		case errors.Is(err, kvstore.ErrNotFound):
		case err == nil:
			if err := (SaveOptions{Owner: set.Source}).checkOwner(e.ID, cur.Spec); err != nil {
				return res, set.entryError(i, e.ID, err)
			}
		case !errors.Is(err, kvstore.ErrInvalid): // an undecodable record is replaced
			return res, err
		}
	}
	listed := make([]string, 0, len(set.Schedules))
	for i, e := range set.Schedules {
		r, err := s.SaveSpec(ctx, e.ID, e.Spec, SaveOptions{Owner: set.Source})
		if err != nil {
			return res, set.entryError(i, e.ID, err)
		}
		switch {
		case r.Unchanged:
			res.Unchanged = append(res.Unchanged, e.ID)
		case r.Created:
			res.Created = append(res.Created, e.ID)
		default:
			res.Updated = append(res.Updated, e.ID)
		}
		listed = append(listed, e.ID)
	}
	slices.Sort(listed)
	specs, _, err := s.ListSpecs(ctx)
	if err != nil {
		return res, err
	}
	for _, e := range specs {
		if e.Spec.Static != set.Source {
			continue
		}
		if _, ok := slices.BinarySearch(listed, e.ID); ok {
			continue
		}
		err := s.deleteSpec(ctx, e.ID, 0, set.Source)
		switch {
		case err == nil:
			res.Removed = append(res.Removed, e.ID)
		case errors.Is(err, kvstore.ErrNotFound): // another instance removed it
		default:
			return res, fmt.Errorf("kvstore: remove static schedule %q, no longer in %s: %w", e.ID, set.Source, err)
		}
	}
	return res, nil
}

// StaticSchedule is one schedule of a StaticSet.
type StaticSchedule struct {
	// ID is the schedule's id; "" derives it from the spec (DefaultKey).
	ID   string
	Spec kvstore.Spec
}

// StaticResult says what ApplyStatic did, by schedule id.
type StaticResult struct {
	Created, Updated, Unchanged, Removed []string
}
