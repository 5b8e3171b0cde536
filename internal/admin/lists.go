package admin

import (
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Page is one page of a listing: the items, the count of every item that
// matches the request's filters (on every page), and the cursor of the
// next page ("" on the last).
type Page[T any] struct {
	Items      []T    `json:"items"`
	Total      int    `json:"total"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// ListRequest pages through schedules (schedule.list and status). Cursor
// is a previous page's next_cursor; Limit the page size (default
// DefaultLimit, at most MaxLimit). Workflow, State (one of States),
// Prefix (of the id) and Selector (a label selector, "team=billing,
// tier!=gold": internal/labels.Parse) filter. Schedules come in id order.
type ListRequest struct {
	Cursor   string `json:"cursor,omitempty"`
	Limit    int    `json:"limit,omitempty"`
	Workflow string `json:"workflow,omitempty"`
	State    string `json:"state,omitempty"`
	Prefix   string `json:"prefix,omitempty"`
	Selector string `json:"selector,omitempty"`
}

// StatusPage is the reply of status: a summary of every schedule and a
// page of rows.
type StatusPage struct {
	Summary    Summary     `json:"summary"`
	Items      []StatusRow `json:"items"`
	Total      int         `json:"total"`
	NextCursor string      `json:"next_cursor,omitempty"`
}

// HistoryRequest pages through a schedule's ledger, newest slot first
// unless Order is "oldest".
type HistoryRequest struct {
	ID     string `json:"id"`
	Cursor string `json:"cursor,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Order  string `json:"order,omitempty"`
}

// HistoryItem is one slot of a schedule's ledger. Clipped names text
// fields cut to 1 KiB in the listing.
type HistoryItem struct {
	kvstore.Tick
	Clipped []string `json:"clipped,omitempty"`
}

// WakeupListRequest pages through pending timers, in key order, of a run
// or a workflow or all, and of those the ones whose labels Selector (as
// ListRequest's) matches.
type WakeupListRequest struct {
	Run      string `json:"run,omitempty"`
	Workflow string `json:"workflow,omitempty"`
	Selector string `json:"selector,omitempty"`
	Cursor   string `json:"cursor,omitempty"`
	Limit    int    `json:"limit,omitempty"`
}

// TimerItem is one pending timer in a listing. Omitted names fields left
// out because they are larger than 1 KiB (wakeup get... the record in the
// bucket holds them).
type TimerItem struct {
	Key string `json:"key"`
	kvstore.Timer
	Omitted []string `json:"omitted,omitempty"`
	// Invalid says why the record under Key is not a timer the engine
	// fires (written straight into the bucket: it does not decode, or
	// fails the API's checks); the engine reports it once (a failed
	// ledger entry and an invalid event) and leaves it for the operator.
	Invalid string `json:"invalid,omitempty"`
}

// TimerReply is the answer of wakeup.get: the timer as a listing shows it,
// whole (nothing omitted), with its revision in the wakeups bucket.
type TimerReply struct {
	TimerItem
	Revision uint64 `json:"revision"`
}

// CalendarListRequest pages through calendars, in name order.
type CalendarListRequest struct {
	Cursor string `json:"cursor,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// CalendarRow is one calendar in a listing.
type CalendarRow struct {
	Name     string `json:"name"`
	Zone     string `json:"zone,omitempty"`
	Revision uint64 `json:"revision"`
	Invalid  string `json:"invalid,omitempty"`
	// Builtin is set on a shipped calendar (builtin:NAME), read from the
	// binary, not the bucket (revision 0).
	Builtin bool `json:"builtin,omitempty"`
}

// Page sizes and reply bounds of the listings.
const (
	// DefaultLimit is a page's size when the request gives none.
	DefaultLimit = 100
	// MaxLimit is the largest page a request may ask for.
	MaxLimit = 1000
	// maxReplyBytes bounds the items of one reply (half the default max
	// payload, and at most half the connection's): a page whose items
	// would pass it ends early, with next_cursor at its last item.
	maxReplyBytes = 512 << 10
)
