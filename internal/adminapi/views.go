package adminapi

import (
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// statusRow is a schedule's status line: its next fire, last slot and
// status, misfire count, pause note, backfill progress and the instance
// owning its shard.
func statusRow(v admin.ScheduleInfo, shards int, owners map[int]string) admin.StatusRow {
	r := admin.StatusRow{ID: v.ID, Workflow: v.Spec.Workflow, State: readmodel.StateOf(v), Invalid: v.Invalid,
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
