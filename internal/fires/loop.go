package fires

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// loop owns the entries and the due index, and dispatches what is due:
// docs/protocol.md's "Per slot" in one goroutine. Only its goroutine
// touches its fields unless a field's comment says otherwise; workers get
// snapshots (slotJob, windowJob) and send back results. What the loop
// hands off has a seam of its own: the window batching and the records
// windows left behind (win, batch.go, batch_apply.go, behind.go), the
// cold start (load, loader.go, approach.go, sizefor.go), the health walk
// (health.go), the hand-backs (hand, handback.go) and the ended lists
// (ended, ended.go).
type loop struct {
	e *Engine // shared, read-only after Start
	// in are the watches and reports the loop reads; their goroutines
	// write the channels.
	in inputs
	// entries are the schedules, by id, and index the due ones, earliest
	// first.
	entries map[string]*entry
	index   dueQueue
	// parked are due schedules of shards this instance does not own; they
	// are looked at again when the leases change.
	parked map[string]bool
	// cal are the named calendars.
	cal calendars
	// ready is closed by the loop once the index is complete (the run's
	// Ready), and read by any goroutine.
	ready chan struct{}
	// waiting are completion reports for a worker to record, by schedule.
	waiting map[string][]doneReport
	// uncounted are fires counted at their claim that the stream took for
	// duplicates, by schedule, to take back at the next state write.
	uncounted map[string]uint64
	// work is the worker pool: the jobs sent and the results taken back
	// (its channels are shared with the workers).
	work  pool
	timer *clock.Timer
	// load is the cold start: the initial load of the watches and what it
	// leaves to do behind the loop (its channels are shared with the
	// fetchers, the compiler and the sizer).
	load loader
	// win batches due plain slots into window claims (batch.go).
	win batcher
	// policies are the misfire and overlap policies in use, shared (sched).
	policies map[compile.Policy]*compile.Policy
	// scratch holds an entry's state viewed for one of the loop's own
	// decisions (entry.view), so that they allocate nothing.
	scratch kvstore.State
	// health is the health query being answered, a slice of the entries
	// per loop turn (health.go).
	health healthState
	// hand are the shards being handed back (handback.go).
	hand handBacks
	// ended are the ended lists of the shards checked (ended.go).
	ended endedIndex
	// stopping: the loop is writing what is left before it stops.
	stopping bool
	// backlog is the due work waiting for the workers (backlog.go).
	backlog backlog
}

// inputs are the channels the loop reads besides its pool's: the
// watches (their goroutines write them), the workers' completion reports
// (dones, written by the done subscription) and the settled claims
// (settles, written by the in-flight tracker).
type inputs struct {
	specs   *laterWatch
	states  jetstream.KeyWatcher
	cals    jetstream.KeyWatcher
	dones   chan doneReport
	settles <-chan settle // claims whose publish was acknowledged
}

// calendars are the named calendars, by name; bad the records that do
// not parse (forged or damaged), with why; written when the records were
// last written (Unix ns, the latest of them): a lazy entry that names a
// calendar and whose state record is older is compiled at once
// (lazyUntil).
type calendars struct {
	known   map[string]*calendar.Calendar
	bad     map[string]error
	written int64
}

// healthState is the health query being answered (scan) and asked the
// queries that wait for the next (health.go).
type healthState struct {
	scan  *healthScan
	asked []healthQuery
}

// handBacks are the shards being handed back, with their tenure's
// generation, and flushing the hand-backs waiting for their records
// (handback.go).
type handBacks struct {
	shards   map[int]uint64
	flushing []flushReq
}

func newLoop(e *Engine, specs *laterWatch, states, cals jetstream.KeyWatcher, dones chan doneReport) *loop {
	l := &loop{
		e:         e,
		in:        inputs{specs: specs, states: states, cals: cals, dones: dones},
		parked:    make(map[string]bool),
		cal:       calendars{known: make(map[string]*calendar.Calendar), bad: make(map[string]error)},
		policies:  make(map[compile.Policy]*compile.Policy),
		entries:   make(map[string]*entry),
		waiting:   make(map[string][]doneReport),
		uncounted: make(map[string]uint64),
		hand:      handBacks{shards: make(map[int]uint64)},
		work:      newPool(e.cfg.Workers),
		ended:     newEndedIndex(),
	}
	l.load = newLoader(l)
	l.win = newBatcher(l, e.cfg.WindowSlots)
	return l
}

func (l *loop) run(ctx context.Context) {
	var wg sync.WaitGroup
	workCtx, cancelWork := context.WithCancel(context.Background())
	defer cancelWork()
	l.work.start(workCtx, &wg, worker{e: l.e})
	l.load.start(ctx, &wg, l.in.specs)
	l.timer = l.e.cfg.Clock.NewTimer(time.Hour)
	defer l.timer.Stop()
	decoded := (<-chan []decodedSpec)(l.load.decoder.out)
	stateUpdates := l.e.test.holdUpdates(ctx, holdStates, l.in.states.Updates(), wg.Go)
	specUpdates, calUpdates := decoded, l.in.cals.Updates()
	takeState := func(kv jetstream.KeyValueEntry) bool {
		l.onState(kv)
		return true
	}
	for ctx.Err() == nil {
		lazySend, next := l.load.lazyOffer()
		select {
		case <-ctx.Done():
		case lazySend <- next:
			l.load.lazyTaken()
		case r := <-l.load.lazyOut:
			l.load.onLazy(r)
		case m := <-l.load.resized:
			l.load.takeSized(m)
		case b, ok := <-specUpdates:
			if !ok {
				specUpdates = nil
				continue
			}
			l.onSpecs(b)
			l.load.decoder.reuse(b)
		case kv, ok := <-stateUpdates:
			if !ok {
				stateUpdates = nil
				continue
			}
			l.onState(kv)
			if !takeMore(stateUpdates, takeState) {
				stateUpdates = nil // closed
			}
		case kv, ok := <-calUpdates:
			if !ok {
				calUpdates = nil
				continue
			}
			l.onCalendar(kv)
		case kv := <-l.load.fetched:
			d := decodeSpec(kv)
			l.onSpec(&d)
		case r := <-l.work.slotDone:
			l.onResult(r)
		case wr := <-l.work.windowDone:
			l.win.apply(wr)
		case s := <-l.in.settles:
			l.onSettle(s)
		case d := <-l.in.dones:
			l.onDone(d)
		case q := <-l.e.queries:
			l.askHealth(q)
		case fr := <-l.e.flushes:
			l.onFlush(fr)
		case <-l.scanning():
			l.scanHealth()
		case <-l.e.leases.changed:
			l.unpark()
		case <-l.timer.C:
		}
		l.takeReady()
		l.dispatch()
		l.resetTimer()
		if len(l.hand.flushing) > 0 {
			l.checkFlushed()
		}
	}

	// Stop: no new claims; collect what the workers hold, then let them go.
	_ = l.in.specs.Stop()
	_ = l.in.states.Stop()
	_ = l.in.cals.Stop()
	// The deferred state records are written before the workers go,
	// unless writing them failed (a crash leaves them to the next
	// decision, which finds the fires).
	l.stopping = true
	for {
		l.win.flush(l.e.cfg.Clock.Now())
		if l.work.busy == 0 {
			break
		}
		select {
		case r := <-l.work.slotDone:
			l.onResult(r)
		case wr := <-l.work.windowDone:
			l.win.apply(wr)
		}
	}
	l.releaseFlushes()
	l.work.close()
	l.endScan()
	l.load.stop()
	wg.Wait()
}

// known reports whether en may be dispatched while the index is still
// loading ("due work first", docs/protocol.md): its spec is compiled
// (which waits for the calendars when it names one) and its state record,
// or the knowledge that it has none, is in. A spec whose state record has
// not come yet waits until every state record is in: only then does "no
// record" mean a new schedule.
func (l *loop) known(en *entry) bool {
	return en.compiled.Schedule != nil && (en.stateRev > 0 || l.load.statesLoaded)
}

// schedule puts en in the due index at the time it next needs attention,
// once it is known (see known).
func (l *loop) schedule(en *entry) {
	if en.lazy {
		l.load.approach(en)
		return
	}
	if !l.known(en) || en.busy || en.queued {
		l.index.Remove(en)
		return
	}
	if en.pending != nil {
		if !l.e.leases.owns(kvstore.ShardOf(en.id, l.e.shards)) {
			l.index.Remove(en) // another instance's: looked at when owned
			l.parked[en.id] = true
			return
		}
		l.applyPending(en)
	}
	now := l.e.cfg.Clock.Now()
	if !en.hasState() {
		l.plan(en, now)
	}
	due, ok := Due(l.e.entryInput(en, now, &l.scratch))
	if len(l.waiting[en.id]) > 0 && (!ok || due.After(now)) {
		// Completion reports came in while a worker held it (onDone):
		// recorded now, not at its next slot, which may be hours away.
		due, ok = now, true
	}
	if !ok {
		l.index.Remove(en)
		return
	}
	l.index.Set(en, due)
}

// plan gives a schedule without a state record its first slot, in memory
// only: every instance plans the same slot from the spec's write time, and
// whoever claims it creates the record by CAS on the revision it saw (none,
// or the delete marker of an earlier state). A million new schedules thus
// cost no writes until they fire. A plan that skips slots (a calendar rule)
// is left to a worker, which writes it at once so that the skips are in
// the ledger now, not at the first fire; so is one that does not pack
// (inMemoryPlan).
func (l *loop) plan(en *entry, now time.Time) {
	if l.planEnded(en) {
		return // its fire is in an ended list (ended.go)
	}
	d := Decide(l.e.entryInput(en, now, &l.scratch))
	p, ok := inMemoryPlan(en.compiled.Plan, d, now)
	if !ok {
		return // not a plain plan: left to a worker, as above
	}
	p.plan, p.updated = "", 0 // the compiled plan's (entry.view); a plan was never written
	en.setPlan(p)
}

// removeEntry forgets a schedule whose spec was deleted, and deletes its
// state through a worker, so that the loop never does I/O.
func (l *loop) removeEntry(en *entry) {
	l.index.Remove(en)
	l.applyPending(en) // its record is deleted at its latest revision
	if !en.hasRecord() {
		l.forget(en)
		return
	}
	en.busy, en.removed = true, true
	l.work.sendSlot(slotJob{id: en.id, stateRev: en.stateRev, remove: true, removedAt: unixNano(en.written)})
}

// dispatch hands every due schedule to a worker, as long as one is free:
// plain on-time slots go onto their shard's next window claim, the others
// to a worker each. Nothing of a shard is dispatched before its window
// record was checked in this lease tenure (see windows).
func (l *loop) dispatch() {
	now := l.e.cfg.Clock.Now()
	l.win.first(now) // what waits already goes first
	for {
		en, due, ok := l.index.Peek()
		if !ok || l.dispatchAt(due).After(now) {
			break // not due, or due within the quantum that ends after now (turn.go)
		}
		id := en.id
		if en.lazy {
			l.index.Remove(en)
			l.load.compileLazy(en) // on approach: scheduled as any other now
			continue
		}
		if !l.known(en) || en.queued {
			l.index.Remove(en)
			continue // scheduled again once known (statesIn); a queued one is on its window
		}
		shard := kvstore.ShardOf(id, l.e.shards)
		if owned, checked := l.win.gate(shard); !owned {
			l.index.Remove(en)
			l.parked[id] = true
			continue
		} else if !checked {
			l.index.Remove(en)
			l.win.holdFor(id, shard)
			continue
		}
		if l.win.take(en, shard, now) {
			l.index.Remove(en) // on its shard's next window
			continue
		}
		if l.work.full() || l.e.test.dispatchHeld() {
			break
		}
		l.index.Remove(en)
		en.busy = true
		l.work.sendSlot(l.snapshot(en, now))
		delete(l.waiting, id)
		delete(l.uncounted, id)
	}
	l.win.ready(now)
	l.sweepLists(now)
	l.checkBacklog(now)
}

func (l *loop) resetTimer() {
	l.timer.Stop()
	if l.work.full() {
		return // a result or a watch event wakes the loop
	}
	if l.e.test.dispatchHeld() {
		l.timer.Reset(heldPoll) // a test's hold: look again soon
		return
	}
	_, due, ok := l.index.Peek()
	due = l.dispatchAt(due)
	for _, wake := range [...]time.Time{l.win.wake(), l.backlogWake()} {
		if !wake.IsZero() && (!ok || wake.Before(due)) {
			due, ok = wake, true
		}
	}
	if sw := l.ended.sweepAt; len(l.ended.lists) > 0 && (!ok || sw.Before(due)) {
		due, ok = sw, true
	}
	if !ok {
		return
	}
	l.timer.Reset(max(l.e.cfg.Clock.Until(due), 0))
}

// unpark re-schedules the parked schedules whose shard this instance now
// owns, sends the schedules held for a window check back through
// dispatch (a lease that changed meanwhile needs its own check), and asks
// for the check of each shard owned anew at once: its schedules then find
// it done when they come due (a herd of 100,000 one-shots due in the
// first second of a tenure was held out of the due index and put back,
// shard by shard, while the checks ran).
func (l *loop) unpark() {
	l.win.leasesChanged()
	for shard := range l.e.shards {
		l.win.gate(shard)
	}
	for id := range l.parked {
		if !l.e.leases.owns(kvstore.ShardOf(id, l.e.shards)) {
			continue
		}
		delete(l.parked, id)
		if en := l.entries[id]; en != nil {
			l.schedule(en)
		}
	}
}
