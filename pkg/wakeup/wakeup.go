package wakeup

import (
	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/wakeups"
)

// Request registers a timer (pkg/client's Client.Wakeup). Exactly one of
// When, WhenExpr, At and Compute gives the due time; the forms When may
// take are in docs/timers.md ("48 whours", "02:00", "2026-12-31 23:59",
// "1h30m").
type Request = wakeups.Request

// Filter selects the timers pkg/client's Client.Wakeups yields: those of
// a run, of a workflow, of both, or (zero) all, narrowed by a label
// selector (Filter.Selector, as `scheduler wakeup ls -l` takes it).
type Filter = wakeups.Filter

// Meta is what a wakeup message's headers say: its id, run, step,
// workflow, condition (and condition key), the form it was registered
// with, why it was sent, its re-arm count and its labels. pkg/client's
// Client.RearmWakeup takes it back to set the timer again.
type Meta = wakeups.Meta

// ParseMeta reads the headers of a wakeup message.
func ParseMeta(h nats.Header) (Meta, error) { return wakeups.ParseMeta(h) }

// Outcomes of a cancel: the values of pkg/client's CancelOutcome, and the
// "outcome" of the admin API's wakeup.cancel reply.
const (
	// OutcomeCancelled: the timer was removed before any scheduler
	// claimed it.
	OutcomeCancelled = wakeups.OutcomeCancelled
	// OutcomeFired: a scheduler had already claimed the timer; the cancel
	// lost the race. It is being fired, or, when its condition key no
	// longer holds, dropped as stale: the ledger says which.
	OutcomeFired = wakeups.OutcomeFired
)
