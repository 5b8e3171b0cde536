package timers

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/claimttl"
	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/dueindex"
	"github.com/jetsched/jetsched/internal/eventfilter"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/lifecycle"
	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/internal/pipeline"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// DefaultWorkers is how many timers an engine fires concurrently unless
// Config.Workers says otherwise. A timer's worker reads it and claims it
// (two round trips; the publish, the tick and the delete are pipelined).
// scheduler bench, 200,000 timers due over 10 s on 2 cores: with the
// publish still synchronous, 32 workers 9,800/s and 256 workers
// 16,500-19,000/s; pipelined, 32 to 256 within noise at ~18,000-19,900/s.
const DefaultWorkers = 256

// Owner tells which timers this instance may fire: the shard leases of the
// fire engine (*fires.Engine implements it).
type Owner interface {
	Owns(key string) bool
	LeaseChanges() <-chan struct{}
}

// Config configures an Engine.
type Config struct {
	// Store is required.
	Store *jsstore.Store
	// Owner decides which timers this instance fires. Required.
	Owner Owner
	// Instance names this scheduler in claims. Required.
	Instance string
	// Clock tells the time. Default: the system clock.
	Clock clock.Clock
	// Logger. Default: discard.
	Logger *slog.Logger
	// ClaimTTL is how long a claim is exclusive. Default 30s.
	ClaimTTL time.Duration
	// Workers bounds the timers fired concurrently. Default DefaultWorkers.
	Workers int
	// Events chooses the observer events published, by kind, as
	// fires.Config.Events does. Default (nil): every kind but fired.
	Events eventfilter.Set
	// StepHook, when set, is called at the engine's decisions
	// (StepRepublish); tests wait for them. It must not block.
	StepHook func(Step)
	// Observer, when set, counts the engine's events and failed publish
	// attempts (the metrics). Its methods must not block.
	Observer Observer
	// ConditionBuckets are the KV buckets a timer's condition key may
	// name (scheduler run --condition-buckets): a timer whose key names
	// another bucket is an invalid record, never read, never fired. None
	// of the scheduler's own buckets may be one (see
	// fieldcheck.ConditionBuckets). Default: none.
	ConditionBuckets []string
}

// Observer receives the wakeup engine's measurements.
type Observer interface {
	// Event: the engine raised an observer event of kind (whether or not
	// Config.Events publishes it).
	Event(kind kvstore.EventKind)
	// PublishError: an attempt to publish a claimed wakeup failed, for
	// reason (a natserr.Refusal).
	PublishError(reason string)
	// PublishBlocked: the wakeup stream stopped taking this instance's
	// publishes for reason (on), or takes them again.
	PublishBlocked(reason string, on bool)
}

type nopObserver struct{}

func (nopObserver) Event(kvstore.EventKind)     {}
func (nopObserver) PublishError(string)         {}
func (nopObserver) PublishBlocked(string, bool) {}

// Step is a decision of the wakeup engine, reported to Config.StepHook.
type Step string

// StepRepublish: a wakeup's publish was not acknowledged and is sent again.
const StepRepublish Step = "republish"

// Engine fires due timers: it watches sched_wakeups, keeps a due index
// with one timer for the earliest deadline, and claims, publishes, records
// and removes each due timer.
type Engine struct {
	cfg Config
	log *slog.Logger

	pending atomic.Int64 // timers in the index, for metrics
	// zones shares the Location of every zone a wakeup's due time is
	// written in (loading one per fire read the zone database each time).
	zones cronx.Zones
	// maxClaim bounds other instances' claims (set at Start).
	maxClaim time.Duration
	// conds reads the condition keys of timers that have one.
	conds conditions
	// inflight waits for the publishes of fired timers, followups sends
	// their ticks and deletes.
	inflight  *pipeline.Inflight
	followups *pipeline.Followups
	pub       pipeline.Publisher

	svc lifecycle.Service
	// ready is closed by each run once its index is complete.
	ready lifecycle.Ready
}

// New validates cfg.
func New(cfg Config) (*Engine, error) {
	switch {
	case cfg.Store == nil:
		return nil, errors.New("wakeup: Config.Store is required")
	case cfg.Owner == nil:
		return nil, errors.New("wakeup: Config.Owner is required")
	case cfg.Instance == "":
		return nil, errors.New("wakeup: Config.Instance is required")
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.NewTextHandler(io.Discard, nil)))
	cfg.ClaimTTL = cmp.Or(cfg.ClaimTTL, 30*time.Second)
	cfg.Workers = cmp.Or(cfg.Workers, DefaultWorkers)
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
	}
	switch {
	case cfg.ClaimTTL < time.Second || cfg.ClaimTTL > claimttl.Max:
		return nil, fmt.Errorf("wakeup: Config.ClaimTTL %s: must be 1s to %s", cfg.ClaimTTL, claimttl.Max)
	case cfg.Workers < 1:
		return nil, fmt.Errorf("wakeup: Config.Workers %d: must be at least 1", cfg.Workers)
	}
	if err := fieldcheck.ConditionBuckets(cfg.ConditionBuckets, cfg.Store.Layout().WithDefaults().Prefix); err != nil {
		return nil, fmt.Errorf("wakeup: Config.ConditionBuckets: %w", err)
	}
	return &Engine{cfg: cfg, log: cfg.Logger.With("component", "wakeup", "instance", cfg.Instance),
		conds: conditions{js: cfg.Store.JetStream()}}, nil
}

func (e *Engine) step(s Step) {
	if e.cfg.StepHook != nil {
		e.cfg.StepHook(s)
	}
}

// Pending is the number of timers this instance knows to be pending.
func (e *Engine) Pending() int { return int(e.pending.Load()) }

// Ready is closed once the due index holds every timer pending when the
// current run started (a restart makes a new one).
func (e *Engine) Ready() <-chan struct{} {
	return e.ready.C()
}

// Start opens the watch and starts the loop; it returns once the loop
// runs (ctx bounds the setup only), and does nothing on a running engine.
// A stopped engine starts again.
func (e *Engine) Start(ctx context.Context) error { return e.svc.Start(ctx, e.setup) }

// setup prepares a run (see lifecycle.Setup).
func (e *Engine) setup(ctx, life context.Context) (func(), error) {
	stream, err := e.cfg.Store.JetStream().Stream(ctx, e.cfg.Store.Layout().WakeupsStream)
	if err != nil {
		return nil, fmt.Errorf("wakeup: stream %s: %w", e.cfg.Store.Layout().WakeupsStream, err)
	}
	// The longest claim its duplicate window can absorb (see
	// claimttl.Expiry): a forged claim holds a timer no longer.
	e.maxClaim = stream.CachedInfo().Config.Duplicates / 2
	w, err := e.cfg.Store.WatchTimers(life)
	if err != nil {
		return nil, err
	}
	ready := e.ready.Next() // a restart makes a new index
	l := &tloop{e: e, watch: w, leases: e.cfg.Owner.LeaseChanges(), entries: map[string]*tentry{}, ready: ready,
		parked: map[string]bool{}, jobs: make(chan tjob, e.cfg.Workers), results: make(chan tresult, e.cfg.Workers)}
	e.followups = pipeline.StartFollowups(e.cfg.Store, e.cfg.ClaimTTL, e.log)
	e.inflight = pipeline.StartInflight(4 * e.cfg.Workers)
	e.pub = pipeline.Publisher{JS: e.cfg.Store.JetStream(), Async: e.cfg.Store, Stream: e.cfg.Store.Layout().WakeupsStream, Clock: e.cfg.Clock,
		ClaimTTL: e.cfg.ClaimTTL, Inflight: e.inflight, Log: e.log, Republished: func() { e.step(StepRepublish) },
		AttemptFailed: func(r natserr.Refusal) { e.cfg.Observer.PublishError(string(r)) }, Episodes: e.episodes()}
	return func() {
		l.run(life)
		e.inflight.Close()  // after the workers have stopped
		e.followups.Close() // after the last follow-up is sent
	}, nil
}

// Stop stops claiming, lets in-flight firings finish, and waits, or
// returns ctx's error when ctx ends first. Safe to call more than once,
// and before Start.
func (e *Engine) Stop(ctx context.Context) error { return e.svc.Stop(ctx) }

// tentry is the loop's view of one timer: small, since a million may be
// pending (the payload is read when it fires).
type tentry struct {
	rev     uint64
	due     time.Time
	expires time.Time
	claim   *kvstore.Claim
	settled string
	busy    bool
	gone    bool // deleted while a worker held it
	// invalid: the record at rev fails validation; reported once a
	// worker has recorded it (reported), it waits for a new revision.
	invalid  bool
	reported bool
	fails    int
}

type tjob struct {
	key     string
	rev     uint64
	settled string
}

type tresult struct {
	key     string
	settled string
	retry   time.Time // zero: look again from the watch
	// fired: the worker fired the timer claimed at claimRev, and its
	// delete is on the way (see pipeline.Followups).
	fired    bool
	claimRev uint64
	// invalid: the worker found the record at invalidRev invalid and
	// recorded it; it is not looked at again until it changes.
	invalid    bool
	invalidRev uint64
	err        error
}

type tloop struct {
	e       *Engine
	ready   chan struct{}
	watch   jetstream.KeyWatcher
	leases  <-chan struct{}
	entries map[string]*tentry
	parked  map[string]bool
	index   dueindex.Index
	jobs    chan tjob
	results chan tresult
	busy    int
	loaded  bool
}

func (l *tloop) run(ctx context.Context) {
	var wg sync.WaitGroup
	workCtx, cancelWork := context.WithCancel(context.Background())
	defer cancelWork()
	for range l.e.cfg.Workers {
		wg.Go(func() {
			for j := range l.jobs {
				l.results <- l.e.process(workCtx, j)
			}
		})
	}
	timer := l.e.cfg.Clock.NewTimer(time.Hour)
	defer timer.Stop()
	updates := l.watch.Updates()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case kv, ok := <-updates:
			if !ok {
				updates = nil
				continue
			}
			l.onTimer(kv)
		case r := <-l.results:
			l.onResult(r)
		case <-l.leases:
			l.unpark()
		case <-timer.C:
		}
		l.dispatch()
		l.e.pending.Store(int64(len(l.entries)))
		timer.Stop()
		if _, due, ok := l.index.Peek(); ok && l.loaded && l.busy < l.e.cfg.Workers {
			timer.Reset(max(l.e.cfg.Clock.Until(due), 0))
		}
	}
	_ = l.watch.Stop()
	for l.busy > 0 {
		l.onResult(<-l.results)
	}
	close(l.jobs)
	wg.Wait()
}

func (l *tloop) onTimer(kv jetstream.KeyValueEntry) {
	if kv == nil {
		l.loaded = true
		close(l.ready)
		l.e.log.Info("wakeup index ready", "pending", len(l.entries))
		return
	}
	key := kv.Key()
	if op := kv.Operation(); op == jetstream.KeyValueDelete || op == jetstream.KeyValuePurge {
		if en := l.entries[key]; en != nil && !en.busy {
			delete(l.entries, key)
			l.index.Remove(key)
		} else if en != nil {
			en.rev, en.gone = kv.Revision(), true // dropped when its worker reports
		}
		delete(l.parked, key)
		return
	}
	t, err := l.e.read(key, kv.Value())
	en := l.entries[key]
	if en == nil {
		en = &tentry{}
		l.entries[key] = en
	}
	if kv.Revision() < en.rev {
		return
	}
	en.rev, en.gone, en.invalid, en.reported = kv.Revision(), false, err != nil, false
	if err != nil {
		// Nothing in it can be trusted: a worker reports it at once
		// (ledger and event), and it never fires. A valid record under
		// the key replaces it.
		en.due, en.expires, en.claim = l.e.cfg.Clock.Now(), time.Time{}, nil
	} else {
		en.due, en.expires, en.claim = t.Due, t.ExpiresAt, t.Claim
	}
	if !en.busy {
		l.schedule(key, en)
	}
}

// schedule puts a timer in the index at the time it needs a look (an
// invalid record already reported needs none).
func (l *tloop) schedule(key string, en *tentry) {
	if en.invalid && en.reported {
		l.index.Remove(key)
		return
	}
	due := en.due
	if c := en.claim; c != nil && c.Token != en.settled {
		due = claimttl.Expiry(*c, l.e.cfg.Clock.Now(), l.e.maxClaim) // someone is firing it: look again when its claim expires
	}
	l.index.Set(key, due)
}

func (l *tloop) onResult(r tresult) {
	l.busy--
	en := l.entries[r.key]
	if en == nil {
		return
	}
	en.busy = false
	if en.gone {
		delete(l.entries, r.key)
		l.index.Remove(r.key)
		return
	}
	if r.settled != "" {
		en.settled = r.settled
	}
	if r.err != nil {
		en.fails++
		if l.e.pub.Episodes.StepFailed(r.key, r.err) {
			l.e.log.Debug("wakeup step failed; retrying", "key", r.key, "attempt", en.fails, "err", r.err)
		} else {
			l.e.log.Warn("wakeup step failed; retrying", "key", r.key, "attempt", en.fails, "err", r.err)
		}
		if en.fails == stallAfter && !natserr.Exhausted(r.err) {
			l.e.event(kvstore.EventStalled, r.key, r.err.Error())
		}
		l.index.Set(r.key, l.e.cfg.Clock.Now().Add(min(time.Duration(en.fails)*100*time.Millisecond, 5*time.Second)))
		return
	}
	if r.fired || r.settled != "" || r.invalid {
		en.fails = 0 // progress; a look that found a live claim is none
	}
	if r.invalid && r.invalidRev >= en.rev {
		en.invalid, en.reported = true, true
	}
	if !r.retry.IsZero() {
		l.index.Set(r.key, r.retry)
		return
	}
	if r.fired && en.rev <= r.claimRev {
		// The watch's delete removes it. Should the delete never land,
		// look again when the claim would have expired (and delete it then).
		l.index.Set(r.key, l.e.cfg.Clock.Now().Add(l.e.cfg.ClaimTTL))
		return
	}
	// Fired or dropped: the watch's delete removes the entry. If the watch
	// brought a newer record meanwhile (re-armed, re-registered), it is
	// scheduled like any other.
	l.schedule(r.key, en)
}

func (l *tloop) dispatch() {
	if !l.loaded {
		return
	}
	now := l.e.cfg.Clock.Now()
	for l.busy < l.e.cfg.Workers {
		key, ok := l.index.PopDue(now)
		if !ok {
			return
		}
		en := l.entries[key]
		if en == nil {
			continue
		}
		if !l.e.cfg.Owner.Owns(key) {
			l.parked[key] = true
			continue
		}
		en.busy = true
		l.busy++
		l.jobs <- tjob{key: key, rev: en.rev, settled: en.settled}
	}
}

func (l *tloop) unpark() {
	for key := range l.parked {
		if !l.e.cfg.Owner.Owns(key) {
			continue
		}
		delete(l.parked, key)
		if en := l.entries[key]; en != nil && !en.busy {
			l.schedule(key, en)
		}
	}
}

// stallAfter is how many failed attempts in a row flag a timer as stalled
// (an event; it keeps being retried).
const stallAfter = 5

func randomToken() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
