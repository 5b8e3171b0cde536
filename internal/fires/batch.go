package fires

import (
	"time"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// batcher is the loop's fast path for herds: it batches due plain slots
// of a shard into one window claim (docs/protocol.md, "Window claims") and
// keeps what that needs: which shards' window records were checked in the
// current lease tenure, the last record each shard's windows were written
// over, the due schedules waiting for their shard's next window, the
// fired one-shots whose state records are deferred, and the records
// windows left behind their fires (behind.go). The loop owns it and calls
// it at a few points (take, first, ready, apply, wake, flush; see below);
// only the loop goroutine touches it. A slot's eligibility is the
// decider's (batchable, DecidePlain), so the fast path cannot drift from
// the per-slot one.
type batcher struct {
	l        *loop          // the loop it runs on: it calls back into the index and the pool
	checked  map[int]uint64 // shard -> lease generation whose record was checked
	want     map[int]uint64 // shards to check, with the generation
	checking map[int]bool   // a check or demote job is out
	retryAt  map[int]time.Time
	mark     map[int]windowMark
	firing   map[int]bool // a window of the shard is with a worker
	// pend are the due schedules waiting for the shard's next window: an
	// entry leaves when it is taken or no longer queued (an entry is
	// unqueued before it is forgotten, see loop.forget).
	pend map[int][]pending
	held map[int][]string // due schedules waiting for the shard's check
	// deferred are fired one-shots whose state records are still to be
	// written, by shard, since deferredAt (the oldest); recording: a
	// recordJob of the shard is with a worker.
	deferred   map[int][]*windowItem
	deferredAt map[int]time.Time
	recording  map[int]bool
	// unrecorded are the schedules of deferred (busy until written).
	unrecorded map[string]bool
	// recordFailed: the last recordJob failed; a stop then
	// writes no more of them (the next decisions find the fires).
	recordFailed bool
	// limit is the most slots of a window: Config.WindowSlots, halved
	// each time the server refuses a window record for its size.
	limit int
	// lag are the state records windows left behind their fires
	// (behind.go).
	lag lagState
}

func newBatcher(l *loop, limit int) batcher {
	return batcher{l: l, limit: limit, checked: map[int]uint64{}, want: map[int]uint64{}, checking: map[int]bool{}, retryAt: map[int]time.Time{},
		mark: map[int]windowMark{}, firing: map[int]bool{}, pend: map[int][]pending{}, held: map[int][]string{},
		deferred: map[int][]*windowItem{}, deferredAt: map[int]time.Time{}, recording: map[int]bool{}, unrecorded: map[string]bool{},
		lag: newLagState()}
}

// writing reports whether a worker holds a window fire or a record job of
// shard: until its result, the shard's window record and ended lists may
// change under a check (sendChecks).
func (w *batcher) writing(shard int) bool { return w.firing[shard] || w.recording[shard] }

// windowRetry is how soon a failed check of a window record is tried again.
const windowRetry = time.Second

// gate reports whether schedules of shard may be dispatched: this
// instance owns the shard and has checked its window record in the
// current tenure. Otherwise the check is asked for.
func (b *batcher) gate(shard int) (owned, checked bool) {
	l := b.l
	gen, ok := l.e.leases.generation(shard)
	if !ok {
		return false, false
	}
	if b.checked[shard] == gen {
		return true, true
	}
	b.want[shard] = gen
	return true, false
}

// The loop calls the batcher at these points only (docs/protocol.md,
// "Window claims"): take (a due slot), first and ready (hand out what is
// ready, as workers are free), apply (a window job's result), wake (when
// the loop's timer must look again), flush (at stop), and, for the
// shards, gate and holdFor (nothing of a shard is dispatched before its
// window record was checked in the tenure) and leasesChanged. Of a
// schedule it is told recorded and, for the records left behind,
// lagged, notBehind and mergeBehind; it is asked unrecordedFire and
// mayLeaveBehind, and of a shard behindFlushed (handback.go).

// take queues en's due slot on its shard's next window when the workers
// are busy enough (Config.WindowBusy), or always with a fire quantum (the
// quantum's windows go out in bundles: window_bundle.go), and the slot is
// batchable; it reports whether it did (the loop then leaves it to the
// window).
func (b *batcher) take(en *entry, shard int, now time.Time) bool {
	if !b.bundling() && b.l.work.busy < b.l.e.cfg.WindowBusy {
		return false
	}
	v, ok := b.judge(en, now)
	if !ok {
		return false
	}
	b.queueJudged(en, shard, v)
	return true
}

// first hands out what waits already, before any due slot: the window
// checks that hold whole shards back, then the windows of slots queued
// earlier. Sent only after the due slots, they found no free worker while
// due slots kept every worker busy (a fleet restarted on a starved box),
// and waited for ever (sendChecks).
func (b *batcher) first(now time.Time) {
	b.sendChecks(now)
	b.sendWindows(now)
}

// ready hands out, after the due slots, the windows and checks ready,
// the deferred state records due and the records left behind due
// (behind.go), as workers are free.
func (b *batcher) ready(now time.Time) {
	b.sendWindows(now)
	b.sendRecords(now, false)
	b.sendBehind(now, false)
}

// wake is when the loop must look again for the batcher's sake: a failed
// check's retry, a deferred record that must be written however busy
// the loop is, or a record left behind that is due (zero: never).
func (b *batcher) wake() time.Time {
	var first time.Time
	for _, at := range [...]time.Time{b.nextRetry(), b.nextRecord(), b.nextBehind()} {
		if !at.IsZero() && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	return first
}

// flush hands out every deferred state record and every record left
// behind, at stop, unless writing them failed (a crash leaves them to the
// next decision, which finds the fires).
func (b *batcher) flush(now time.Time) {
	if b.recordFailed {
		return
	}
	b.sendRecords(now, true)
	b.sendBehind(now, true)
}

// leasesChanged sends the schedules held for a shard's check back through
// dispatch (a lease that changed meanwhile needs its own check), except
// those whose check is out.
func (b *batcher) leasesChanged() {
	for shard := range b.held {
		if !b.checking[shard] {
			b.releaseHeld(shard)
		}
	}
}

// recorded: schedule id's state record is no longer deferred.
func (b *batcher) recorded(id string) { delete(b.unrecorded, id) }

// unrecordedFire reports whether schedule id fired in a window whose
// state record is still deferred (not overdue: health).
func (b *batcher) unrecordedFire(id string) bool { return b.unrecorded[id] }

// shardBusy reports whether a check or a record job of shard is out.
func (b *batcher) shardBusy(shard int) bool { return b.recording[shard] || b.checking[shard] }

// batchable reports whether en's due slot may go into a window: its
// decision is plain (DecidePlain: one regular slot, on time, nothing
// else), and nothing the loop keeps of it needs the per-slot path (a
// window declined it, its steps failed, completion reports or uncounted
// fires wait to be written, or its slot must be looked up in the ledger
// or the spec's history first). The worker's decision has the last word
// (fireWindow); a slot it declines goes through the per-slot path.
func (b *batcher) batchable(en *entry, now time.Time) bool {
	_, ok := b.judge(en, now)
	return ok
}

// verdict is what batchable found a queued schedule's slot plain on: the
// entry's record, spec and claim tokens as they were then, the slot, and
// the earliest slot its spec's write allows without a look at the spec's
// history. While none of the first changed, the decider would answer the
// same (Decide is a function of them and of now, and a slot grown late
// past its threshold is declined by the worker, whose decision has the
// last word), so windowItems asks the decider again only when one did.
type verdict struct {
	stateRev, specRev uint64
	settled, checked  string
	slot, notBefore   int64 // Unix ns
}

// judge is batchable with its verdict.
func (b *batcher) judge(en *entry, now time.Time) (verdict, bool) {
	l := b.l
	if !b.mayBatch(en) {
		return verdict{}, false
	}
	in := l.e.entryInput(en, now, &l.scratch)
	d, ok := DecidePlain(in)
	if !ok {
		return verdict{}, false
	}
	v := verdict{stateRev: en.stateRev, specRev: en.specRev, settled: en.settled, checked: en.checked, slot: d.Slot.UnixNano()}
	if !in.Written.IsZero() {
		v.notBefore = in.Written.Add(-in.threshold()).UnixNano()
	}
	return v, b.slotAllowed(en, v, now)
}

// mayBatch is what of batchable the loop keeps of en, apart from its
// decision: a window declined it, its steps failed, completion reports or
// uncounted fires wait to be written.
func (b *batcher) mayBatch(en *entry) bool {
	l := b.l
	return l.e.cfg.WindowSlots >= 1 && !en.noWindow && en.failures == 0 && len(l.waiting[en.id]) == 0 && l.uncounted[en.id] == 0
}

// slotAllowed is what of batchable depends on the slot v found plain and
// on now: a slot that may predate the schedule, or one to look up in the
// ledger first, takes the per-slot path.
func (b *batcher) slotAllowed(en *entry, v verdict, now time.Time) bool {
	l := b.l
	if v.notBefore != 0 && v.slot < v.notBefore {
		return false // may predate the schedule: the per-slot path asks the spec's history
	}
	// A one-shot without a record whose record was deleted (a marker was
	// seen), or late beyond what the duplicate window remembers: the
	// per-slot path looks its slot up in the ledger first. So does a
	// recurring schedule without a record planned further back than the
	// window (mayHaveFired).
	if en.hasRecord() {
		return true
	}
	late := now.Sub(time.Unix(0, v.slot))
	if en.target.at == 0 {
		return late < l.e.replayLimit()
	}
	return en.stateRev == 0 && late < l.e.replayLimit()
}

// stillBatchable is batchable for en, queued with verdict v at take: the
// decider is asked again only when what it read of en changed since (or
// en's spec names a calendar, which a calendar change recompiles in
// place); the rest of batchable is checked again in any case.
func (b *batcher) stillBatchable(en *entry, v verdict, now time.Time) bool {
	if v.slot == 0 || en.calendar || v.stateRev != en.stateRev || v.specRev != en.specRev || v.settled != en.settled || v.checked != en.checked {
		return b.batchable(en, now)
	}
	return b.mayBatch(en) && b.slotAllowed(en, v, now)
}

// queue puts a due, batchable en on its shard's next window.
func (b *batcher) queue(en *entry, shard int) { b.queueJudged(en, shard, verdict{}) }

// queueJudged queues en with the verdict take found it batchable on (a
// zero verdict: windowItems decides again).
func (b *batcher) queueJudged(en *entry, shard int, v verdict) {
	en.queued = true
	b.pend[shard] = append(b.pend[shard], pending{en: en, v: v})
}

// pending is a schedule on a window queue and its verdict.
type pending struct {
	en *entry
	v  verdict
}

// sendWindows hands out the shards' next windows, then the window checks
// asked for meanwhile (by dispatch, or by a window queue whose shard must
// be checked first), as long as workers are free. When they are not, a
// worker's result brings the loop back to dispatch, which sends the
// checks first.
func (b *batcher) sendWindows(now time.Time) {
	l := b.l
	var bundle bundler
	for shard, queued := range b.pend {
		if l.work.full() && !bundle.fits(len(queued)) {
			if bundle.open() {
				continue // another shard's few slots may join the bundle
			}
			break
		}
		if b.firing[shard] || b.checking[shard] {
			continue // the job's result brings the loop back here
		}
		owned, checked := b.gate(shard)
		if !owned || !checked {
			b.unqueue(shard, owned)
			continue
		}
		items, rest := b.windowItems(queued, now)
		if len(rest) == 0 {
			delete(b.pend, shard)
		} else {
			b.pend[shard] = rest
		}
		if len(items) == 0 {
			continue
		}
		b.firing[shard] = true
		job := &fireJob{shard: shard, mark: b.mark[shard], items: items}
		if !b.bundling() || !bundle.add(&l.work, job) {
			l.work.sendWindow(job)
		}
	}
	bundle.send(&l.work)
	b.sendChecks(now)
}

// sendChecks hands out the window checks asked for, as long as workers
// are free. dispatch calls it first, before any slot: a check holds a
// whole shard back, and when due slots kept every worker busy (a fleet
// restarted on a starved box), checks sent only after them never found a
// free worker, and their shards' schedules waited, held, for ever. The
// queued windows come next, for the same reason.
func (b *batcher) sendChecks(now time.Time) {
	l := b.l
	for shard, gen := range b.want {
		if l.work.full() {
			return
		}
		if b.checked[shard] == gen {
			// Asked for again while the tenure's check ran (gate asks
			// until the result is in): done. Sent again, that check ran
			// beside the windows its result let go, and its read from
			// before their writes set the window mark back: the next
			// window's claim conflicted with the instance's own record.
			delete(b.want, shard)
			continue
		}
		if b.checking[shard] || b.writing(shard) || now.Before(b.retryAt[shard]) {
			// A check beside the shard's own window job in flight read
			// the window record or the ended lists from before that
			// job's write: its result then set the shard's window mark
			// back (the next window's claim conflicted with its own
			// record) and dropped the list just written. The job's
			// result brings the loop back here.
			continue
		}
		delete(b.want, shard)
		if g, ok := l.e.leases.generation(shard); !ok || g != gen {
			// Not owned now, or owned anew: the schedules waiting for
			// this check go back through dispatch, which parks them or
			// asks for the new tenure's check. Never left waiting.
			b.releaseHeld(shard)
			l.e.step(StepWindowCheckDeferred)
			continue
		}
		b.checking[shard] = true
		l.work.sendWindow(&checkJob{shard: shard, gen: gen})
	}
}

// sendRecords hands out the deferred state records (see deferRecords),
// a window's worth per shard at a time, when no due schedule waits for a
// worker, or once the oldest of a shard has waited Config.RecordLag; all
// of them when all is set (a stop).
func (b *batcher) sendRecords(now time.Time, all bool) {
	l := b.l
	if len(b.deferred) == 0 {
		return
	}
	idle := all || !l.e.test.recordsOnLag && b.idle(now)
	for shard, items := range b.deferred {
		if l.work.full() {
			return
		}
		if b.recording[shard] || b.checking[shard] || !idle && now.Before(b.deferredAt[shard].Add(l.e.cfg.RecordLag)) {
			continue
		}
		n := min(len(items), max(b.limit, 1))
		batch := items[:n:n]
		if n == len(items) {
			delete(b.deferred, shard)
			delete(b.deferredAt, shard)
		} else {
			b.deferred[shard] = items[n:]
		}
		b.recording[shard] = true
		l.work.sendWindow(&recordJob{shard: shard, records: batch, lists: l.listsAllowed()})
	}
}

// idle reports whether no fire waits: nothing due in the index, no
// schedule waiting for its window, and no window being fired.
func (b *batcher) idle(now time.Time) bool {
	l := b.l
	if _, due, ok := l.index.Peek(); ok && !due.After(now) || len(b.pend) > 0 {
		return false
	}
	for _, firing := range b.firing {
		if firing {
			return false
		}
	}
	return true
}

// nextRecord is when the oldest deferred state record must be written
// however busy the loop is (zero: none waits).
func (b *batcher) nextRecord() time.Time {
	l := b.l
	var first time.Time
	for shard, at := range b.deferredAt {
		if b.recording[shard] || b.checking[shard] {
			continue // the job's result wakes the loop
		}
		if at = at.Add(l.e.cfg.RecordLag); first.IsZero() || at.Before(first) {
			first = at
		}
	}
	return first
}

// windowItems takes the next window's schedules from queued (at most
// windows.limit, and a record of at most maxWindowBytes) and returns
// those left for later. A schedule no longer batchable goes back to the
// due index.
func (b *batcher) windowItems(queued []pending, now time.Time) (items []slotJob, rest []pending) {
	l := b.l
	items = make([]slotJob, 0, min(len(queued), b.limit)) // a job is ~300 bytes: grown, a window's would be copied 9 times
	size := 0
	for i, p := range queued {
		en := p.en
		if len(items) >= b.limit || size >= maxWindowBytes {
			return items, queued[i:]
		}
		if !en.queued {
			continue
		}
		en.queued = false
		if en.busy || !l.known(en) {
			continue
		}
		if !b.stillBatchable(en, p.v, now) {
			l.schedule(en)
			continue
		}
		en.busy = true
		size += len(en.id) + 96
		items = append(items, l.snapshot(en, now))
	}
	return items, nil
}

// unqueue takes the schedules waiting for shard's window off it: parked
// when the shard is no longer owned (a lease change unparks them), held
// for the shard's check when it is owned but to be checked first (the
// check releases them).
func (b *batcher) unqueue(shard int, owned bool) {
	l := b.l
	for _, p := range b.pend[shard] {
		en := p.en
		if !en.queued {
			continue
		}
		en.queued = false
		if owned {
			b.holdFor(en.id, shard)
		} else {
			l.parked[en.id] = true
		}
	}
	delete(b.pend, shard)
}

// snapshot is en's job.
func (l *loop) snapshot(en *entry, now time.Time) slotJob {
	j := slotJob{id: en.id, written: unixNano(en.written), target: en.target, compiled: en.compiled, state: en.current(), stateRev: en.stateRev,
		planned: !en.hasRecord(), specRev: en.specRev, settled: en.settled, checked: en.checked, dones: l.waiting[en.id], uncounted: l.uncounted[en.id]}
	j.verify = l.mayLag(j.target, j.state, j.planned, kvstore.ShardOf(en.id, l.e.shards), now) || l.mayHaveFired(j, now)
	j.lag = l.win.mayLeaveBehind(&j)
	if ref, ok := l.listed(en); ok {
		j.listed = &ref
	}
	return j
}

// releaseHeld sends the schedules held for shard's check back to the due
// index (dispatch then parks them, or holds them for the current tenure's
// check).
func (b *batcher) releaseHeld(shard int) {
	l := b.l
	held := b.held[shard]
	delete(b.held, shard)
	for _, id := range held {
		if en := l.entries[id]; en != nil {
			l.schedule(en)
		}
	}
}

// hold keeps a due schedule of a shard whose window record is not checked
// yet until it is (windowChecked).
func (b *batcher) holdFor(id string, shard int) {
	b.held[shard] = append(b.held[shard], id)
}

// undemoted is win with only the slots whose state, as this instance
// knows it, does not show them (the worker reads again on a conflict).
func (b *batcher) undemoted(win jsstore.Window) jsstore.Window {
	l := b.l
	out := win
	out.Slots = nil
	for _, s := range win.Slots {
		if en := l.entries[s.Schedule]; en != nil && en.hasRecord() && shows(*en.view(&l.scratch), win.Claim(s)) {
			continue
		}
		if en := l.entries[s.Schedule]; en != nil {
			if ref, ok := l.listedEnds(en); ok && ref.slot == s.Slot.UnixNano() {
				continue // its ended list stands for its record
			}
		}
		out.Slots = append(out.Slots, s)
	}
	return out
}

// knownOf are the loop's snapshots of win's schedules whose state it has
// (stored or planned), by id.
func (b *batcher) knownOf(win jsstore.Window) map[string]slotJob {
	l := b.l
	out := make(map[string]slotJob, len(win.Slots))
	now := l.e.cfg.Clock.Now()
	for _, s := range win.Slots {
		en := l.entries[s.Schedule]
		if en != nil && en.lazy {
			l.load.compileLazy(en) // a recent claim of it is checked now
		}
		if en != nil && l.known(en) && !en.busy {
			out[s.Schedule] = l.snapshot(en, now)
		}
	}
	return out
}

// nextRetry is the earliest time a failed window check is retried (zero:
// none).
func (b *batcher) nextRetry() time.Time {
	var first time.Time
	for shard, at := range b.retryAt {
		if b.checking[shard] || b.writing(shard) {
			continue // the job's result wakes the loop (sendChecks)
		}
		if _, want := b.want[shard]; want && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	return first
}
