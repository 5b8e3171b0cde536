package fires

import (
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Hook sets one of an engine's test signals (testSignals) before it
// starts.
type Hook func(*Engine)

// NewWith is New with hooks set on the engine.
func NewWith(cfg Config, hooks ...Hook) (*Engine, error) {
	e, err := New(cfg)
	if err != nil {
		return nil, err
	}
	for _, h := range hooks {
		h(e)
	}
	return e, nil
}

// HoldSpecs holds the initial load of specs back after n of them until
// release is closed (see loadHold).
func HoldSpecs(n int, release <-chan struct{}) Hook {
	return func(e *Engine) { e.test.hold = &loadHold{watch: holdSpecs, after: n, release: release} }
}

// HoldSpecsWatch holds the specs' watch back from starting until release
// is closed.
func HoldSpecsWatch(release <-chan struct{}) Hook {
	return func(e *Engine) { e.test.holdSpecsWatch = release }
}

// HoldDispatch keeps due work from the workers until release is closed,
// as a starved process would.
func HoldDispatch(release <-chan struct{}) Hook {
	return func(e *Engine) { e.test.holdDispatch = release }
}

// HoldStates is HoldSpecs for the state records.
func HoldStates(n int, release <-chan struct{}) Hook {
	return func(e *Engine) { e.test.hold = &loadHold{watch: holdStates, after: n, release: release} }
}

// LateStates keeps the state records for which late is true from the
// loop's watch, as a watch late with them would (see loadHold).
func LateStates(late func(key string, value []byte) bool) Hook {
	return func(e *Engine) {
		e.test.hold = &loadHold{watch: holdStates, after: -1,
			skip: func(kv jetstream.KeyValueEntry) bool { return late(kv.Key(), kv.Value()) }}
	}
}

// RecordsOnLag makes the engine write the deferred state records of
// one-shots only once its Config.RecordLag has passed, not when it is
// idle.
func RecordsOnLag() Hook {
	return func(e *Engine) { e.test.recordsOnLag = true }
}

// SweepEvery makes the engine sweep its shards' ended lists every d.
func SweepEvery(d time.Duration) Hook {
	return func(e *Engine) { e.test.sweepEvery = d }
}

// CompileOnApproach compiles the specs left uncompiled at the initial
// load lead before their next slot, and holds the compiles of those left
// after it back until release is closed (approach.go).
func CompileOnApproach(lead time.Duration, release <-chan struct{}) Hook {
	return func(e *Engine) { e.test.compileLead, e.test.holdLazy = lead, release }
}
