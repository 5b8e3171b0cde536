// Package readmodel answers "what state is schedule X in?" once, for
// every surface that shows it: the admin API's schedule.get and
// listings, the console's pages, and (through the admin API) pkg/client.
// The engine (internal/fires) uses its stream reads too, so what a reader
// is shown and what a scheduler decides cannot drift apart.
//
// A schedule's state comes from five sources: its spec; its state record,
// or, before the first fire, the plan schedulers keep in memory; its last
// fire in the stream (a record left behind by a window, or written late);
// the ended lists (a windowed one-shot may have no record of its own); and
// the ledger (the last slot's status). Model.Info reads them all for one
// schedule. Listings that hold every schedule in memory (the admin API's
// catalogue, the console's index) keep one Row a schedule, in their own
// order (a Table): a Follower, run by a Runner, applies the specs, state
// records and ended lists to the rows, and Row.State names the state.
//
// The package does not import the engine: the engine's pure decision
// comes in as a Planner (fires.Planner).
package readmodel

import (
	"context"
	"errors"
	"time"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Planner is the engine's decision as a reader of the buckets needs it:
// fires.Planner is the engine's own, so that a reader shows what the
// schedulers plan.
type Planner interface {
	// Planned is the state a scheduler plans for schedule id, without a
	// state record yet, at now: written is when its spec was stored
	// (kvstore.SpecEntry.Written); src resolves a named calendar. An error
	// says the spec does not compile.
	Planned(id string, spec kvstore.Spec, written, now time.Time, src compile.CalendarSource) (kvstore.State, error)
	// Replan moves st, a recurring schedule's record compiled as c, past
	// its claim as a scheduler's decision at now would (its next slot, and
	// the misfires up to now); a record with nothing to re-plan is left as
	// it is.
	Replan(c compile.Compiled, st *kvstore.State, now time.Time)
}

// Model reads a schedule's state from the buckets of Store as the
// schedulers see it, planned by Planner.
type Model struct {
	Store   *jsstore.Store
	Planner Planner
}

// StoredState reads the state record of a stored spec, or, when it has none
// yet, the plan a scheduler keeps for it (planned is then true). A spec
// that has neither (it does not compile) gives kvstore.ErrNotFound.
func (m Model) StoredState(ctx context.Context, e jsstore.SpecEntry, now time.Time) (st kvstore.State, planned bool, err error) {
	st, _, err = m.Store.GetState(ctx, e.ID)
	if !errors.Is(err, kvstore.ErrNotFound) {
		return st, false, err
	}
	if st, perr := m.Planner.Planned(e.ID, e.Spec, e.Written, now, m.Store.CalendarSource(ctx)); perr == nil {
		return st, true, nil
	}
	return kvstore.State{}, false, err
}

// CaughtUp is st, the state record of stored spec e, as a scheduler sees
// it once it has read the fire stream (BehindStream): a recurring
// schedule's record behind its fires (left behind, fires.Config.StateInterval,
// or put back) shows the stream's last fire as its claim, the fires in
// between counted, and the slot after it as next; one that took that fire
// as its claim already shows the slot after it as next. Any other record,
// and any that cannot be checked, is returned as it is.
func (m Model) CaughtUp(ctx context.Context, e jsstore.SpecEntry, st kvstore.State, now time.Time) kvstore.State {
	c := st.Claim
	if e.Spec.At != nil || c == nil || c.Window == "" || c.SlotID != "" || !c.Settled() || st.Ended || st.Next.IsZero() || st.Next.After(now) {
		return st
	}
	compiled, err := compile.Compile(e.Spec, e.ID, m.Store.CalendarSource(ctx), nil)
	if err != nil {
		return st
	}
	caught, _, err := BehindStream(ctx, m.Store, e.ID, compiled.Schedule, compiled.Plan, &st)
	switch {
	case err != nil:
		return st
	case caught == nil && st.Next.After(c.Slot):
		return st
	case caught == nil:
		caught = &st // caught up already, its next slot not moved past its claim yet
	}
	m.Planner.Replan(compiled, caught, now)
	return *caught
}
