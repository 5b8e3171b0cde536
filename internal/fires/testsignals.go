package fires

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// testSignals are the engine's hooks for tests, as river's testSignals:
// zero in production, where each costs a nil or zero check, and set only
// by tests (export_test.go), before Start. They live on the Engine, not in
// Config, and none is a case of the loop's select: a held watch is held
// between the watch and the loop (holdUpdates).
type testSignals struct {
	// hold holds one watch's initial load back after a number of records
	// (holdUpdates).
	hold *loadHold
	// holdSpecsWatch, when set, holds the specs' watch back from starting
	// until it is closed.
	holdSpecsWatch <-chan struct{}
	// holdLazy, when set, holds the compiles behind the loop (approach.go)
	// back until it is closed: a test can then see a spec compiled on
	// approach, not by that pass.
	holdLazy <-chan struct{}
	// recordsOnLag writes deferred state records only once RecordLag has
	// passed, never because the loop is idle: a test can then see a
	// window's records still unwritten when the next window comes.
	recordsOnLag bool
	// sweepEvery is how often ended lists are swept (zero: endedSweep).
	sweepEvery time.Duration
	// compileLead is how long before its next slot a spec left
	// uncompiled at the initial load is compiled at the latest (zero:
	// DefaultCompileLead; see approach.go).
	compileLead time.Duration
	// holdDispatch, while open, keeps the loop from handing due work to
	// its workers, as a starved process would: due schedules wait in the
	// index (the backlog) until it is closed.
	holdDispatch <-chan struct{}
}

// heldPoll is how often a loop held by holdDispatch looks again.
const heldPoll = 20 * time.Millisecond

// dispatchHeld reports whether a test holds due work back (holdDispatch).
func (t *testSignals) dispatchHeld() bool {
	if t.holdDispatch == nil {
		return false
	}
	select {
	case <-t.holdDispatch:
		return false
	default:
		return true
	}
}

// loadHold makes the loop stop reading one watch after its after-th
// initial record until release is closed: a test can then watch the engine
// work with part of the index loaded, however fast the machine. Records
// for which skip (if set) is true never reach the loop: a watch that is
// late with them, as a slow one can be, however fast the machine.
type loadHold struct {
	watch   holdWatch
	after   int
	release <-chan struct{}
	skip    func(jetstream.KeyValueEntry) bool
}

// holdWatch names the watch a loadHold holds back.
type holdWatch int

const (
	holdSpecs holdWatch = iota + 1
	holdStates
)

// holdUpdates is in, the updates of watch w, as the loop is to read them:
// in itself unless a test holds w's initial load back (testSignals.hold).
// Then a goroutine (on run, until ctx ends) passes the records on and,
// after the after-th initial one, waits for the release before the rest.
func (t *testSignals) holdUpdates(ctx context.Context, w holdWatch, in <-chan jetstream.KeyValueEntry, run func(func())) <-chan jetstream.KeyValueEntry {
	h := t.hold
	if h == nil || h.watch != w {
		return in
	}
	out := make(chan jetstream.KeyValueEntry)
	run(func() {
		defer close(out)
		n, loaded := 0, false
		for kv := range in {
			if kv != nil && h.skip != nil && h.skip(kv) {
				continue
			}
			select {
			case out <- kv:
			case <-ctx.Done():
				return
			}
			if loaded {
				continue
			}
			if kv == nil {
				loaded = true
				continue
			}
			if n++; n == h.after {
				select {
				case <-h.release:
				case <-ctx.Done():
					return
				}
			}
		}
	})
	return out
}
