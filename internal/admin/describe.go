package admin

import "time"

// Bounds of schedule.describe.
const (
	// DefaultDescribeActions and DefaultDescribeNext are how many actions
	// and coming fires a describe shows when the request gives no count.
	DefaultDescribeActions = 10
	DefaultDescribeNext    = 5
	// MaxDescribe bounds both counts.
	MaxDescribe = 100
)

// DescribeRequest asks for one view of a schedule (schedule.describe):
// its spec with the defaults it runs with, its state, the instance that
// owns it, its last Actions actions (default DefaultDescribeActions) and
// its next Next fires (default DefaultDescribeNext), each at most
// MaxDescribe.
type DescribeRequest struct {
	ID      string `json:"id"`
	Actions int    `json:"actions,omitempty"`
	Next    int    `json:"next,omitempty"`
}

// Description answers schedule.describe: the schedule as schedule.get
// shows it, and what an operator asks next.
type Description struct {
	ScheduleInfo
	// Status is the listing state (one of States).
	Status string `json:"status"`
	// Zone is the IANA zone the recurrence runs in (the spec's, or the
	// default it falls back to).
	Zone string `json:"zone"`
	// Settings are the spec's policies as the scheduler runs them, each
	// with its value and whether the spec leaves it to the default.
	Settings []Setting `json:"settings"`
	// Owner is the shard the schedule belongs to and the instance that
	// holds its lease ("" when none does).
	Owner Owner `json:"owner"`
	// Actions are the schedule's last actions, newest first: the ledger's
	// slots (fired, skipped, missed, ...) and the operators' actions
	// (from the audit trail, else what the state record keeps).
	Actions []Action `json:"actions"`
	// ActionsNote says where the operators' actions come from when the
	// audit trail cannot be read ("" when it was).
	ActionsNote string `json:"actions_note,omitempty"`
	// Next are the coming fires, with what moved or skips them.
	Next []NextFire `json:"next"`
	// NextNote says why there are none or fewer than asked (ended, the
	// spec does not compile).
	NextNote string `json:"next_note,omitempty"`
}

// Setting is one policy of a schedule: its spec field, the value the
// scheduler uses, and whether that is the default (the spec does not
// set it).
type Setting struct {
	Field   string `json:"field"`
	Value   string `json:"value"`
	Default bool   `json:"default,omitempty"`
}

// Owner is who fires a schedule: its shard and the instance that holds
// that shard's lease.
type Owner struct {
	Shard    int    `json:"shard"`
	Shards   int    `json:"shards"`
	Instance string `json:"instance,omitempty"`
}

// Sources of an Action.
const (
	SourceLedger = "ledger" // a slot's ledger entry or fire
	SourceAudit  = "audit"  // an entry of the audit trail
	SourceState  = "state"  // what the state record keeps (a pause, a pending trigger)
)

// Action is one thing that happened to a schedule. A slot's (Source
// "ledger") has Slot, SlotID for an extra slot, and Status (dispatched,
// skipped, missed, ...); an operator's has Action ("schedule.pause",
// "schedule.trigger", ...) and, from the audit trail, Actor. Reason is
// why: the ledger's reason, or the operator's note.
type Action struct {
	At     time.Time  `json:"at"`
	Source string     `json:"source"`
	Action string     `json:"action,omitempty"`
	Status string     `json:"status,omitempty"`
	Slot   *time.Time `json:"slot,omitempty"`
	SlotID string     `json:"slot_id,omitempty"`
	Reason string     `json:"reason,omitempty"`
	Actor  string     `json:"actor,omitempty"`
	Owner  string     `json:"owner,omitempty"`
}

// NextFire is one coming fire: when, the occurrence it comes from when
// moved, the notes of what moved it or was skipped before it (as
// scheduler preview --explain says them), and Skip when the schedule's
// state will skip it (paused, skip-next).
type NextFire struct {
	At      time.Time  `json:"at"`
	Nominal *time.Time `json:"nominal,omitempty"`
	Notes   []string   `json:"notes,omitempty"`
	Skip    string     `json:"skip,omitempty"`
}
