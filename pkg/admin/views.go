package admin

import (
	"context"
	"time"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// ScheduleInfo is a schedule as schedule.get and schedule.list show it:
// its spec, its state, and its last slot's ledger status. Revision is the
// spec's revision, the value if_revision compares with.
type ScheduleInfo struct {
	ID       string         `json:"id"`
	Revision uint64         `json:"revision"`
	Spec     kvstore.Spec   `json:"spec"`
	Invalid  string         `json:"invalid,omitempty"`
	State    *kvstore.State `json:"state,omitempty"`
	// Planned: State is the plan schedulers keep in memory; the record is
	// written with the first fire.
	Planned    bool       `json:"planned,omitempty"`
	LastStatus string     `json:"last_status,omitempty"`
	LastSlot   *time.Time `json:"last_slot,omitempty"`
	// Omitted names the spec fields a listing left out because they are
	// larger than 1 KiB ("input", "calendar_inline"); schedule.get returns
	// them whole.
	Omitted []string `json:"omitted,omitempty"`
}

// Info reads the state and the last slot's ledger entry of a spec.
func Info(ctx context.Context, store *jsstore.Store, e jsstore.SpecEntry, decodeErr error) ScheduleInfo {
	return info(ctx, store, store.NewEndedReader(), e, decodeErr)
}

// info is Info with the ended lists read by lists, which a page of a
// listing shares among its schedules.
func info(ctx context.Context, store *jsstore.Store, lists *jsstore.EndedReader, e jsstore.SpecEntry, decodeErr error) ScheduleInfo {
	v := ScheduleInfo{ID: e.ID, Revision: e.Revision, Spec: e.Spec}
	if decodeErr == nil {
		decodeErr = e.Spec.Validate(e.ID)
	}
	if decodeErr != nil {
		v.Invalid = decodeErr.Error()
	}
	st, planned, err := fires.StoredState(ctx, store, e, time.Now())
	if err != nil {
		return v
	}
	if !planned {
		// A recurring schedule's record may be behind its fires (left
		// behind by --state-interval): shown as the schedulers see it.
		st = fires.CaughtUp(ctx, store, e, st, time.Now())
	}
	v.State, v.Planned = &st, planned
	if planned && e.Spec.At != nil && !st.Ended && !st.Next.IsZero() && !st.Next.After(time.Now()) {
		// A one-shot fired in a window has its record written a little
		// after its fire (fires.Config.RecordLag): the stream says it fired.
		if f, err := store.LastFired(ctx, e.ID); err == nil && f.SlotID == kvstore.SlotID(e.ID, st.Next) {
			slot := f.Slot
			st.Next, st.Ended, st.Fires = time.Time{}, true, st.Fires+1
			v.Planned, v.LastSlot, v.LastStatus = false, &slot, string(kvstore.TickDispatched)
			return v
		}
		// One fired in a window may have no record of its own for good:
		// an ended list stands for it (fires.Config.EndedLists).
		if ended, ok := fires.ListedState(ctx, store, lists, e, st.Plan); ok {
			*v.State = ended
			slot := ended.Claim.Slot
			v.Planned, v.LastSlot, v.LastStatus = false, &slot, string(kvstore.TickDispatched)
			return v
		}
	}
	if c := st.Claim; c != nil {
		slot := c.Slot
		v.LastSlot = &slot
		v.LastStatus = string(kvstore.TickClaimed)
		switch t, err := store.GetTick(ctx, c.ID(e.ID)); {
		case err == nil:
			v.LastStatus = string(t.Status)
		case c.Settled():
			v.LastStatus = string(kvstore.TickDispatched) // a window's fire: its record has the sequence
		default:
			if _, published, err := store.Published(ctx, e.ID, c.ID(e.ID)); err == nil && published {
				v.LastStatus = string(kvstore.TickDispatched)
			}
		}
	}
	return v
}

// StateName is the listing state of a schedule (one of States).
func (v ScheduleInfo) StateName() string {
	var flags uint8
	if v.Invalid != "" {
		flags |= flagInvalid
	}
	if st := v.State; st != nil && !v.Planned {
		flags |= flagState
		if st.Paused != nil {
			flags |= flagPaused
		}
		if st.Ended {
			flags |= flagEnded
		}
	}
	return stateOf(flags)
}

// StatusRow is one schedule in the status listing.
type StatusRow struct {
	ID         string     `json:"id"`
	Workflow   string     `json:"workflow"`
	State      string     `json:"state"`
	Next       *time.Time `json:"next,omitempty"`
	LastSlot   *time.Time `json:"last_slot,omitempty"`
	LastStatus string     `json:"last_status,omitempty"`
	Fires      uint64     `json:"fires"`
	Missed     uint64     `json:"missed"`
	Paused     string     `json:"paused,omitempty"`
	Running    string     `json:"running,omitempty"`
	// Backfill is the backfill in progress: its range, cursor, rate, and
	// done of total slots.
	Backfill *kvstore.Backfill `json:"backfill,omitempty"`
	Shard    int               `json:"shard"`
	Owner    string            `json:"owner,omitempty"`
	Invalid  string            `json:"invalid,omitempty"`
}

// statusRow is a schedule's status line: its next fire, last slot and
// status, misfire count, pause note, backfill progress and the instance
// owning its shard.
func statusRow(v ScheduleInfo, shards int, owners map[int]string) StatusRow {
	r := StatusRow{ID: v.ID, Workflow: v.Spec.Workflow, State: v.StateName(), Invalid: v.Invalid,
		Shard: kvstore.ShardOf(v.ID, shards), LastStatus: v.LastStatus, LastSlot: v.LastSlot}
	r.Owner = owners[r.Shard]
	st := v.State
	if st == nil {
		return r
	}
	if !st.Ended && !st.Next.IsZero() {
		n := st.Next
		r.Next = &n
	}
	r.Fires, r.Missed, r.Backfill = st.Fires, st.Missed, st.Backfill
	if p := st.Paused; p != nil {
		r.Paused = "yes"
		if p.Note != "" {
			r.Paused += ": " + p.Note
		}
		if !p.Until.IsZero() {
			r.Paused += " (until " + p.Until.UTC().Format(time.RFC3339) + ")"
		}
	}
	if st.Running != nil {
		r.Running = st.Running.SlotID
	}
	return r
}
