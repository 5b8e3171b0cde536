package fires

import (
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Observer receives the engine's measurements (the daemon feeds them to
// Prometheus). Methods are called from the engine's goroutines and must
// not block. The zero Config uses a no-op observer.
type Observer interface {
	// Fired: a slot was published; lateness is publish time minus the
	// slot's scheduled time; reason is its Sched-Reason ("" regular).
	Fired(workflow string, lateness time.Duration, reason string)
	// Claimed: a claim CAS succeeded, or lost (conflict).
	Claimed(conflict bool)
	// NotFired: n slots were recorded without firing; kind is "missed" or
	// "skipped", reason the category ("misfire", "paused", "operator",
	// "overlap", "calendar").
	NotFired(kind, reason string, n int)
	// Leases: the number of shard leases held now.
	Leases(n int)
	// GuardsClosed: the number of shard leases held now whose guard the
	// lease loop found closed (no renewal for 90% of the TTL: the shard
	// is not dispatched until a renewal succeeds).
	GuardsClosed(n int)
	// Event: the engine raised an observer event of kind (whether or not
	// Config.Events publishes it): invalid, stalled, failed, lease_lost...
	Event(kind kvstore.EventKind)
	// PublishError: an attempt to publish a claimed fire failed (it is
	// retried until shortly before its claim expires); reason is a
	// natserr.Refusal (stream_full, account_limit, unacknowledged...).
	PublishError(reason string)
	// PublishBlocked: the fire stream stopped taking this instance's
	// publishes for reason (on), or takes them again (see
	// pipeline.Episodes).
	PublishBlocked(reason string, on bool)
}

type nopObserver struct{}

func (nopObserver) Fired(string, time.Duration, string) {}
func (nopObserver) Claimed(bool)                        {}
func (nopObserver) NotFired(string, string, int)        {}
func (nopObserver) Leases(int)                          {}
func (nopObserver) GuardsClosed(int)                    {}
func (nopObserver) Event(kvstore.EventKind)             {}
func (nopObserver) PublishError(string)                 {}
func (nopObserver) PublishBlocked(string, bool)         {}

// Overdue is a schedule whose next slot is late beyond a tolerance: the
// dead-man signal.
type Overdue struct {
	ID       string
	Workflow string
	Late     time.Duration
}
