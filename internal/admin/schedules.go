package admin

import (
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// The states a schedule listing filters on. Every schedule is in exactly
// one: invalid (its spec does not decode or validate), ended (its record
// says so, or, without a record, an ended list names it), paused, planned
// (valid, no state record yet: it has not fired), or active.
const (
	StateActive  = "active"
	StatePaused  = "paused"
	StateEnded   = "ended"
	StateInvalid = "invalid"
	StatePlanned = "planned"
)

// States lists the state filter's values.
var States = []string{StateActive, StatePaused, StateEnded, StateInvalid, StatePlanned}

// Summary counts the schedules by state, and the timers.
type Summary struct {
	Schedules int `json:"schedules"`
	Active    int `json:"active"`
	Paused    int `json:"paused"`
	Ended     int `json:"ended"`
	Invalid   int `json:"invalid"`
	Planned   int `json:"planned"`
	Timers    int `json:"timers"`
	// Shards is the number of shards; Instances how many each scheduler
	// instance holds the lease of.
	Shards    int            `json:"shards"`
	Instances map[string]int `json:"instances,omitempty"`
}

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
