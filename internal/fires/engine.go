package fires

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/lifecycle"
	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/internal/pipeline"
	"github.com/jetsched/jetsched/internal/startwait"
	"github.com/jetsched/jetsched/internal/tracing"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Engine is one scheduler instance's fire path: it watches specs and state,
// keeps the due index, and claims, publishes and records each due slot.
// Any number of engines may share one set of buckets; the CAS on the state
// revision decides who fires each slot.
//
// Ownership: cfg, log, store, tracer and traced are fixed at New; the
// fields a run's setup writes (dupWindow, fireRetention, shards,
// followups, inflight, pub, settles) are written before the run's
// goroutines start and only read while it runs. leases, eps, interner,
// svc and ready guard themselves; queries and flushes are channels into
// the loop goroutine.
type Engine struct {
	cfg   Config
	log   *slog.Logger
	store *jsstore.Store

	// dupWindow is the fire stream's duplicate window, read at Start.
	dupWindow time.Duration
	// fireRetention is the fire stream's MaxAge (0: unlimited), read at
	// Start: how long the stream can say whether a slot was published.
	fireRetention time.Duration

	leases *leases
	// followups sends the ledger ticks of fresh fires, inflight waits for
	// their publishes (see docs/protocol.md).
	followups *pipeline.Followups
	inflight  *pipeline.Inflight
	pub       pipeline.Publisher
	eps       *pipeline.Episodes
	// settles tells the loop which claims are settled. A full channel
	// drops the news: the loop then reads the tick when the claim matters.
	settles chan settle
	shards  int

	queries chan healthQuery
	// flushes asks the loop for a shard's records left behind before its
	// lease is handed back (handback.go).
	flushes chan flushReq
	// interner shares zones and default calendars between the compiled
	// schedules (see compile.Interner).
	interner compile.Interner

	// tracer makes the dispatch spans when traced (Config.TracerProvider
	// records); both are fixed at New.
	tracer trace.Tracer
	traced bool

	// test are the hooks of tests (zero in production).
	test testSignals

	svc lifecycle.Service
	// ready is closed by each run once its index is complete.
	ready lifecycle.Ready
	// loading is how far the run's index load has come (watchLoad).
	loading loadProgress
	// shed counts the slots recorded missed (shedCounter, the engine's
	// Observer), backlogObs takes the due backlog (backlog.go).
	shed       atomic.Int64
	backlogObs BacklogObserver
}

// New validates cfg and returns a stopped engine.
func New(cfg Config) (*Engine, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	e := &Engine{
		cfg:     cfg,
		log:     cfg.Logger.With("component", "fire", "instance", cfg.Instance),
		store:   cfg.Store,
		queries: make(chan healthQuery),
		flushes: make(chan flushReq),
		tracer:  tracing.Tracer(cfg.TracerProvider),
		traced:  tracing.Enabled(cfg.TracerProvider),
	}
	e.backlogObs = backlogObserver(cfg.Observer)
	e.cfg.Observer = shedCounter{Observer: cfg.Observer, shed: &e.shed}
	e.leases = newLeases(e.store.Leases(), e.store.JetStream(), cfg.Instance, 0, cfg.LeaseTTL, cfg.Clock, e.log, e.event)
	e.leases.readCaps = cfg.StateInterval > 0 || cfg.EndedLists
	// (Ended lists are turned into records before a hand-back whatever
	// the settings: an instance that does not read them may be why.)
	e.leases.beforeDrop = e.flushBehind
	e.leases.observe, e.leases.guards = cfg.Observer.Leases, cfg.Observer.GuardsClosed
	// One tracker for the engine's life: the publishes and the lease
	// renewals (the first writes a full store refuses) both tell it.
	e.eps = e.episodes()
	e.leases.failed = func(shard int, err error) { e.eps.StepFailed(fmt.Sprintf("shard-%d", shard), err) }
	return e, nil
}

// Instance is the engine's instance id.
func (e *Engine) Instance() string { return e.cfg.Instance }

// Owns reports whether this instance holds (and keeps renewing) the shard
// lease of key: the wakeup engine dispatches only such timers.
func (e *Engine) Owns(key string) bool {
	n := e.leases.shardCount()
	return n > 0 && e.leases.owns(kvstore.ShardOf(key, n))
}

// LeaseChanges returns a channel that receives a value whenever this
// instance's leases change (before Start too).
func (e *Engine) LeaseChanges() <-chan struct{} { return e.leases.subscribe() }

type healthQuery struct {
	tolerance time.Duration
	reply     chan Health
}

// Health is what the loop says of the schedules of this instance's shards
// (the metrics' scrape-time gauges).
type Health struct {
	// Overdue lists the schedules whose next slot is later than the
	// tolerance asked: the dead-man signal.
	Overdue []Overdue
	// Invalid counts the schedules whose spec does not compile (they do
	// not fire until fixed).
	Invalid int
	// Stalled counts the schedules whose steps failed at least
	// stallAfter times in a row (still retried).
	Stalled int
	// Shards is the fleet's shard count (the leases bucket's).
	Shards int
	// Uncompiled counts the schedules whose spec is not compiled yet:
	// left at the initial load to be compiled as their next slot
	// approaches, or by the pass that compiles the rest after Ready
	// (docs/protocol.md, "Cold start: due work first"). Zero soon
	// after Ready.
	Uncompiled int
}

// Overdue lists the schedules of this instance's shards whose next slot is
// later than tolerance: the dead-man signal (a fire that should have
// happened and did not). It asks the engine's loop; ctx bounds the wait.
func (e *Engine) Overdue(ctx context.Context, tolerance time.Duration) ([]Overdue, error) {
	h, err := e.Health(ctx, tolerance)
	return h.Overdue, err
}

// Health asks the engine's loop about the schedules of this instance's
// shards: overdue beyond tolerance, invalid, stalled. The loop walks its
// entries a slice per turn, between its due work (health.go). ctx bounds
// the wait; an engine not running owns nothing (zero Health).
func (e *Engine) Health(ctx context.Context, tolerance time.Duration) (Health, error) {
	q := healthQuery{tolerance: tolerance, reply: make(chan Health, 1)}
	done := e.svc.Done()
	if done == nil {
		return Health{}, nil // never started: nothing is owned
	}
	select {
	case e.queries <- q:
	case <-done:
		return Health{}, nil // stopped
	case <-ctx.Done():
		return Health{}, ctx.Err()
	}
	select {
	case out := <-q.reply:
		return out, nil
	case <-done:
		return Health{}, nil // stopped before the walk was done
	case <-ctx.Done():
		return Health{}, ctx.Err()
	}
}

// LeaseRun identifies the lease and member records this process writes
// (their "run"), apart from a previous process's under the same instance
// name.
func (e *Engine) LeaseRun() string { return e.leases.runID }

// LeasesHeld is the number of shard leases this instance holds.
func (e *Engine) LeasesHeld() int { return e.leases.count() }

// Interner is what the engine shares its zones and parsed crons through,
// for other parts of the process that compile the same specs (the admin
// API's listing catalogue) to share too.
func (e *Engine) Interner() *compile.Interner { return &e.interner }

// Ready is closed once the due index holds every spec and state that
// existed when the current run started (a restart makes a new one).
func (e *Engine) Ready() <-chan struct{} {
	return e.ready.C()
}

// Start checks the fire stream's duplicate window, takes this instance's
// share of the shard leases, opens the watches and starts the loop. It
// returns once the loop runs (ctx bounds the setup only); on a running
// engine it does nothing. A stopped engine starts again.
func (e *Engine) Start(ctx context.Context) error {
	return e.svc.Start(ctx, e.setup)
}

// setup prepares a run (see lifecycle.Setup).
func (e *Engine) setup(ctx, life context.Context) (func(), error) {
	// Each wait of the start is bounded (startWait) and logged when slow,
	// naming what it waits for.
	if err := startwait.Step(ctx, e.log, "the fire stream's settings", startWait, e.checkDuplicateWindow); err != nil {
		return nil, err
	}
	var shards int
	if err := startwait.Step(ctx, e.log, "the shard count (leases bucket)", startWait, func(ctx context.Context) (err error) {
		shards, err = e.store.Shards(ctx)
		return err
	}); err != nil {
		return nil, err
	}
	e.shards = shards
	e.leases.setShards(shards)
	var stops []func() error
	undo := func() {
		for _, stop := range stops {
			_ = stop()
		}
	}
	// The store's watches take ctx for their start only (they run until
	// stopped).
	var states, cals jetstream.KeyWatcher
	if err := startwait.Step(ctx, e.log, "the state records' watch", startWait, func(ctx context.Context) (err error) {
		states, err = e.store.WatchState(ctx)
		return err
	}); err != nil {
		return nil, fmt.Errorf("fire: watch state: %w", err)
	}
	stops = append(stops, states.Stop)
	if err := startwait.Step(ctx, e.log, "the calendars' watch", startWait, func(ctx context.Context) (err error) {
		cals, err = e.store.WatchCalendars(ctx)
		return err
	}); err != nil {
		undo()
		return nil, fmt.Errorf("fire: watch calendars: %w", err)
	}
	stops = append(stops, cals.Stop)
	// The specs' watch starts beside the run (laterWatch): due work comes
	// from the state records, and fetches its specs ahead of the watch.
	// Made after the others: a server answers JetStream API requests on
	// one worker per core (two on a 2-core box), and this one holds its
	// worker the longest.
	specs := watchLater(life, "specs", e.startSpecsWatch, e.log)
	stops = append(stops, specs.Stop)
	dones := make(chan doneReport, 1024)
	sub, err := e.subscribeDones(life, dones)
	if err != nil {
		undo()
		return nil, err
	}
	ready := e.ready.Next() // a restart makes a new index
	// The watch of lease moves first, so that no hand-back between this
	// round and the keeper's start goes unseen. Alone (a fleet's first
	// start), take this instance's share before the loop runs, so that it
	// fires while it indexes; joining a running fleet, take it once the
	// index is complete (the others fire meanwhile).
	var moves jetstream.KeyWatcher
	_ = startwait.Step(ctx, e.log, "the lease moves' watch", 0, func(context.Context) error {
		moves = e.leases.watchMoves(life) // a watch for the run: its request is bounded by the API timeout
		return nil
	})
	e.leases.joinAt = nil
	// Bounded as a lease round is: a survey that cannot be read in time
	// counts as no fleet (the leases themselves are taken by CAS).
	var others bool
	_ = startwait.Step(ctx, e.log, "the fleet's member records (leases bucket)", e.leases.ttl/2, func(ctx context.Context) error {
		others = e.leases.othersAlive(ctx)
		return nil
	})
	if others {
		e.leases.joinAt = ready
	}
	_ = startwait.Step(ctx, e.log, "the first lease round", 0, func(ctx context.Context) error {
		e.leases.round(ctx) // bounded by the lease TTL's half
		return nil
	})
	e.loading.reset()
	e.watchLoad(life, ready, specs)
	// The keeper hands the leases back when the loop has stopped and its
	// last publishes are settled, not before: a shard handed back while a
	// claim is still being published would wait for that claim's expiry
	// at its next owner.
	keep, stopKeeper := context.WithCancel(context.WithoutCancel(life))
	var keeper sync.WaitGroup
	keeper.Go(func() { e.leases.run(keep, moves) })
	l := newLoop(e, specs, states, cals, dones)
	l.ready = ready
	e.followups = pipeline.StartFollowups(e.store, e.cfg.ClaimTTL, e.log)
	e.inflight = pipeline.StartInflight(4 * e.cfg.Workers)
	e.pub = pipeline.Publisher{JS: e.store.JetStream(), Async: e.store, Stream: e.store.Layout().FiresStream, Clock: e.cfg.Clock,
		ClaimTTL: e.cfg.ClaimTTL, Inflight: e.inflight, Log: e.log, Republished: func() { e.step(StepRepublish) },
		AttemptFailed: func(r natserr.Refusal) { e.cfg.Observer.PublishError(string(r)) }, Episodes: e.eps}
	e.settles = make(chan settle, settleQueue)
	l.in.settles = e.settles
	return func() {
		l.run(life)
		e.inflight.Close()  // after the workers have stopped
		e.followups.Close() // after the last tick is sent
		_ = sub.Unsubscribe()
		stopKeeper()
		keeper.Wait() // the lease keeper has handed the shards back
	}, nil
}

// startSpecsWatch starts the specs' watch (once a test lets it:
// testSignals.holdSpecsWatch).
func (e *Engine) startSpecsWatch(ctx context.Context) (jetstream.KeyWatcher, error) {
	if h := e.test.holdSpecsWatch; h != nil {
		select {
		case <-h:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return e.store.WatchSpecs(ctx)
}

// Stop stops claiming, lets in-flight slots finish publishing (each is
// bounded by its claim's expiry), hands the shard leases back and returns
// when every goroutine of the run has exited, or ctx's error when ctx ends
// first (the run then goes on stopping; Stop may be called again). Stop
// before Start, and a second Stop, are no-ops.
func (e *Engine) Stop(ctx context.Context) error { return e.svc.Stop(ctx) }

// entry is the loop's view of one schedule. A scheduler holds one per
// schedule, so it keeps only what deciding and firing need, in as few
// bytes as it can (TestEntryIsSmall): each one more is a megabyte at a
// million schedules.
type entry struct {
	id      string
	target  // what a fire needs from the spec
	specRev uint64
	// written is when the spec's latest revision was written (Unix ns):
	// its put, or, once removed, its delete (for the remove job).
	written int64
	// spec is the decoded spec until its first compile; record is the
	// spec record's JSON, kept when the spec names a calendar (a calendar
	// change re-compiles it) or is to be compiled on approach (lazy), a
	// quarter of the decoded spec's size.
	spec     *kvstore.Spec
	record   string
	compiled sched // Schedule nil while invalid, removed or not compiled yet
	// packed and full hold the entry's state as form says (see
	// entrystate.go): none, a plan, or a state record, packed or whole. A
	// plan is this instance's plan for a schedule without a state record;
	// the first write (a claim or a misfire) creates the record. Kept
	// small: at first a million schedules have only a plan.
	packed   packedState
	full     *kvstore.State
	stateRev uint64
	// pending is a state update watched while a worker held the entry: it is
	// decoded when the worker reports back, and only if newer than what the
	// worker wrote (usually it is the echo of that write).
	pending jetstream.KeyValueEntry
	settled string // token of a claim known settled by this instance
	checked string // token of a live claim whose tick was missing
	// due and pos are the entry's due time (Unix ns) and place (1-based;
	// 0: not in it) in the loop's due queue.
	due      int64
	pos      int32
	failures uint16 // consecutive failed attempts, for backoff (stops counting at 65,535: 90 hours of retries)
	form     stateForm
	invalid  bool // the spec does not compile (reported when it was seen)
	busy     bool // a worker holds it
	removed  bool // spec deleted while busy
	stale    bool // its calendar changed while busy
	fetching bool // its spec was asked for ahead of the watch (fetchSpec)
	queued   bool // waiting for its shard's next window claim (windows.pend)
	noWindow bool // a window declined its slot: the next one goes per slot
	lazy     bool // its spec is the record, compiled on approach (approach.go)
	calendar bool // its spec names a calendar
}

// heldSpec is the spec en may be compiled from again: the decoded one,
// or its record decoded now, or nil.
func (en *entry) heldSpec() *kvstore.Spec {
	if en.spec != nil || en.record == "" {
		return en.spec
	}
	spec, err := kvstore.DecodeSpec([]byte(en.record))
	if err != nil {
		return nil // not kept unless it decoded (onSpec)
	}
	return &spec
}

// sched is what deciding and firing need of a compiled spec
// (compile.Compiled): 48 bytes instead of 128, the policy shared between
// the schedules that have the same one (loop.sched).
type sched struct {
	Schedule cronx.Schedule
	Location *time.Location
	Plan     string
	pol      *compile.Policy
}

// policy is the schedule's misfire and overlap handling (the zero Policy
// before it is compiled).
func (s sched) policy() compile.Policy {
	if s.pol == nil {
		return compile.Policy{}
	}
	return *s.pol
}

// schedOf is c as a sched, its policy pol (nil: c's own, not shared).
func schedOf(c compile.Compiled, pol *compile.Policy) sched {
	if pol == nil {
		p := c.Policy
		pol = &p
	}
	return sched{Schedule: c.Schedule, Location: c.Location, Plan: c.Plan, pol: pol}
}

// target is what firing a schedule needs from its spec.
type target struct {
	workflow string
	input    []byte
	at       int64 // a one-shot's time (Unix ns); zero otherwise
	// trace is the spec's writer span, which dispatch spans link to; kept
	// only when the engine traces.
	trace *kvstore.TraceContext
}

func targetOf(s *kvstore.Spec, traced bool) target {
	t := target{workflow: s.Workflow, input: s.Input}
	if traced {
		t.trace = s.Trace
	}
	if s.At != nil {
		t.at = s.At.UnixNano()
	}
	return t
}

// decideInput is the Input of a schedule's next decision.
func (e *Engine) decideInput(now time.Time, id string, t target, c sched, written time.Time, st *kvstore.State, settled, checked string) Input {
	return Input{
		ID:               id,
		TenureSince:      e.tenureSince(id, st, settled),
		MaxClaim:         e.maxClaim(),
		Now:              now,
		Plan:             c.Plan,
		Policy:           c.policy(),
		Schedule:         c.Schedule,
		State:            st,
		Settled:          settled,
		Checked:          checked,
		MisfireThreshold: e.cfg.MisfireThreshold,
		Written:          written,
		At:               unixNano(t.at),
	}
}

// tenureSince is Input.TenureSince for schedule id with state st: when
// this instance's tenure of its shard began, looked up (a hash and the
// leases' lock) only when st holds a claim not known to be settled.
func (e *Engine) tenureSince(id string, st *kvstore.State, settled string) time.Time {
	if st == nil || st.Claim == nil || st.Claim.Settled() || st.Claim.Token == settled {
		return time.Time{}
	}
	since, _ := e.leases.since(kvstore.ShardOf(id, e.shards))
	return since
}

// entryInput is en's decision input, its state viewed in buf (see
// entry.view).
func (e *Engine) entryInput(en *entry, now time.Time, buf *kvstore.State) Input {
	return e.decideInput(now, en.id, en.target, en.compiled, unixNano(en.written), en.view(buf), en.settled, en.checked)
}

// maxClaim is the longest claim any correct instance can make on this
// fire stream: a takeover re-publishes at the earliest when a claim
// expires, and the duplicate window must still remember the first publish
// then (checkDuplicateWindow enforces it for this instance's own claims).
func (e *Engine) maxClaim() time.Duration { return e.dupWindow / 2 }

// replayLimit is how late a slot of a schedule without a state record may
// be decided without looking in the fire stream first: what the stream's
// duplicate window still remembers, less a claim's lifetime (a slot that
// fired already, published again within it, is dropped by the stream).
func (e *Engine) replayLimit() time.Duration {
	return max(e.dupWindow-e.cfg.ClaimTTL, time.Second)
}

// unixNano is the time of ns nanoseconds since the epoch; 0 is the zero time.
func unixNano(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// slotJob is a snapshot of an entry handed to a worker: one schedule's
// next step (worker.slot).
type slotJob struct {
	id      string
	written time.Time
	target
	compiled sched
	state    *kvstore.State
	stateRev uint64
	planned  bool // state is the loop's plan, not a stored record (see entry)
	// specRev is the revision of the spec compiled (see specCurrent).
	specRev uint64
	settled string
	checked string
	remove  bool
	// removedAt is when the spec was deleted (a remove job).
	removedAt time.Time
	dones     []doneReport
	// uncounted fires to take back from State.Fires (see settle).
	uncounted uint64
	// verify: the state record may be behind the fire stream; it is
	// checked against the schedule's last fire before it is decided
	// (lagging.go).
	verify bool
	// lag: a window may leave this schedule's state record behind its
	// fire (Config.StateInterval; behind.go).
	lag bool
	// listed is the schedule's slot in an ended list (ended.go), if one
	// names its one-shot time.
	listed *endedRef
}

// slotResult is what a worker hands back of a slotJob (and, for each of
// its schedules, of a window job).
type slotResult struct {
	id       string
	state    *kvstore.State // nil with stateRev > 0: deleted
	stateRev uint64
	planned  bool // state is a plan, not a stored record
	settled  string
	// settledNow: this worker settled the claim with token settled (else
	// settled is only what it started from).
	settledNow bool
	checked    string
	removed    bool // the remove job finished
	// listed: the schedule's fire was written into an ended list; the
	// loop plans it as ended (ended.go).
	listed bool
	// absent: the worker found the state record deleted; state and
	// stateRev are nil and 0, and the loop decides again from scratch.
	absent bool
	// specStale: the spec the job was given is no longer the stored one
	// (see specCurrent); the loop looks again once its watch has caught
	// up.
	specStale bool
	// uncounted is what the job could not take back from State.Fires
	// (it wrote no state): the loop keeps it for the next job.
	uncounted uint64
	// progress: the job wrote the state or settled a claim (see
	// worker.process); only progress ends a run of failures.
	progress bool
	// lagged: state is the schedule's state after a fire the window did
	// not record; stateRev is still the record's (behind.go).
	lagged bool
	err    error
}

// settle records that this worker settled the claim with token.
func (r *slotResult) settle(token string) { r.settled, r.settledNow = token, true }

// isDelete reports whether a watched entry is a delete or purge marker.
func isDelete(e jetstream.KeyValueEntry) bool {
	op := e.Operation()
	return op == jetstream.KeyValueDelete || op == jetstream.KeyValuePurge
}
