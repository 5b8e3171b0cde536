package readmodel

import (
	"context"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Info is stored spec e (decodeErr: why it does not decode) as
// schedule.get and the listings show it: its state as the schedulers see
// it (the record caught up with the stream, or the plan, or what an ended
// list or the stream says of a one-shot fired in a window), and its last
// slot's ledger status. lists reads the ended lists, shared by the
// schedules of a page (nil: a reader of its own).
func (m Model) Info(ctx context.Context, lists *jsstore.EndedReader, e jsstore.SpecEntry, decodeErr error) admin.ScheduleInfo {
	store := m.Store
	v := admin.ScheduleInfo{ID: e.ID, Revision: e.Revision, Spec: e.Spec}
	if decodeErr == nil {
		decodeErr = compile.Validate(e.Spec, e.ID, nil)
	}
	if decodeErr != nil {
		v.Invalid = decodeErr.Error()
	}
	st, planned, err := m.StoredState(ctx, e, time.Now())
	if err != nil {
		return v
	}
	if !planned {
		// A recurring schedule's record may be behind its fires (left
		// behind by --state-interval): shown as the schedulers see it.
		st = m.CaughtUp(ctx, e, st, time.Now())
	}
	v.State, v.Planned = &st, planned
	if planned && e.Spec.At != nil && !st.Ended && !st.Next.IsZero() && !st.Next.After(time.Now()) {
		// A one-shot fired in a window has its record written a little
		// after its fire (fires.Config.RecordLag): the stream says it fired.
		if slot, ok := lastFiredOneShot(ctx, store, e.ID, st.Next); ok {
			st.Next, st.Ended, st.Fires = time.Time{}, true, st.Fires+1
			v.Planned, v.LastSlot, v.LastStatus = false, &slot, string(kvstore.TickDispatched)
			return v
		}
		// One fired in a window may have no record of its own for good:
		// an ended list stands for it (fires.Config.EndedLists).
		if lists == nil {
			lists = store.NewEndedReader()
		}
		if ended, ok := ListedState(ctx, store, lists, e, st.Plan); ok {
			*v.State = ended
			slot := ended.Claim.Slot
			v.Planned, v.LastSlot, v.LastStatus = false, &slot, string(kvstore.TickDispatched)
			return v
		}
	}
	if c := st.Claim; c != nil {
		slot := c.Slot
		v.LastSlot = &slot
		v.LastStatus = lastStatus(ctx, store, e.ID, c)
	}
	return v
}

// lastStatus is the ledger status of claim c of schedule id: its entry's,
// or, without one, dispatched when the fire is known to be in the stream
// (a window's settled claim, or the stream's own), else claimed.
func lastStatus(ctx context.Context, store *jsstore.Store, id string, c *kvstore.Claim) string {
	switch t, err := store.GetTick(ctx, c.ID(id)); {
	case err == nil:
		return string(t.Status)
	case c.Settled():
		return string(kvstore.TickDispatched) // a window's fire: its record has the sequence
	default:
		if _, published, err := store.Published(ctx, id, c.ID(id)); err == nil && published {
			return string(kvstore.TickDispatched)
		}
	}
	return string(kvstore.TickClaimed)
}
