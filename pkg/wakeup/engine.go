package wakeup

import (
	"context"
	"log/slog"
	"time"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/timers"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// DefaultWorkers is how many timers an Engine fires at once unless
// Config.Workers says otherwise.
const DefaultWorkers = timers.DefaultWorkers

// Owner tells which timers this instance may fire: a fire engine's shard
// leases (*fire.Engine implements it), so that each timer has one owner.
type Owner interface {
	Owns(key string) bool
	LeaseChanges() <-chan struct{}
}

// Config configures an Engine. Each field's zero value is its default.
type Config struct {
	// Store is where the timers live (kvstore.Open). Required.
	Store *jsstore.Store
	// Owner decides which timers this instance fires. Required.
	Owner Owner
	// Instance names this scheduler in claims (the fire engine's
	// Instance). Required.
	Instance string
	// Logger receives the engine's logs. Default: discard.
	Logger *slog.Logger
	// ClaimTTL is how long a claim is exclusive. Default 30s.
	ClaimTTL time.Duration
	// Workers bounds the timers fired at once. Default DefaultWorkers.
	Workers int
	// Events chooses the observer events published (nil: every kind but
	// fired).
	Events kvstore.EventSet
	// ConditionBuckets are the KV buckets a timer's condition key may
	// name; a timer naming another is reported invalid and never fired.
	// Default: none.
	ConditionBuckets []string
}

// Engine fires due timers: it claims each by compare-and-swap, checks its
// condition key if it has one, publishes the wakeup on
// sched.wakeup.<workflow>, records it and removes the timer. Start runs it,
// Stop ends it; a stopped engine may be started again.
type Engine struct{ e *timers.Engine }

// New validates cfg and returns a stopped engine.
func New(cfg Config) (*Engine, error) {
	e, err := timers.New(timers.Config{Store: cfg.Store, Owner: cfg.Owner, Instance: cfg.Instance, Logger: cfg.Logger,
		ClaimTTL: cfg.ClaimTTL, Workers: cfg.Workers, Events: cfg.Events, ConditionBuckets: cfg.ConditionBuckets})
	if err != nil {
		return nil, err
	}
	return &Engine{e: e}, nil
}

// Start opens the watch and starts firing; it returns once the engine
// runs (ctx bounds the start only).
func (e *Engine) Start(ctx context.Context) error { return e.e.Start(ctx) }

// Stop stops claiming, lets the timers being fired finish and waits; it
// returns ctx's error if ctx ends first.
func (e *Engine) Stop(ctx context.Context) error { return e.e.Stop(ctx) }

// Ready is closed once the engine has indexed every timer pending when it
// started.
func (e *Engine) Ready() <-chan struct{} { return e.e.Ready() }

// Pending is the number of timers this instance knows to be pending.
func (e *Engine) Pending() int { return e.e.Pending() }
