package admin

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/jetsched/jetsched/pkg/fire"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// ScheduleInfo is a schedule as schedule.get and schedule.list show it:
// its spec, its state, and its last slot's ledger status.
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
}

// Info reads the state and the last slot's ledger entry of a spec.
func Info(ctx context.Context, store *kvstore.Store, e kvstore.SpecEntry, decodeErr error) ScheduleInfo {
	v := ScheduleInfo{ID: e.ID, Revision: e.Revision, Spec: e.Spec}
	if decodeErr == nil {
		decodeErr = e.Spec.Validate(e.ID)
	}
	if decodeErr != nil {
		v.Invalid = decodeErr.Error()
	}
	st, planned, err := fire.StoredState(ctx, store, e, time.Now())
	if err != nil {
		return v
	}
	v.State, v.Planned = &st, planned
	if c := st.Claim; c != nil {
		slot := c.Slot
		v.LastSlot = &slot
		v.LastStatus = string(kvstore.TickClaimed)
		if t, err := store.GetTick(ctx, c.ID(e.ID)); err == nil {
			v.LastStatus = string(t.Status)
		}
	}
	return v
}

// StatusRow is one schedule in the status listing.
type StatusRow struct {
	ID         string     `json:"id"`
	Workflow   string     `json:"workflow"`
	Next       *time.Time `json:"next,omitempty"`
	LastSlot   *time.Time `json:"last_slot,omitempty"`
	LastStatus string     `json:"last_status,omitempty"`
	Fires      uint64     `json:"fires"`
	Missed     uint64     `json:"missed"`
	Paused     string     `json:"paused,omitempty"`
	Running    string     `json:"running,omitempty"`
	Shard      int        `json:"shard"`
	Owner      string     `json:"owner,omitempty"`
	Invalid    string     `json:"invalid,omitempty"`
}

// Status lists every schedule with its next fire, last slot and status,
// misfire count, pause note and the instance owning its shard.
func Status(ctx context.Context, store *kvstore.Store) ([]StatusRow, error) {
	specs, bad, err := store.ListSpecs(ctx)
	if err != nil {
		return nil, err
	}
	shards, err := store.Shards(ctx)
	if err != nil {
		return nil, err
	}
	owners := store.LeaseOwners(ctx)
	slices.SortFunc(specs, func(x, y kvstore.SpecEntry) int { return strings.Compare(x.ID, y.ID) })
	rows := make([]StatusRow, 0, len(specs))
	for _, e := range specs {
		v := Info(ctx, store, e, bad[e.ID])
		r := StatusRow{ID: e.ID, Workflow: e.Spec.Workflow, Invalid: v.Invalid, Shard: fire.ShardOf(e.ID, shards), LastStatus: v.LastStatus, LastSlot: v.LastSlot}
		r.Owner = owners[r.Shard]
		if st := v.State; st != nil {
			if !st.Ended && !st.Next.IsZero() {
				n := st.Next
				r.Next = &n
			}
			r.Fires, r.Missed = st.Fires, st.Missed
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
		}
		rows = append(rows, r)
	}
	return rows, nil
}
