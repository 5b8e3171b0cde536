package fires

import (
	"context"
	"errors"
	"fmt"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// shows reports whether state st already accounts for claim c's slot: its
// claim is on that slot, or its Next is past it (or the recurrence ended).
func shows(st kvstore.State, c kvstore.Claim) bool {
	if st.Claim != nil && st.Claim.SlotID == "" && st.Claim.Slot.Equal(c.Slot) {
		return true
	}
	return st.Ended || st.Next.After(c.Slot)
}

// checkWindow reads the shard's window record, when this instance takes
// the shard or after a window of its own did not finish. The loop then
// has each slot it lists that no state record shows demoted: written into
// that record as the window's claim (same token, owner and expiry), which
// the per-slot protocol waits for, looks up in the ledger and takes over
// if missing, exactly as a claim whose owner died. Nothing of the shard is
// dispatched until then.
func (w worker) checkWindow(ctx context.Context, wj *checkJob) *checkResult {
	out := &checkResult{shard: wj.shard, gen: wj.gen}
	win, rev, err := w.e.store.GetWindow(ctx, wj.shard)
	switch {
	case errors.Is(err, kvstore.ErrNotFound):
	case errors.Is(err, kvstore.ErrInvalid):
		w.e.log.Warn("undecodable window record; the next window replaces it", "shard", wj.shard, "revision", rev, "err", err)
		out.mark = windowMark{rev: rev}
	case err != nil:
		out.err = err
	default:
		out.mark, out.found = windowMark{rev: rev, seq: win.Seq}, &win
	}
	if out.err != nil {
		return out
	}
	out.lists, out.err = w.e.store.EndedLists(ctx, wj.shard, func(key string, err error) {
		w.e.log.Warn("undecodable ended list ignored; it stands for no record", "key", key, "err", err)
	})
	return out
}

// demoted is a state record a demotion wrote, at its revision.
type demoted struct {
	id    string
	state kvstore.State
	rev   uint64
}

// demote writes window win's claim on slot s into the schedule's state
// record unless the record shows the slot already, and reports the record
// it wrote (nil: none). known is the loop's snapshot of the schedule
// (zero when it has none); a conflict re-reads.
func (w worker) demote(ctx context.Context, win jsstore.Window, s jsstore.WindowSlot, known slotJob) (*demoted, error) {
	c := win.Claim(s)
	if c.Slot.After(win.At.Add(windowSkew)) || c.Slot.IsZero() {
		// A window claims due slots only: this record is forged or from a
		// clock far off. Its slot is not made a claim (the schedule's own
		// record decides when it fires).
		w.e.log.Warn("window record lists a slot after its own time; ignored", "schedule", s.Schedule, "slot", c.Slot, "window", win.Name(), "window_at", win.At)
		return nil, nil
	}
	st, rev, exists := known.state, known.stateRev, known.state != nil && !known.planned
	if known.id == "" {
		exists = false
		rec, r, err := w.e.store.GetState(ctx, s.Schedule)
		switch {
		case err == nil:
			st, rev, exists = &rec, r, true
		case errors.Is(err, kvstore.ErrNotFound):
			switch _, serr := w.e.store.GetSpec(ctx, s.Schedule); {
			case errors.Is(serr, kvstore.ErrNotFound):
				return nil, nil // removed: no record to write, nothing left to fire
			case serr != nil && !errors.Is(serr, kvstore.ErrInvalid):
				return nil, serr
			}
		default:
			return nil, err
		}
	}
	if !exists {
		// No state record, yet the window names a slot of the schedule: a
		// window left behind (its owner stopped before checking it) whose
		// schedule's record was deleted by hand since. If the stream holds
		// this slot or a later regular one, the window's claim is settled:
		// a claim written now would take the schedule back to this slot
		// and pass over the fires after it. The schedule's own decision,
		// without a record, starts from the stream's last fire
		// (plannedBehind).
		f, found, err := readmodel.LastRegularFire(ctx, w.e.store, s.Schedule)
		if err != nil {
			return nil, err
		}
		if found && !f.Slot.Before(c.Slot) {
			w.e.log.Info("window slot settled by the stream (the schedule has no state record)", "schedule", s.Schedule,
				"slot", c.Slot, "window", win.Name(), "window_owner", win.Owner, "last_fired", f.Slot)
			return nil, nil
		}
	}
	for range maxSteps {
		var next kvstore.State
		caughtUp := false
		if exists {
			if shows(*st, c) {
				return nil, nil
			}
			next = *st
			// A record behind the stream by more than this slot (its
			// owner left it behind, behind.go): if the stream holds this
			// slot or a later one, the record takes the stream's last
			// fire, settled, with the fires in between.
			if caught, err := w.lagging(ctx, s.Schedule, known.compiled, st); err == nil && caught != nil && !caught.Claim.Slot.Before(c.Slot) {
				next, caughtUp = *caught, true
			}
		} else if known.state != nil {
			next = *known.state // a plan: its Plan and Next
		}
		if !caughtUp {
			if next.Next.IsZero() || next.Next.After(c.Slot) {
				next.Next = c.Slot // Decide moves past the claim once it is settled
			}
			next.Claim = &c
			next.Fires++
		}
		next.UpdatedAt, next.Owner = w.e.cfg.Clock.Now().UTC(), w.e.cfg.Instance
		if err := w.guard(s.Schedule); err != nil {
			return nil, err
		}
		var err error
		var wrote uint64
		if exists {
			wrote, err = w.e.store.UpdateState(ctx, s.Schedule, next, rev)
		} else {
			wrote, err = w.e.store.CreateState(ctx, s.Schedule, next)
		}
		if err == nil {
			if !caughtUp { // (else lagging logged it)
				w.e.log.Info("window slot turned into a claim on its record", "schedule", s.Schedule, "slot", c.Slot, "window", win.Name(), "window_owner", win.Owner)
			}
			return &demoted{id: s.Schedule, state: next, rev: wrote}, nil
		}
		if !errors.Is(err, kvstore.ErrConflict) {
			return nil, err
		}
		rec, r, gerr := w.e.store.GetState(ctx, s.Schedule)
		switch {
		case gerr == nil:
			st, rev, exists = &rec, r, true
		case errors.Is(gerr, kvstore.ErrNotFound):
			exists = false
		default:
			return nil, gerr
		}
	}
	return nil, fmt.Errorf("fire: state of %s changed at each of %d attempts to record window slot %s: %w", s.Schedule, maxSteps, c.ID(s.Schedule), kvstore.ErrConflict)
}
