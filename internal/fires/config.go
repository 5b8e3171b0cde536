package fires

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/jetsched/jetsched/internal/claimttl"
	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/eventfilter"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// DefaultWorkers is how many schedules an engine processes concurrently
// unless Config.Workers says otherwise. A worker waits only for its claim's
// CAS (the publish and the tick are pipelined), so a few dozen keep the
// NATS connection busy; more only lengthen the queue. scheduler bench on 2
// cores, herd of 100,000: 32 workers 34,400 fires/s, 128 and 256 about
// 28,000; a 3-instance fleet at 10,000/s: p99 20 ms with 32, 42 ms with
// 256.
const DefaultWorkers = 32

// DefaultMisfireThreshold is how late a slot may be and still fire when
// neither the spec nor Config.MisfireThreshold says otherwise.
const DefaultMisfireThreshold = time.Minute

// DefaultRecordLag is Config.RecordLag's default: long enough for a herd
// of 100,000 one-shots to be published before its records are written,
// short beside any fire retention.
const DefaultRecordLag = 10 * time.Second

// DefaultLeaseTTL is Config.LeaseTTL's default (and `scheduler run
// --lease-ttl`'s): how long a dead instance's shards wait before another
// takes them.
const DefaultLeaseTTL = 10 * time.Second

// MaxStateInterval bounds Config.StateInterval: a record behind its fires
// costs a lookup to whoever takes its shard, and its counters are that
// much out of date for anyone reading the bucket.
const MaxStateInterval = time.Hour

// Config configures an Engine.
type Config struct {
	// Store is where specs, state and ticks live. Required.
	Store *jsstore.Store
	// Instance names this scheduler in claims and ticks. Default: a random
	// id, new for every process.
	Instance string
	// Clock tells the time. Default: the system clock.
	Clock clock.Clock
	// Logger receives the engine's logs. Default: discard.
	Logger *slog.Logger
	// ClaimTTL is how long a claim is exclusive. Its owner publishes only
	// before it expires; afterwards any instance may take the slot over.
	// Default 30s.
	ClaimTTL time.Duration
	// MisfireThreshold is how late a slot may be and still fire; a later
	// slot is recorded as missed and the schedule skips ahead to its first
	// slot after now. Default 60s; at most fieldcheck.MaxPolicyDuration.
	MisfireThreshold time.Duration
	// LeaseTTL is how long a shard lease lives without renewal; an
	// instance's shards move to the others this long after it dies.
	// Default 10s; at most fieldcheck.MaxPolicyDuration (10 years).
	LeaseTTL time.Duration
	// Workers bounds the schedules processed concurrently. Default
	// DefaultWorkers.
	Workers int
	// WindowSlots is how many due slots of one shard a window claim covers
	// at most: one CAS claims them all (see docs/protocol.md, "Window
	// claims"). 0 means DefaultWindowSlots; a negative value turns window
	// claims off (every slot is claimed on its own record).
	WindowSlots int
	// WindowBusy is how many workers must be busy before due slots go
	// onto window claims: below it every slot takes the per-slot path,
	// whose latency is lower; at it (a herd, a backlog) windows take the
	// plain slots, whose throughput is higher. 0 means Workers/2; a
	// negative value means always.
	WindowBusy int
	// FireQuantum groups due slots in time: a slot is dispatched at the
	// first multiple of it at or after the slot's time (never before), so
	// that the slots due within one quantum are dispatched by one wake-up
	// of the loop, together (docs/performance.md). It adds up to this much
	// lateness to a slot not on a multiple of it. 0 (the default) dispatches
	// each slot at its time; at most MaxFireQuantum. scheduler run's
	// --fire-quantum defaults to DefaultFireQuantum.
	FireQuantum time.Duration
	// RecordLag is how long the state record of a one-shot fired in a
	// window may wait behind due work: a herd of one-shots is published
	// first and recorded when no due slot waits for a worker, or once its
	// oldest record has waited this long (see docs/protocol.md, "Window
	// claims"). Until then the fire stream is what shows it fired. 0 means
	// DefaultRecordLag; a negative value writes each record with its
	// window.
	RecordLag time.Duration
	// StateInterval is how long the state record of a recurring schedule
	// fired in windows may stay behind its fires: its plain fires are
	// kept in memory and recorded within each interval (each shard after
	// a share of it of its own, from half to all of it), at a graceful
	// stop, and as soon as a fleet member does not check records against
	// the fire stream (docs/protocol.md, "Records left behind"). Whoever
	// decides such a record next reads the stream first (lagging.go).
	// 0 (the default) records every fire with its window; at most
	// MaxStateInterval.
	StateInterval time.Duration
	// EndedLists writes the deferred records of a window's one-shots
	// (RecordLag) as one ended list per batch, ended.<shard>.<token> in
	// the leases bucket, instead of a state record each, while every
	// fleet member reads such lists (docs/records.md, "Ended lists"). Off,
	// or while a member does not read them, this instance turns the lists
	// of its shards into state records. Every instance of this version
	// reads lists, whatever the setting.
	EndedLists bool
	// Observer receives measurements. Default: none.
	Observer Observer
	// FireKey, when set, signs every fire (the Sched-Signature header,
	// see audit.SignFire): the audit trail's key, so that its digests
	// can tell the scheduler's fires from injected ones.
	FireKey []byte
	// StepHook, when set, is called at each step of the fire protocol
	// (StepBeforeClaim ... StepAfterLedger) and at the decisions listed
	// with StepRepublish. Fault tests use it to crash a process at a
	// chosen step, other tests to wait for a decision; it must not block.
	StepHook func(step Step)
	// Events chooses the observer events published on
	// sched.event.<kind>.<id>, by kind (shard lease events included).
	// Default (nil): every kind but fired, which the fire stream records
	// already; a fired event is published once the stream has acknowledged
	// the fire, with its sequence.
	Events eventfilter.Set
	// LogFires logs one info line per fire the stream acknowledged:
	// schedule, workflow, slot, lateness and reason (scheduler run
	// --log-fires). Default false: no work on the fire path.
	LogFires bool
	// TracerProvider, when it records (not nil, not otel's noop), gives
	// every dispatched fire a span "dispatch <workflow>" (docs/tracing.md)
	// whose context goes into the fire's traceparent and tracestate
	// headers. Default: none, and no tracing work on the fire path.
	TracerProvider trace.TracerProvider
}

func (c Config) withDefaults() Config {
	c.Instance = cmp.Or(c.Instance, randomID())
	c.Logger = cmp.Or(c.Logger, slog.New(slog.NewTextHandler(io.Discard, nil)))
	c.ClaimTTL = cmp.Or(c.ClaimTTL, 30*time.Second)
	c.MisfireThreshold = cmp.Or(c.MisfireThreshold, DefaultMisfireThreshold)
	c.Workers = cmp.Or(c.Workers, DefaultWorkers)
	c.WindowSlots = cmp.Or(c.WindowSlots, DefaultWindowSlots)
	c.WindowBusy = cmp.Or(c.WindowBusy, c.Workers/2)
	c.RecordLag = cmp.Or(c.RecordLag, DefaultRecordLag)
	c.LeaseTTL = cmp.Or(c.LeaseTTL, DefaultLeaseTTL)
	if c.Observer == nil {
		c.Observer = nopObserver{}
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Store == nil:
		return errors.New("fire: Config.Store is required")
	case c.ClaimTTL < time.Second || c.ClaimTTL > claimttl.Max:
		return fmt.Errorf("fire: Config.ClaimTTL %s: must be 1s to %s", c.ClaimTTL, claimttl.Max)
	case c.MisfireThreshold < 0 || c.MisfireThreshold > fieldcheck.MaxPolicyDuration:
		return fmt.Errorf("fire: Config.MisfireThreshold %s: must be 0 to %s", c.MisfireThreshold, fieldcheck.MaxPolicyDuration)
	case c.LeaseTTL < time.Second || c.LeaseTTL > fieldcheck.MaxPolicyDuration:
		return fmt.Errorf("fire: Config.LeaseTTL %s: must be 1s (per-key TTLs are whole seconds) to %s (9/10 of it must not overflow)", c.LeaseTTL, fieldcheck.MaxPolicyDuration)
	case c.Workers < 1:
		return fmt.Errorf("fire: Config.Workers %d: must be at least 1", c.Workers)
	case c.FireQuantum < 0 || c.FireQuantum > MaxFireQuantum:
		return fmt.Errorf("fire: Config.FireQuantum %s: must be 0 to %s", c.FireQuantum, MaxFireQuantum)
	case c.StateInterval < 0 || c.StateInterval > MaxStateInterval:
		return fmt.Errorf("fire: Config.StateInterval %s: must be 0 to %s", c.StateInterval, MaxStateInterval)
	}
	if err := kvstore.ValidateID(c.Instance); err != nil {
		return fmt.Errorf("fire: Config.Instance: %w", err)
	}
	return nil
}

func randomID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// RecordLagFlag maps the command line's --record-lag, where 0 means each
// record with its window, to Config.RecordLag.
func RecordLagFlag(d time.Duration) time.Duration {
	if d == 0 {
		return -1 // with the window
	}
	return d
}

// WindowFlags maps the command line's --window-slots and --window-busy,
// where 0 means off and always, to Config.WindowSlots and
// Config.WindowBusy.
func WindowFlags(slots, busy int) (windowSlots, windowBusy int) {
	windowSlots, windowBusy = slots, busy
	if slots == 0 {
		windowSlots = -1 // off
	}
	if busy == 0 {
		windowBusy = -1 // always
	}
	return windowSlots, windowBusy
}
