package readmodel

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// noteLayout is how a describe's notes write times (preview --explain's
// layout, with the zone).
const noteLayout = "2006-01-02 15:04 MST"

// Describe is schedule.describe's view of stored spec e (decodeErr: why
// it does not decode): Info, with its settings, owner, last actions
// (operator actions from trail when it can be read) and next fires.
// lists reads the ended lists (nil: a reader of its own).
func (m Model) Describe(ctx context.Context, lists *jsstore.EndedReader, e jsstore.SpecEntry, decodeErr error, trail audit.Trail, req admin.DescribeRequest) admin.Description {
	now := time.Now()
	d := admin.Description{ScheduleInfo: m.Info(ctx, lists, e, decodeErr), Actions: []admin.Action{}, Next: []admin.NextFire{}}
	d.Status = StateOf(d.ScheduleInfo)
	c, cerr := compile.Compile(e.Spec, e.ID, m.Store.CalendarSource(ctx), nil)
	loc := compile.Location(e.Spec)
	if cerr == nil {
		loc = c.Location
	}
	d.Zone = loc.String()
	d.Settings = Settings(e.Spec, c, cerr == nil)
	d.Owner = m.owner(ctx, e.ID)
	d.Actions, d.ActionsNote = m.actions(ctx, e.ID, d.State, trail, cmp.Or(req.Actions, admin.DefaultDescribeActions))
	switch {
	case cerr != nil:
		d.NextNote = "none: " + cerr.Error()
	case d.State == nil || d.State.Ended:
		d.NextNote = "none: the schedule has ended"
	default:
		d.Next = NextFires(e.ID, c, d.State, now, cmp.Or(req.Next, admin.DefaultDescribeNext), loc)
		switch {
		case len(d.Next) == 0:
			d.NextNote = "none: the recurrence has no further fire"
		case d.State.Next.IsZero():
			d.NextNote = "no scheduler has planned its next slot yet: counted from now"
		}
	}
	return d
}

// owner is the shard of schedule id and the instance holding its lease.
func (m Model) owner(ctx context.Context, id string) admin.Owner {
	shards, err := m.Store.Shards(ctx)
	if err != nil {
		return admin.Owner{}
	}
	o := admin.Owner{Shard: kvstore.ShardOf(id, shards), Shards: shards}
	o.Instance = m.Store.LeaseOwners(ctx)[o.Shard]
	return o
}

// actions are schedule id's last n actions, newest first: its ledger's
// slots and the operators' actions (the trail's, and what the state
// record st keeps that the trail does not name), with a note when the
// trail cannot be read.
func (m Model) actions(ctx context.Context, id string, st *kvstore.State, trail audit.Trail, n int) ([]admin.Action, string) {
	var note string
	out, err := m.LedgerActions(ctx, id, n)
	if err != nil {
		note = "the ledger could not be read: " + err.Error()
	}
	ops, err := m.AuditActions(ctx, trail, id, AuditWindow)
	switch {
	case errors.Is(err, kvstore.ErrNotFound):
		note = joinNote(note, "no audit trail (the schedulers run without --audit-key-file): operator actions are those the state record keeps (its pause, pending triggers, last resume), without who")
	case err != nil:
		note = joinNote(note, "the audit trail could not be read ("+err.Error()+"): operator actions are those the state record keeps")
	}
	out = append(append(out, ops...), stateActions(st, ops)...)
	slices.SortStableFunc(out, func(x, y admin.Action) int { return y.At.Compare(x.At) })
	return out[:min(n, len(out))], note
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// NextFires are the next n fires of sched from st, a schedule's state at
// now (its record, or its plan): its next slot first, each with what
// moved it and what was skipped before it (cronx.Step.Notes, in loc), and
// the fires the state will skip (a pause, skip-next) marked so. A
// schedule with a jitter notes each fire's offset and instant.
func NextFires(id string, c compile.Compiled, st *kvstore.State, now time.Time, n int, loc *time.Location) []admin.NextFire {
	sched := c.Schedule
	out := []admin.NextFire{}
	step := firstStep(sched, st, now)
	skipNext := st.SkipNext
	for range n {
		if step.At.IsZero() {
			break
		}
		f := admin.NextFire{At: step.At.In(loc), Notes: step.Notes(loc, noteLayout)}
		if j := c.Policy.Jitter; j > 0 {
			off := compile.JitterOffset(id, step.At, j)
			f.Notes = append(f.Notes, fmt.Sprintf("jitter +%s: fires %s", off, step.At.Add(off).In(loc).Format(time.RFC3339Nano)))
		}
		if !step.Nominal.IsZero() && !step.Nominal.Equal(step.At) {
			nom := step.Nominal.In(loc)
			f.Nominal = &nom
		}
		switch p := st.Paused; {
		case p != nil && (p.Until.IsZero() || step.At.Before(p.Until)):
			f.Skip = "paused: skipped unless resumed first"
		case skipNext > 0:
			f.Skip = "skip-next: an operator asked to skip it"
			skipNext--
		}
		out = append(out, f)
		step = cronx.ExplainAfter(sched, step.At, step.Nominal)
	}
	return out
}

// firstStep is st's next slot with its explanation: the step after the
// record's last regular slot when that is the next slot (it names what
// was skipped in between), else the slot as the record says it was
// moved; the first slot after now when the record has none yet.
func firstStep(sched cronx.Schedule, st *kvstore.State, now time.Time) cronx.Step {
	if st.Next.IsZero() {
		return cronx.Explain(sched, now)
	}
	if c := st.Claim; c != nil && c.SlotID == "" && !c.Slot.IsZero() {
		if step := cronx.ExplainAfter(sched, c.Slot, cmp.Or(c.Nominal, c.Slot)); step.At.Equal(st.Next) {
			return step
		}
	}
	if step := cronx.Explain(sched, st.Next.Add(-time.Nanosecond)); step.At.Equal(st.Next) && (st.NextNominal.IsZero() || step.Nominal.Equal(st.NextNominal)) {
		return step
	}
	return cronx.Step{At: st.Next, Nominal: cmp.Or(st.NextNominal, st.Next), Moved: st.NextReason}
}
