package fires

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// loop owns the entries and the due index. Only its goroutine touches
// them; workers get snapshots (jobs) and send back results.
type loop struct {
	e      *Engine
	specs  *laterWatch
	states jetstream.KeyWatcher
	cals   jetstream.KeyWatcher
	dones  chan doneReport
	// parked are due schedules of shards this instance does not own; they
	// are looked at again when the leases change.
	parked map[string]bool
	// calendars are the named calendars, by name; badCalendars the
	// records that do not parse (forged or damaged), with why.
	calendars    map[string]*calendar.Calendar
	badCalendars map[string]error
	entries      map[string]*entry
	// ready is closed once the index is complete (the run's Ready).
	ready chan struct{}
	// waiting are completion reports for a worker to record, by schedule.
	waiting map[string][]doneReport
	// uncounted are fires counted at their claim that the stream took for
	// duplicates, by schedule, to take back at the next state write.
	uncounted map[string]uint64
	index     dueQueue
	// work is the worker pool: the jobs sent and the results taken back.
	work    pool
	settles <-chan settle // claims whose publish was acknowledged
	timer   *clock.Timer
	// fetches are schedules whose state record came during the load, due
	// soon, before their spec: a fetcher reads the spec ahead of the watch
	// and hands it back on fetched (see fetchSpec).
	fetches chan string
	fetched chan jetstream.KeyValueEntry
	// lazyIDs are the entries left to compile behind the loop once the
	// index is complete, handed over on lazyIn and back on lazyOut
	// (approach.go), in batches: lazyNext is the one to hand over next.
	lazyIDs  []string
	lazyNext []lazySpec
	// loadLazy are the entries made lazy during the load (makeLazy), for
	// lazyIDs once the index is complete (behind).
	loadLazy []string
	lazyIn   chan []lazySpec
	lazyOut  chan []lazyCompiled
	// decoder decodes the spec watch's values for the loop
	// (specdecoder.go); heldSpecs are the rest of a batch of them that a
	// test held the load back in (Config.hold).
	decoder   *specDecoder
	heldSpecs []decodedSpec

	specsLoaded, statesLoaded, calsLoaded bool
	// calsWritten is when the calendar records were last written (Unix
	// ns, the latest of them): a lazy entry that names a calendar and
	// whose state record is older is compiled at once (lazyUntil).
	calsWritten int64
	// heldFor counts the initial records read of the watch a test holds
	// back (Config.hold).
	heldFor int
	// sized is how many entries the entries map was last sized for
	// (sizeFor); the map is made on sizing and comes on resized, one at a
	// time (resizing).
	sized    int
	sizing   sync.WaitGroup
	resized  chan map[string]*entry
	resizing bool
	// win is the state of the window claims (see windows).
	win windows
	// policies are the misfire and overlap policies in use, shared (sched).
	policies map[kvstore.Policy]*kvstore.Policy
	// scratch holds an entry's state viewed for one of the loop's own
	// decisions (entry.view), so that they allocate nothing.
	scratch kvstore.State
	// scan is the health query being answered, a slice of the entries per
	// loop turn, and asked the queries that wait for the next (health.go).
	scan  *healthScan
	asked []healthQuery

	// lag are the schedules whose state records a window left behind
	// their fires, and lagQ their records to write, by shard, oldest
	// first (behind.go).
	lag  map[string]lagMark
	lagQ map[int][]lagRef
	// lagRetry: a shard whose last record job failed sends none before
	// then (behindUnwritten).
	lagRetry map[int]time.Time
	// lagHeld: a shard whose due records are all of schedules in a job
	// or on a window, at the loop's last look (sendBehind); the timer
	// does not wait for it (nextBehind).
	lagHeld map[int]bool
	// handBack are the shards being handed back, with their tenure's
	// generation, and flushing the hand-backs waiting for their records
	// (handback.go).
	handBack map[int]uint64
	flushing []flushReq
	// ended are the ended lists of the shards checked (ended.go).
	ended endedIndex
	// stopping: the loop is writing what is left before it stops.
	stopping bool
}

func newLoop(e *Engine, specs *laterWatch, states, cals jetstream.KeyWatcher, dones chan doneReport) *loop {
	return &loop{
		dones:     dones,
		parked:    make(map[string]bool),
		e:         e,
		specs:     specs,
		states:    states,
		cals:      cals,
		calendars: make(map[string]*calendar.Calendar), badCalendars: make(map[string]error),
		policies:  make(map[kvstore.Policy]*kvstore.Policy),
		entries:   make(map[string]*entry),
		waiting:   make(map[string][]doneReport),
		uncounted: make(map[string]uint64),
		lag:       make(map[string]lagMark),
		lagQ:      make(map[int][]lagRef),
		lagRetry:  make(map[int]time.Time),
		lagHeld:   make(map[int]bool),
		handBack:  make(map[int]uint64),
		work:      newPool(e.cfg.Workers),
		fetches:   make(chan string, fetchQueue),
		fetched:   make(chan jetstream.KeyValueEntry, fetchQueue),
		lazyIn:    make(chan []lazySpec, 1),
		lazyOut:   make(chan []lazyCompiled, 1),
		resized:   make(chan map[string]*entry, 1),
		win:       newWindows(e.cfg.WindowSlots),
		ended:     newEndedIndex(),
	}
}

// specFetchers is how many specs are fetched ahead of the watch at once.
// A fetch is a KV get, a round trip to a server that is busy delivering
// the load: one at a time, the hundred due schedules of the million-
// schedule bench fired over 2-4 s, one get after another.
const specFetchers = 8

// fetchQueue bounds the specs fetched ahead of the watch at a time; a due
// schedule that finds the queue full waits for the watch to bring its spec.
const fetchQueue = 1024

// fetchHorizon is how soon a schedule must be due for its spec to be
// fetched ahead of the watch.
const fetchHorizon = 10 * time.Second

func (l *loop) run(ctx context.Context) {
	var wg sync.WaitGroup
	workCtx, cancelWork := context.WithCancel(context.Background())
	defer cancelWork()
	l.work.start(workCtx, &wg, worker{e: l.e})
	for range specFetchers {
		wg.Go(func() { l.fetchSpecs(ctx) })
	}
	wg.Go(func() { l.e.compileLazySpecs(ctx, l.lazyIn, l.lazyOut, l.e.cfg.holdLazy) })
	l.timer = l.e.cfg.Clock.NewTimer(time.Hour)
	defer l.timer.Stop()
	var released <-chan struct{} // a held watch's release (Config.hold)

	// Spec values are decoded on a goroutine of their own (specdecoder.go).
	// The initial values it leaves uncompiled: the loop compiles those due
	// soon or unknown, the rest on approach (approach.go).
	l.decoder = newSpecDecoder()
	wg.Go(func() {
		specs := l.specs.Watcher(ctx)
		if specs == nil {
			return // the run ends before the watch starts
		}
		initial := true
		l.decoder.run(ctx, specs.Updates(), func(d *decodedSpec) {
			if d.kv == nil {
				initial = false // the end of the initial values
			} else if !initial {
				l.e.compileAhead(d)
			}
		})
	})
	decoded := (<-chan []decodedSpec)(l.decoder.out)
	specUpdates, stateUpdates, calUpdates := decoded, l.states.Updates(), l.cals.Updates()
	takeState := func(kv jetstream.KeyValueEntry) bool {
		l.onState(kv)
		if l.hold(holdStates, l.statesLoaded) {
			stateUpdates, released = nil, l.e.cfg.hold.release
			return false
		}
		return true
	}
	for ctx.Err() == nil {
		var lazySend chan<- []lazySpec
		next := l.nextLazy()
		if len(next) > 0 {
			lazySend = l.lazyIn
		}
		select {
		case <-ctx.Done():
		case lazySend <- next:
			l.lazyNext = nil
		case r := <-l.lazyOut:
			l.onLazy(r)
		case m := <-l.resized:
			l.takeSized(m)
		case b, ok := <-specUpdates:
			if !ok {
				specUpdates = nil
				continue
			}
			if l.onSpecs(b) {
				specUpdates, released = nil, l.e.cfg.hold.release
			}
			l.decoder.reuse(b)
		case kv, ok := <-stateUpdates:
			if !ok {
				stateUpdates = nil
				continue
			}
			if takeState(kv) && !takeMore(stateUpdates, takeState) {
				stateUpdates = nil // closed
			}
		case <-released:
			released = nil
			if l.e.cfg.hold.watch == holdSpecs {
				l.onSpecs(l.heldSpecs)
				l.heldSpecs, specUpdates = nil, decoded
			} else {
				stateUpdates = l.states.Updates()
			}
		case kv, ok := <-calUpdates:
			if !ok {
				calUpdates = nil
				continue
			}
			l.onCalendar(kv)
		case kv := <-l.fetched:
			d := decodeSpec(kv)
			l.onSpec(&d)
		case r := <-l.work.slotDone:
			l.onResult(r)
		case wr := <-l.work.windowDone:
			l.onWindowResult(wr)
		case s := <-l.settles:
			l.onSettle(s)
		case d := <-l.dones:
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
		l.dispatch()
		l.resetTimer()
		if len(l.flushing) > 0 {
			l.checkFlushed()
		}
	}

	// Stop: no new claims; collect what the workers hold, then let them go.
	_ = l.specs.Stop()
	_ = l.states.Stop()
	_ = l.cals.Stop()
	// The deferred state records are written before the workers go,
	// unless writing them failed (a crash leaves them to the next
	// decision, which finds the fires).
	l.stopping = true
	for {
		if !l.win.recordFailed {
			l.sendRecords(l.e.cfg.Clock.Now(), true)
			l.sendBehind(l.e.cfg.Clock.Now(), true)
		}
		if l.work.busy == 0 {
			break
		}
		select {
		case r := <-l.work.slotDone:
			l.onResult(r)
		case wr := <-l.work.windowDone:
			l.onWindowResult(wr)
		}
	}
	l.releaseFlushes()
	l.work.close()
	close(l.fetches)
	close(l.lazyIn)
	l.endScan()
	l.sizing.Wait()
	wg.Wait()
}

// fetchSpecs reads the specs asked for on fetches and hands them to the
// loop, until fetches is closed. A spec that cannot be read is left to
// the watch.
func (l *loop) fetchSpecs(ctx context.Context) {
	for id := range l.fetches {
		kv, err := l.e.store.SpecRecord(ctx, id)
		if err != nil {
			continue
		}
		select {
		case l.fetched <- kv:
		case <-ctx.Done():
		}
	}
}

// fetchSpec asks for en's spec ahead of the watch when the specs are still
// loading, en's arrived state record makes it due within fetchHorizon, and
// its spec has not come: due work first does not wait for the spec's turn
// in the watch. The fetched revision goes through onSpec like a watched
// one, so whichever of the two is older is dropped there.
func (l *loop) fetchSpec(en *entry) {
	if l.specsLoaded || en.specRev > 0 || en.fetching || !en.hasRecord() {
		return
	}
	st := en.view(&l.scratch)
	soon := l.e.cfg.Clock.Now().Add(fetchHorizon)
	if len(st.Triggers) == 0 && (st.Ended || st.Next.IsZero() || st.Next.After(soon)) {
		return
	}
	select {
	case l.fetches <- en.id:
		en.fetching = true
	default: // the queue is full: the watch brings it
	}
}

func (l *loop) loaded() bool { return l.specsLoaded && l.statesLoaded && l.calsLoaded }

// known reports whether en may be dispatched while the index is still
// loading ("due work first", docs/protocol.md): its spec is compiled
// (which waits for the calendars when it names one) and its state record,
// or the knowledge that it has none, is in. A spec whose state record has
// not come yet waits until every state record is in: only then does "no
// record" mean a new schedule.
func (l *loop) known(en *entry) bool {
	return en.compiled.Schedule != nil && (en.stateRev > 0 || l.statesLoaded)
}

// hold reports whether the loop must stop reading a watch (w) now: a test
// holds the initial load back after a number of records (Config.hold).
func (l *loop) hold(w holdWatch, loaded bool) bool {
	h := l.e.cfg.hold
	if h == nil || h.watch != w || loaded {
		return false
	}
	l.heldFor++
	return l.heldFor == h.after
}

// newEntry indexes a new entry for schedule id. The id is copied: a
// watched key is a substring of its message's subject, which it would
// keep alive for as long as the schedule exists.
func (l *loop) newEntry(id string) *entry {
	en := &entry{id: strings.Clone(id)}
	l.entries[en.id] = en
	return en
}

// forget drops en from the entries. It leaves any window queue (which
// holds entries, not ids: windows.pend) at once.
func (l *loop) forget(en *entry) {
	en.queued = false
	delete(l.entries, en.id)
}

// onSpecs takes a batch of decoded specs. It reports whether a test holds
// the load back (Config.hold) after one of them: the rest of the batch is
// then taken when the hold is released.
func (l *loop) onSpecs(b []decodedSpec) (held bool) {
	for i := range b {
		l.onSpec(&b[i])
		if l.hold(holdSpecs, l.specsLoaded) {
			l.heldSpecs = append(l.heldSpecs, b[i+1:]...)
			return true
		}
	}
	return false
}

func (l *loop) onSpec(d *decodedSpec) {
	kv := d.kv
	if kv == nil {
		l.specsLoaded = true
		l.markReady()
		return
	}
	if !l.specsLoaded {
		l.sizeFor(kv)
	}
	id := kv.Key()
	en := l.entries[id]
	if isDelete(kv) {
		if en == nil || kv.Revision() <= en.specRev {
			return
		}
		en.specRev = kv.Revision()
		en.compiled.Schedule, en.invalid = nil, false
		en.spec, en.record, en.lazy = nil, "", false
		en.written = kv.Created().UnixNano() // when it was removed
		l.index.Remove(en)
		if en.busy {
			en.removed = true // finished when its worker reports back
			return
		}
		l.removeEntry(en)
		return
	}
	if en == nil {
		en = l.newEntry(id)
	}
	if kv.Revision() <= en.specRev {
		return
	}
	en.specRev = kv.Revision()
	en.written = 0
	if c := kv.Created(); !c.IsZero() {
		en.written = c.UnixNano()
	}
	en.removed = false
	spec, err := &d.spec, d.err // d is reused: an entry that keeps the spec keeps a copy
	en.spec, en.target, en.record, en.lazy = nil, targetOf(spec, l.e.traced), "", false
	en.calendar = spec.Calendar != ""
	if err == nil && spec.Calendar != "" {
		en.record = string(kv.Value()) // compiled again when the calendar changes
	}
	if err == nil && !l.specsLoaded {
		// Compiled on approach, from the record: no copy of the spec (at
		// a cold start of a million, a million of them made and dropped).
		l.makeLazy(en, kv.Value())
		return
	}
	kept := *spec
	en.spec = &kept
	if err != nil {
		en.invalid, en.compiled.Schedule = true, nil
		l.index.Remove(en)
		l.e.reportInvalid(id, err)
		return
	}
	if !l.calsLoaded && spec.Calendar != "" {
		// Compiled once every calendar is known (calendarsLoaded). The
		// others compile now, while the watch is still delivering.
		en.compiled.Schedule = nil
		return
	}
	if d.ahead {
		l.compiled(en, d.compiled, d.cerr)
		return
	}
	l.compile(en)
}

// compileAhead compiles d's spec on the decoder's goroutine if it names
// no calendar (the only input of a compile that the loop owns).
func (e *Engine) compileAhead(d *decodedSpec) {
	if d.kv == nil || isDelete(d.kv) || d.err != nil || d.spec.Calendar != "" {
		return
	}
	d.compiled, d.cerr = e.compileSpec(d.kv.Key(), &d.spec, nil)
	d.ahead = true
}

// compileSpec checks and compiles spec id, with src for a named calendar.
// Checked and compiled once: CompileShared reports what Validate's own
// compile would, and shares the zones (no zone file read per spec). A
// calendar change can leave a schedule no slot at all: that is reported
// (invalid), not taken for the recurrence's end.
func (e *Engine) compileSpec(id string, spec *kvstore.Spec, src kvstore.CalendarSource) (kvstore.Compiled, error) {
	return spec.CheckRecord(id, src, &e.interner, e.cfg.Clock.Now()) // as PutSpec checks what it writes
}

// compile (re)builds an entry's schedule from its spec and the calendars
// known now; a failure is reported (log and invalid event).
func (l *loop) compile(en *entry) {
	spec := en.heldSpec()
	if spec == nil {
		return // compiled already, and no calendar can change it
	}
	c, err := l.e.compileSpec(en.id, spec, l.calendarSource)
	l.compiled(en, c, err)
}

// compiled makes c (or err) en's compiled schedule and schedules it.
func (l *loop) compiled(en *entry, c kvstore.Compiled, err error) {
	en.clearPlan() // planned again from the new schedule
	if err != nil {
		en.invalid, en.compiled.Schedule = true, nil
		l.index.Remove(en)
		l.e.reportInvalid(en.id, err)
		return
	}
	if en.form == statePacked && en.packed.plan == c.Plan {
		c.Plan = en.packed.plan // one copy of the fingerprint (setState shares it the other way)
	}
	en.compiled, en.invalid, en.failures = l.sched(c), false, 0
	en.spec = nil // a calendar's change decodes the record again (record)
	l.schedule(en)
}

// sched is c as the loop keeps it, its policy shared with the
// schedules' that have the same one (up to maxPolicies of them: specs
// may each give their own durations).
func (l *loop) sched(c kvstore.Compiled) sched {
	pol := l.policies[c.Policy]
	if pol == nil && len(l.policies) < maxPolicies {
		p := c.Policy
		pol = &p
		l.policies[p] = pol
	}
	return schedOf(c, pol)
}

// maxPolicies bounds the distinct policies the loop shares.
const maxPolicies = 1024

func (l *loop) calendarSource(name string) (*calendar.Calendar, error) {
	if c, ok := l.calendars[name]; ok {
		return c, nil
	}
	if err, ok := l.badCalendars[name]; ok {
		// Its schedules are invalid, saying why (their events and status).
		return nil, fmt.Errorf("its record in the calendars bucket is invalid (calendar.Parse, as calendar put checks it): %w", err)
	}
	return nil, kvstore.ErrNotFound
}

// onCalendar keeps the named calendars and re-compiles the schedules that
// use a changed one (their plan changes, so they re-plan from now).
func (l *loop) onCalendar(kv jetstream.KeyValueEntry) {
	if kv == nil {
		l.calsLoaded = true
		l.calendarsLoaded()
		l.markReady()
		return
	}
	name := kv.Key()
	l.calsWritten = max(l.calsWritten, kv.Created().UnixNano())
	delete(l.badCalendars, name)
	if isDelete(kv) {
		delete(l.calendars, name)
	} else if cal, err := calendar.ParseZones(kv.Value(), &l.e.interner.Zones); err == nil {
		l.calendars[name] = cal
	} else {
		l.e.log.Warn("invalid calendar record; schedules using it are invalid until it is fixed", "calendar", name, "err", err)
		delete(l.calendars, name)
		l.badCalendars[name] = err
	}
	if !l.calsLoaded {
		return
	}
	for _, en := range l.entries {
		if en.lazy && en.calendar {
			// Compiled now, with the calendars as they are now, as if it
			// had not been lazy (it may name another calendar: compiled
			// sooner than it had to be, no harm).
			l.compileLazy(en)
			continue
		}
		if en.specRev == 0 || en.lazy || en.spec == nil && en.record == "" {
			continue
		}
		if spec := en.heldSpec(); spec == nil || spec.Calendar != name {
			continue
		}
		if en.busy {
			en.stale = true // re-compiled when its worker reports back
			continue
		}
		l.compile(en)
	}
}

func (l *loop) onState(kv jetstream.KeyValueEntry) {
	if kv == nil {
		l.statesLoaded = true
		l.statesComplete()
		l.markReady()
		return
	}
	if !l.statesLoaded {
		l.sizeFor(kv)
	}
	id := kv.Key()
	en := l.entries[id]
	if en == nil {
		if isDelete(kv) {
			return // nothing to forget (a first claim creates over the marker)
		}
		// State without a spec (yet): keep it, the spec may follow.
		en = l.newEntry(id)
	}
	if kv.Revision() <= en.stateRev {
		return // our own write, echoed, or older news
	}
	if en.busy || !l.e.leases.owns(kvstore.ShardOf(id, l.e.shards)) {
		// Busy: most likely the echo of the worker's own write, decoded
		// only if the worker's result turns out older. Another
		// instance's shard: kept as it came, decoded only once this
		// instance owns the shard (schedule), so that a fleet does not
		// decode every instance's writes everywhere.
		if en.pending == nil || kv.Revision() > en.pending.Revision() {
			en.pending = kv
		}
		if !en.busy {
			l.index.Remove(en)
			l.parked[id] = true
		}
		return
	}
	l.applyState(en, kv)
	l.schedule(en)
	l.fetchSpec(en)
}

// applyPending makes en's undecoded newer state record its state.
func (l *loop) applyPending(en *entry) {
	p := en.pending
	if p == nil {
		return
	}
	en.pending = nil
	if p.Revision() > en.stateRev {
		l.applyState(en, p)
	}
}

// applyState makes a watched state record the entry's state.
func (l *loop) applyState(en *entry, kv jetstream.KeyValueEntry) {
	if p := en.pending; p != nil && p.Revision() <= kv.Revision() {
		en.pending = nil // older news
	}
	en.stateRev = kv.Revision()
	if isDelete(kv) {
		delete(l.lag, en.id)
		en.setState(nil, l.e.cfg.Instance)
	} else if st, err := kvstore.DecodeState(kv.Value()); err == nil {
		l.mergeBehind(en, &st)
		en.setState(&st, l.e.cfg.Instance)
	} else {
		l.e.log.Warn("undecodable state record; it will be re-planned", "schedule", en.id, "err", err)
		en.setState(&kvstore.State{Plan: planUndecodable}, l.e.cfg.Instance) // differs from any plan: re-plan from now
	}
}

// onResult takes a slot job's result.
func (l *loop) onResult(r slotResult) {
	l.work.busy--
	if en := l.entries[r.id]; en != nil {
		en.noWindow = false // a per-slot step was taken
	}
	l.applyResult(r)
}

// applyResult takes a worker's outcome for one schedule.
func (l *loop) applyResult(r slotResult) {
	delete(l.win.unrecorded, r.id)
	en := l.entries[r.id]
	if en == nil {
		return
	}
	en.busy = false
	if r.uncounted > 0 {
		l.uncounted[r.id] += r.uncounted // not written back yet
	}
	switch {
	case r.listed:
		l.planEnded(en)
	case r.lagged:
		l.lagged(en, r.state, l.e.cfg.Clock.Now())
	case r.removed || r.absent:
		delete(l.lag, r.id)
		// The record is gone (deleted by the remove job, or found deleted
		// by the worker). Its delete marker, watched, is newer than
		// stateRev, so it is applied when it comes (or below, if it came).
		en.setState(nil, l.e.cfg.Instance)
	case r.stateRev > en.stateRev:
		delete(l.lag, r.id) // written from the state in memory: not behind
		en.stateRev = r.stateRev
		en.setState(r.state, l.e.cfg.Instance)
	}
	l.applyPending(en) // someone else wrote after the worker, if newer
	if r.settledNow {
		en.settled = r.settled // (an earlier token never overwrites onSettle's news)
	}
	if r.checked != "" {
		en.checked = r.checked
	}
	if en.removed {
		if r.removed {
			l.index.Remove(en)
			l.forget(en)
		} else {
			l.removeEntry(en)
		}
		return
	}
	if r.removed {
		l.schedule(en) // the spec came back while its state was deleted
		return
	}
	if en.stale {
		en.stale = false
		l.compile(en)
		return
	}
	if r.specStale {
		// Its spec's delete, or a newer revision, is on its way in the
		// watch, which removes or re-plans it; looked at again in case
		// the read that said so was behind.
		l.lookAgain(en, specRecheck)
		return
	}
	if errors.Is(r.err, errNotOwned) {
		// Its shard's guard closed while the job waited or worked: no
		// failure of the schedule; it is parked until the shard is owned.
		l.e.log.Debug("job stopped at the lease guard", "schedule", r.id, "err", r.err)
		l.e.step(StepGuardClosed)
		l.schedule(en)
		return
	}
	if r.err != nil {
		if en.failures < math.MaxUint16 {
			en.failures++ // (no wrap, however long it fails)
		}
		wait := retryDelay(int(en.failures))
		quiet := l.e.pub.Episodes.StepFailed(r.id, r.err)
		switch {
		case quiet:
			l.e.log.Debug("schedule step failed; retrying", "schedule", r.id, "attempt", en.failures, "retry_in", wait, "err", r.err)
		case !errors.Is(r.err, kvstore.ErrConflict):
			l.e.log.Warn("schedule step failed; retrying", "schedule", r.id, "attempt", en.failures, "retry_in", wait, "err", r.err)
		}
		if en.failures == stallAfter && !natserr.Exhausted(r.err) {
			l.e.stalled(en.id, int(en.failures), r.err)
		}
		l.index.Set(en, l.e.cfg.Clock.Now().Add(wait))
		return
	}
	if r.progress {
		if en.failures >= stallAfter {
			l.e.log.Info("schedule works again", "schedule", en.id, "after_attempts", en.failures)
		}
		en.failures = 0
	}
	l.schedule(en)
}

// onSettle records that a claim's fire was published and its tick sent.
// It may come before the worker's result with that claim: the token is
// kept, and matches the claim once the result is in.
func (l *loop) onSettle(s settle) {
	en := l.entries[s.id]
	if en == nil {
		return
	}
	if s.duplicate {
		l.uncounted[s.id]++
		if s.token == "" {
			return
		}
	}
	en.settled = s.token
	if !en.busy {
		l.schedule(en)
	}
}

// calendarsLoaded compiles the schedules that waited for their calendar.
func (l *loop) calendarsLoaded() {
	for _, en := range l.entries {
		switch {
		case en.lazy && en.calendar:
			l.approach(en) // it waited for the calendars (lazyUntil)
		case en.specRev > 0 && !en.invalid && !en.lazy && en.compiled.Schedule == nil && !en.busy:
			l.compile(en)
		}
	}
}

// statesComplete schedules the entries that waited for the last state
// record: their spec is in and no state record is, so they are new.
func (l *loop) statesComplete() {
	for _, en := range l.entries {
		if en.stateRev == 0 {
			l.schedule(en)
		}
	}
}

// schedule puts en in the due index at the time it next needs attention,
// once it is known (see known).
func (l *loop) schedule(en *entry) {
	if en.lazy {
		l.approach(en)
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
	// What waits already goes first: the window checks that hold whole
	// shards back, then the windows of slots queued earlier. Sent only
	// after the due slots below, they found no free worker while due
	// slots kept every worker busy (a fleet restarted on a starved box),
	// and waited for ever (sendChecks).
	l.sendChecks(now)
	l.sendWindows(now)
	for {
		en, due, ok := l.index.Peek()
		if !ok || due.After(now) {
			break
		}
		id := en.id
		if en.lazy {
			l.index.Remove(en)
			l.compileLazy(en) // on approach: scheduled as any other now
			continue
		}
		if !l.known(en) || en.queued {
			l.index.Remove(en)
			continue // scheduled again once known (statesComplete); a queued one is on its window
		}
		shard := kvstore.ShardOf(id, l.e.shards)
		owned, checked := l.gate(shard)
		switch {
		case !owned:
			l.index.Remove(en)
			l.parked[id] = true
			continue
		case !checked:
			l.index.Remove(en)
			l.holdFor(id, shard)
			continue
		}
		if l.work.busy >= l.e.cfg.WindowBusy && l.batchable(en, now) {
			l.index.Remove(en)
			l.queue(en, shard)
			continue
		}
		if l.work.full() {
			break
		}
		l.index.Remove(en)
		en.busy = true
		l.work.sendSlot(l.snapshot(en, now))
		delete(l.waiting, id)
		delete(l.uncounted, id)
	}
	l.sendWindows(now)
	l.sendRecords(now, false)
	l.sendBehind(now, false)
	l.sweepLists(now)
}

func (l *loop) resetTimer() {
	l.timer.Stop()
	if l.work.full() {
		return // a result or a watch event wakes the loop
	}
	_, due, ok := l.index.Peek()
	if retry := l.nextRetry(); !retry.IsZero() && (!ok || retry.Before(due)) {
		due, ok = retry, true
	}
	if rec := l.nextRecord(); !rec.IsZero() && (!ok || rec.Before(due)) {
		due, ok = rec, true
	}
	if rec := l.nextBehind(); !rec.IsZero() && (!ok || rec.Before(due)) {
		due, ok = rec, true
	}
	if sw := l.ended.sweepAt; len(l.ended.lists) > 0 && (!ok || sw.Before(due)) {
		due, ok = sw, true
	}
	if !ok {
		return
	}
	l.timer.Reset(max(l.e.cfg.Clock.Until(due), 0))
}

func (l *loop) markReady() {
	if l.loaded() {
		select {
		case <-l.ready:
		default:
			close(l.ready)
			l.e.log.Info("due index ready", "schedules", len(l.entries), "due", l.index.Len())
			l.reportRecovery()
			l.behind()
		}
	}
}

// reportRecovery says what this instance found at start: schedules whose
// slot is overdue (each then follows its misfire policy, recorded per
// slot) and claims left unsettled by a previous owner (each is checked and,
// if its fire is missing, taken over).
func (l *loop) reportRecovery() {
	now := l.e.cfg.Clock.Now()
	var overdue, unsettled, invalid int
	for _, en := range l.entries {
		if en.invalid {
			invalid++
		}
		st := en.view(&l.scratch)
		if st == nil {
			continue
		}
		if !st.Ended && !st.Next.IsZero() && st.Next.Before(now) {
			overdue++
		}
		if st.Claim != nil && st.Claim.Owner != l.e.cfg.Instance {
			if st.Claim.Expires.After(now.Add(-l.e.dupWindow)) {
				unsettled++
			}
		}
	}
	l.e.log.Info("startup recovery", "schedules", len(l.entries), "overdue", overdue, "recent_claims_to_check", unsettled, "invalid", invalid)
	l.e.event(kvstore.Event{Kind: kvstore.EventRecovered, Instance: l.e.cfg.Instance, Owner: l.e.cfg.Instance, At: now.UTC(),
		Reason: fmt.Sprintf("%d schedules: in this instance's shards %d overdue (misfire policies apply) and %d recent claims of other instances to check; %d invalid", len(l.entries), overdue, unsettled, invalid),
		Count:  uint64(overdue)})
}

// unpark re-schedules the parked schedules whose shard this instance now
// owns, sends the schedules held for a window check back through
// dispatch (a lease that changed meanwhile needs its own check), and asks
// for the check of each shard owned anew at once: its schedules then find
// it done when they come due (a herd of 100,000 one-shots due in the
// first second of a tenure was held out of the due index and put back,
// shard by shard, while the checks ran).
func (l *loop) unpark() {
	for shard := range l.win.held {
		if !l.win.checking[shard] {
			l.releaseHeld(shard)
		}
	}
	for shard := range l.e.shards {
		l.gate(shard)
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

// onDone queues a worker's completion report on its schedule; the owner
// of the shard records it (ledger status, and the end of Running).
func (l *loop) onDone(d doneReport) {
	en := l.entries[d.Schedule]
	if en == nil || !l.e.leases.owns(kvstore.ShardOf(d.Schedule, l.e.shards)) {
		return
	}
	l.waiting[d.Schedule] = append(l.waiting[d.Schedule], d)
	if en.lazy {
		l.compileLazy(en) // its report is recorded from the compiled schedule
	}
	if !en.busy && en.compiled.Schedule != nil {
		l.index.Set(en, l.e.cfg.Clock.Now())
	}
}

// lookAgain makes sure en is looked at within d.
func (l *loop) lookAgain(en *entry, d time.Duration) {
	if en.lazy {
		l.compileLazy(en)
	}
	if en.busy || en.compiled.Schedule == nil {
		return
	}
	at := l.e.cfg.Clock.Now().Add(d)
	if due, ok := l.index.Due(en); !ok || due.After(at) {
		l.index.Set(en, at)
	}
}

// specRecheck is how soon a schedule whose spec was found stale
// (result.specStale) is looked at again if the watch brought nothing.
const specRecheck = time.Second

// stallAfter is how many consecutive failed attempts flag a schedule as
// stalled (an event and a warning; the overdue metric shows it too). It
// keeps being retried.
const stallAfter = 5

// stalled flags a schedule whose steps keep failing.
func (e *Engine) stalled(id string, attempts int, err error) {
	e.log.Warn("schedule stalled: its steps keep failing; still retrying", "schedule", id, "attempts", attempts, "err", err)
	e.event(kvstore.Event{Kind: kvstore.EventStalled, Schedule: id, Reason: err.Error(), Count: uint64(attempts),
		Owner: e.cfg.Instance, At: e.cfg.Clock.Now().UTC()})
}

// retryDelay is the exponential backoff with jitter after n failures.
func retryDelay(n int) time.Duration {
	b := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(50*time.Millisecond),
		backoff.WithMaxInterval(5*time.Second),
		backoff.WithMultiplier(2),
		backoff.WithRandomizationFactor(0.5),
		backoff.WithMaxElapsedTime(0),
	)
	d := b.NextBackOff()
	for range min(n, 20) - 1 {
		d = b.NextBackOff()
	}
	return d
}
