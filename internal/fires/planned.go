package fires

import (
	"time"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Planned is the state a scheduler plans for a schedule that has no state
// record yet: schedulers keep that plan in memory and create the record
// with the first claim (or misfire). Readers such as the admin API and the
// Go SDK show it in place of the missing record. written is when the spec
// was stored (kvstore.SpecEntry.Written); src resolves a named calendar.
func Planned(id string, spec kvstore.Spec, written, now time.Time, src compile.CalendarSource) (kvstore.State, error) {
	c, err := compile.Compile(spec, id, src, nil)
	if err != nil {
		return kvstore.State{}, err
	}
	d := Decide(Input{Now: now, Plan: c.Plan, Policy: c.Policy, Schedule: c.Schedule,
		MisfireThreshold: DefaultMisfireThreshold, Written: written, At: deref(spec.At)})
	st := plannedState(c.Plan, d, time.Time{})
	return *st, nil
}

// inMemoryPlan is the packed plan of a new schedule as decided (d,
// ActInit) at now, and whether it is kept in memory only, unwritten: when
// it skips no slots (skips go to the ledger at once) and packs (its times
// fit the entry's Unix nanoseconds). Otherwise a worker writes it as the
// schedule's first state record. The loop (loop.plan) and the worker
// (worker.act) both ask this, so that a plan the loop leaves to a worker
// is never one the worker leaves to the loop: around and around, that
// pinned a core (issue 52).
func inMemoryPlan(plan string, d Decision, now time.Time) (packedState, bool) {
	if d.Action != ActInit || len(d.Step.Skipped) > 0 {
		return packedState{}, false
	}
	return packState(plannedState(plan, d, now))
}

// plannedState is a new schedule's state as decided (ActInit) at now.
func plannedState(plan string, d Decision, now time.Time) *kvstore.State {
	st := &kvstore.State{Plan: plan, UpdatedAt: utc(now)}
	setNext(st, d)
	return st
}

// Planner is the engine's decision as a reader of the buckets needs it
// (readmodel.Planner): the plan of a schedule without a state record, and
// the re-plan of a record caught up with the stream.
type Planner struct{}

// Planned is the package's Planned.
func (Planner) Planned(id string, spec kvstore.Spec, written, now time.Time, src compile.CalendarSource) (kvstore.State, error) {
	return Planned(id, spec, written, now, src)
}

// Replan moves st past its claim as Decide at now does for a recurring
// schedule compiled as c, when its decision is to re-plan.
func (Planner) Replan(c compile.Compiled, st *kvstore.State, now time.Time) {
	sc := schedOf(c, nil)
	d := Decide(Input{Now: now, Plan: sc.Plan, Policy: sc.policy(), Schedule: sc.Schedule, State: st, MisfireThreshold: DefaultMisfireThreshold})
	if d.Action == ActReplan {
		setNext(st, d)
	}
}

// maxControlAttempts bounds the compare-and-swap retries of a removed
// schedule's state delete (worker.removeState), as internal/control bounds
// an operator's write.
const maxControlAttempts = 20
