package readmodel

import (
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Row is what a listing keeps of one schedule, set by a Follower from its
// spec, its state record (or plan) and the ended lists: a listing's own
// row embeds it with what it sorts and filters on besides.
type Row struct {
	// Next is the next slot (unix nanoseconds) the state record, or
	// without one the plan, says; 0 when none. Kept only by a follower
	// with a Planner.
	Next int64
	// At is a one-shot's time (unix nanoseconds); 0 for others.
	At int64
	// Listed is the latest slot an ended list names for the schedule
	// (unix nanoseconds); 0 when none.
	Listed int64
	// List numbers the ended list that last named the schedule
	// (Follower.ListKey); 0 when none.
	List uint32
	// Flags are the spec's and the state record's (FlagListed is not
	// kept: State derives it from Listed and At).
	Flags Flags
}

// EndedByList reports whether an ended list stands for the schedule's
// ended state record: it has no record of its own and the list names its
// one-shot's time (docs/protocol.md, "Ended lists"; a spec moved to
// another time is planned anew).
func (r *Row) EndedByList() bool {
	return r.Flags&FlagState == 0 && r.listsAt()
}

// listsAt reports whether the ended list names the one-shot's time.
func (r *Row) listsAt() bool { return r.Listed != 0 && r.Listed == r.At }

// NextAt is the schedule's next slot (unix nanoseconds), 0 when none.
func (r *Row) NextAt() int64 {
	if r.EndedByList() {
		return 0
	}
	return r.Next
}

// State is the schedule's listing state, as the admin API names it
// (Flags.State).
func (r *Row) State() string {
	f := r.Flags
	if r.listsAt() {
		f |= FlagListed // stands for the record while it has none
	}
	return f.State()
}

// Table is where a Follower keeps its rows: a listing's own store of
// them, in its own order. The follower calls it with the listing's lock
// (Follower.Lock) held; a *Row it returns is used before the next call.
type Table interface {
	// Row is the row of schedule id, nil when the table has none.
	Row(id string) *Row
	// Put adds or replaces the row of schedule id, whose spec is spec
	// (the zero Spec when it does not decode), with r.
	Put(id string, spec kvstore.Spec, r Row)
	// Remove drops the row of schedule id.
	Remove(id string)
	// Reset drops every row, for a (re)load.
	Reset()
}
