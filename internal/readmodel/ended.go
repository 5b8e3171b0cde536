package readmodel

import (
	"context"
	"errors"
	"time"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Ended lists (docs/records.md, "Ended lists"): a one-shot fired in a
// window may keep no state record of its own; an ended list in the leases
// bucket names its slot and stands for the ended record while the spec is
// the same one-shot.

// EndedState is the state record that slot s of ended list l stands for,
// over st (a record an operator created, or a plan): the recurrence ended,
// the list's claim on the slot, settled by the fire's sequence, written
// at now by instance.
func EndedState(st kvstore.State, s jsstore.EndedSlot, l jsstore.Ended, plan string, now time.Time, instance string) kvstore.State {
	listed := s.State(plan, l)
	st.Plan, st.Next, st.Ended, st.NextReason, st.NextNominal = plan, time.Time{}, true, "", time.Time{}
	st.Fires = max(st.Fires, listed.Fires)
	st.Claim = listed.Claim
	st.UpdatedAt, st.Owner = now.UTC(), instance
	return st
}

// SameOneShot reports whether the spec of id, written at written, is
// still the one-shot an ended list written at listAt stands for: written
// no later than the list, or, if written since, not removed and added
// again since (its history; one that does not reach back that far counts
// as the same).
func SameOneShot(ctx context.Context, store *jsstore.Store, id string, written, listAt time.Time) (bool, error) {
	if !written.After(listAt) {
		return true, nil
	}
	created, known, err := store.SpecCreated(ctx, id)
	switch {
	case errors.Is(err, kvstore.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	return !known || !created.After(listAt), nil
}

// ListedState is the ended state record an ended list stands for, for
// readers that are not the shard's owner (schedule get): spec entry e
// is a one-shot without a record, listed with its time, and the same
// one-shot as the list's (SameOneShot). plan is its compiled plan;
// lists reads the ended lists (one reader for all the schedules of a
// reply).
func ListedState(ctx context.Context, store *jsstore.Store, lists *jsstore.EndedReader, e jsstore.SpecEntry, plan string) (kvstore.State, bool) {
	if e.Spec.At == nil {
		return kvstore.State{}, false
	}
	s, l, ok, err := lists.SlotOf(ctx, e.ID)
	if err != nil || !ok || !s.Slot.Equal(*e.Spec.At) {
		return kvstore.State{}, false
	}
	if same, err := SameOneShot(ctx, store, e.ID, e.Written, l.At); err != nil || !same {
		return kvstore.State{}, false
	}
	return s.State(plan, l), true
}
