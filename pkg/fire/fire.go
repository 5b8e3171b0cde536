// Package fire runs jetsched's fire path inside your own process: an
// Engine watches the specs and state in the buckets of a kvstore.Store,
// keeps the due index, and claims, publishes and records each due slot of
// the schedules of the shards it holds. Any number of engines, in any
// number of processes, may share one set of buckets; the compare-and-swap
// claim on each schedule's state keeps every slot to one fire message.
//
// Most deployments run `scheduler run` instead; embed an Engine when a
// service should carry its own scheduler. How the engine works is in
// docs/protocol.md; its implementation is internal.
package fire

import (
	"context"
	"log/slog"
	"time"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Defaults of Config.
const (
	DefaultWorkers          = fires.DefaultWorkers
	DefaultMisfireThreshold = fires.DefaultMisfireThreshold
)

// Config configures an Engine. Each field's zero value is its default.
type Config struct {
	// Store is where specs, state and ticks live (kvstore.Open). Required.
	Store *jsstore.Store
	// Instance names this scheduler in claims and ticks: letters, digits,
	// '-', '_', '='. Default: a random id, new for every process.
	Instance string
	// Logger receives the engine's logs. Default: discard.
	Logger *slog.Logger
	// ClaimTTL is how long a claim is exclusive (1s to 10m). Default 30s.
	ClaimTTL time.Duration
	// MisfireThreshold is how late a slot may be and still fire, unless
	// its spec says otherwise. Default 1m.
	MisfireThreshold time.Duration
	// LeaseTTL is how long a shard lease lives without renewal: a dead
	// instance's shards move to the others this long after it dies.
	// Default 10s.
	LeaseTTL time.Duration
	// Workers bounds the schedules processed at once. Default
	// DefaultWorkers.
	Workers int
	// Observer receives measurements (nil: none).
	Observer Observer
	// Events chooses the observer events published on
	// sched.event.<kind>.<id> (nil: every kind but fired).
	Events kvstore.EventSet
}

// Observer receives an engine's measurements. Its methods are called from
// the engine's goroutines and must not block.
type Observer interface {
	// Fired: a slot was published, lateness after its scheduled time;
	// reason is its Sched-Reason ("" for a regular slot).
	Fired(workflow string, lateness time.Duration, reason string)
	// Claimed: a claim's compare-and-swap won, or lost (conflict).
	Claimed(conflict bool)
	// NotFired: n slots were recorded without a fire; kind is "missed",
	// "skipped" or "failed", reason its category.
	NotFired(kind, reason string, n int)
	// Leases: the number of shard leases this engine holds now.
	Leases(n int)
}

// EventObserver is what an Observer may implement as well: Event for
// every observer event the engine raises (invalid, stalled, failed,
// lease_lost...), whether or not Config.Events publishes it, and
// PublishError for every failed attempt to publish a claimed fire.
type EventObserver interface {
	Event(kind kvstore.EventKind)
	PublishError()
}

// observer gives an Observer the engine's whole interface: the
// EventObserver methods are passed on when it has them.
type observer struct{ Observer }

func (o observer) Event(kind kvstore.EventKind) {
	if e, ok := o.Observer.(EventObserver); ok {
		e.Event(kind)
	}
}

func (o observer) PublishError(string) {
	if e, ok := o.Observer.(EventObserver); ok {
		e.PublishError()
	}
}

// PublishBlocked is the full-stream gauge of the daemon's metrics; an
// embedding service sees the episodes as events (stream_full...).
func (observer) PublishBlocked(string, bool) {}

// GuardsClosed is the lease-guard gauge of the daemon's metrics; an
// embedding service sees the guard close and open as events
// (guard_closed, guard_opened).
func (observer) GuardsClosed(int) {}

// Engine is one scheduler instance's fire path. Start runs it, Stop ends
// it; a stopped engine may be started again.
type Engine struct{ e *fires.Engine }

// New validates cfg and returns a stopped engine. An invalid field is an
// error naming it.
func New(cfg Config) (*Engine, error) {
	fc := fires.Config{
		Store: cfg.Store, Instance: cfg.Instance, Logger: cfg.Logger, ClaimTTL: cfg.ClaimTTL,
		MisfireThreshold: cfg.MisfireThreshold, LeaseTTL: cfg.LeaseTTL, Workers: cfg.Workers,
		Events: cfg.Events,
	}
	if cfg.Observer != nil {
		fc.Observer = observer{cfg.Observer}
	}
	e, err := fires.New(fc)
	if err != nil {
		return nil, err
	}
	return &Engine{e: e}, nil
}

// Start takes this instance's share of the shard leases and starts firing;
// it returns once the engine runs (ctx bounds the start only).
func (e *Engine) Start(ctx context.Context) error { return e.e.Start(ctx) }

// Stop stops claiming, lets the slots being published finish, hands the
// shard leases back and waits; it returns ctx's error if ctx ends first.
func (e *Engine) Stop(ctx context.Context) error { return e.e.Stop(ctx) }

// Ready is closed once the engine has indexed every spec and state record
// that existed when it started.
func (e *Engine) Ready() <-chan struct{} { return e.e.Ready() }

// Instance is the engine's instance id.
func (e *Engine) Instance() string { return e.e.Instance() }

// Owns reports whether this instance holds the shard lease of key (a
// schedule id or a timer key): the wakeup engine fires only such timers.
func (e *Engine) Owns(key string) bool { return e.e.Owns(key) }

// LeaseChanges receives a value whenever this instance's leases change.
func (e *Engine) LeaseChanges() <-chan struct{} { return e.e.LeaseChanges() }
