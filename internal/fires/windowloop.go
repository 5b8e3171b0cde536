package fires

import (
	"errors"
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// windows is the loop's side of window claims: which shards' window
// records were checked in the current lease tenure, the last record each
// shard's windows were written over, and the due schedules waiting for
// their shard's next window. Only the loop goroutine touches it.
type windows struct {
	checked  map[int]uint64 // shard -> lease generation whose record was checked
	want     map[int]uint64 // shards to check, with the generation
	checking map[int]bool   // a check or demote job is out
	retryAt  map[int]time.Time
	mark     map[int]windowMark
	firing   map[int]bool // a window of the shard is with a worker
	// pend are the due schedules waiting for the shard's next window: an
	// entry leaves when it is taken or no longer queued (an entry is
	// unqueued before it is forgotten, see loop.forget).
	pend map[int][]*entry
	held map[int][]string // due schedules waiting for the shard's check
	// deferred are fired one-shots whose state records are still to be
	// written, by shard, since deferredAt (the oldest); recording: a
	// windowRecord job of the shard is with a worker.
	deferred   map[int][]*windowItem
	deferredAt map[int]time.Time
	recording  map[int]bool
	// unrecorded are the schedules of deferred (busy until written).
	unrecorded map[string]bool
	// recordFailed: the last windowRecord job failed; a stop then
	// writes no more of them (the next decisions find the fires).
	recordFailed bool
	// limit is the most slots of a window: Config.WindowSlots, halved
	// each time the server refuses a window record for its size.
	limit int
}

func newWindows(limit int) windows {
	return windows{limit: limit, checked: map[int]uint64{}, want: map[int]uint64{}, checking: map[int]bool{}, retryAt: map[int]time.Time{},
		mark: map[int]windowMark{}, firing: map[int]bool{}, pend: map[int][]*entry{}, held: map[int][]string{},
		deferred: map[int][]*windowItem{}, deferredAt: map[int]time.Time{}, recording: map[int]bool{}, unrecorded: map[string]bool{}}
}

// writing reports whether a worker holds a window fire or a record job of
// shard: until its result, the shard's window record and ended lists may
// change under a check (sendChecks).
func (w *windows) writing(shard int) bool { return w.firing[shard] || w.recording[shard] }

// windowRetry is how soon a failed check of a window record is tried again.
const windowRetry = time.Second

// gate reports whether schedules of shard may be dispatched: this
// instance owns the shard and has checked its window record in the
// current tenure. Otherwise the check is asked for.
func (l *loop) gate(shard int) (owned, checked bool) {
	gen, ok := l.e.leases.generation(shard)
	if !ok {
		return false, false
	}
	if l.win.checked[shard] == gen {
		return true, true
	}
	l.win.want[shard] = gen
	return true, false
}

// batchable reports whether en's due slot may go into a window: a plain
// regular slot (no operator request, pause, overlap tracking, catch-up or
// unsettled claim) that is on time. The worker's decision has the last
// word (plainClaim); a slot it declines goes through the per-slot path.
func (l *loop) batchable(en *entry, now time.Time) bool {
	if l.e.cfg.WindowSlots < 1 || en.noWindow || en.failures > 0 || en.compiled.policy().Overlap != kvstore.OverlapAllow ||
		len(l.waiting[en.id]) > 0 || l.uncounted[en.id] > 0 {
		return false
	}
	st := en.view(&l.scratch)
	if st == nil || st.Plan != en.compiled.Plan || st.Ended || st.Next.IsZero() || st.Next.After(now) ||
		len(st.Triggers) > 0 || st.Backfill != nil || st.Paused != nil || st.SkipNext > 0 || st.Running != nil {
		return false
	}
	if c := st.Claim; c != nil && c.Token != en.settled && !c.Settled() {
		return false
	}
	threshold := en.compiled.policy().MisfireThreshold
	if threshold <= 0 {
		threshold = l.e.cfg.MisfireThreshold
	}
	late := now.Sub(st.Next)
	if late > threshold {
		return false
	}
	if written := unixNano(en.written); !written.IsZero() && st.Next.Before(written.Add(-threshold)) {
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
	if en.target.at == 0 {
		return late < l.e.replayLimit()
	}
	return en.stateRev == 0 && late < l.e.replayLimit()
}

// queue puts a due, batchable en on its shard's next window.
func (l *loop) queue(en *entry, shard int) {
	en.queued = true
	l.win.pend[shard] = append(l.win.pend[shard], en)
}

// sendWindows hands out the shards' next windows, then the window checks
// asked for meanwhile (by dispatch, or by a window queue whose shard must
// be checked first), as long as workers are free. When they are not, a
// worker's result brings the loop back to dispatch, which sends the
// checks first.
func (l *loop) sendWindows(now time.Time) {
	for shard, queued := range l.win.pend {
		if l.work.full() {
			return
		}
		if l.win.firing[shard] || l.win.checking[shard] {
			continue // the job's result brings the loop back here
		}
		owned, checked := l.gate(shard)
		if !owned || !checked {
			l.unqueue(shard, owned)
			continue
		}
		items, rest := l.windowItems(queued, now)
		if len(rest) == 0 {
			delete(l.win.pend, shard)
		} else {
			l.win.pend[shard] = rest
		}
		if len(items) == 0 {
			continue
		}
		l.win.firing[shard] = true
		l.work.sendWindow(&windowJob{kind: windowFire, shard: shard, mark: l.win.mark[shard], items: items})
	}
	l.sendChecks(now)
}

// sendChecks hands out the window checks asked for, as long as workers
// are free. dispatch calls it first, before any slot: a check holds a
// whole shard back, and when due slots kept every worker busy (a fleet
// restarted on a starved box), checks sent only after them never found a
// free worker, and their shards' schedules waited, held, for ever. The
// queued windows come next, for the same reason.
func (l *loop) sendChecks(now time.Time) {
	for shard, gen := range l.win.want {
		if l.work.full() {
			return
		}
		if l.win.checked[shard] == gen {
			// Asked for again while the tenure's check ran (gate asks
			// until the result is in): done. Sent again, that check ran
			// beside the windows its result let go, and its read from
			// before their writes set the window mark back: the next
			// window's claim conflicted with the instance's own record.
			delete(l.win.want, shard)
			continue
		}
		if l.win.checking[shard] || l.win.writing(shard) || now.Before(l.win.retryAt[shard]) {
			// A check beside the shard's own window job in flight read
			// the window record or the ended lists from before that
			// job's write: its result then set the shard's window mark
			// back (the next window's claim conflicted with its own
			// record) and dropped the list just written. The job's
			// result brings the loop back here.
			continue
		}
		delete(l.win.want, shard)
		if g, ok := l.e.leases.generation(shard); !ok || g != gen {
			// Not owned now, or owned anew: the schedules waiting for
			// this check go back through dispatch, which parks them or
			// asks for the new tenure's check. Never left waiting.
			l.releaseHeld(shard)
			l.e.step(StepWindowCheckDeferred)
			continue
		}
		l.win.checking[shard] = true
		l.work.sendWindow(&windowJob{kind: windowCheck, shard: shard, gen: gen})
	}
}

// sendRecords hands out the deferred state records (see deferRecords),
// a window's worth per shard at a time, when no due schedule waits for a
// worker, or once the oldest of a shard has waited Config.RecordLag; all
// of them when all is set (a stop).
func (l *loop) sendRecords(now time.Time, all bool) {
	if len(l.win.deferred) == 0 {
		return
	}
	idle := all || !l.e.cfg.recordsOnLag && l.idle(now)
	for shard, items := range l.win.deferred {
		if l.work.full() {
			return
		}
		if l.win.recording[shard] || l.win.checking[shard] || !idle && now.Before(l.win.deferredAt[shard].Add(l.e.cfg.RecordLag)) {
			continue
		}
		n := min(len(items), max(l.win.limit, 1))
		batch := items[:n:n]
		if n == len(items) {
			delete(l.win.deferred, shard)
			delete(l.win.deferredAt, shard)
		} else {
			l.win.deferred[shard] = items[n:]
		}
		l.win.recording[shard] = true
		l.work.sendWindow(&windowJob{kind: windowRecord, shard: shard, records: batch, lists: l.listsAllowed()})
	}
}

// idle reports whether no fire waits: nothing due in the index, no
// schedule waiting for its window, and no window being fired.
func (l *loop) idle(now time.Time) bool {
	if _, due, ok := l.index.Peek(); ok && !due.After(now) || len(l.win.pend) > 0 {
		return false
	}
	for _, firing := range l.win.firing {
		if firing {
			return false
		}
	}
	return true
}

// nextRecord is when the oldest deferred state record must be written
// however busy the loop is (zero: none waits).
func (l *loop) nextRecord() time.Time {
	var first time.Time
	for shard, at := range l.win.deferredAt {
		if l.win.recording[shard] || l.win.checking[shard] {
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
func (l *loop) windowItems(queued []*entry, now time.Time) (items []slotJob, rest []*entry) {
	items = make([]slotJob, 0, min(len(queued), l.win.limit)) // a job is ~300 bytes: grown, a window's would be copied 9 times
	size := 0
	for i, en := range queued {
		if len(items) >= l.win.limit || size >= maxWindowBytes {
			return items, queued[i:]
		}
		if !en.queued {
			continue
		}
		en.queued = false
		if en.busy || !l.known(en) {
			continue
		}
		if !l.batchable(en, now) {
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
func (l *loop) unqueue(shard int, owned bool) {
	for _, en := range l.win.pend[shard] {
		if !en.queued {
			continue
		}
		en.queued = false
		if owned {
			l.holdFor(en.id, shard)
		} else {
			l.parked[en.id] = true
		}
	}
	delete(l.win.pend, shard)
}

// snapshot is en's job.
func (l *loop) snapshot(en *entry, now time.Time) slotJob {
	j := slotJob{id: en.id, written: unixNano(en.written), target: en.target, compiled: en.compiled, state: en.current(), stateRev: en.stateRev,
		planned: !en.hasRecord(), specRev: en.specRev, settled: en.settled, checked: en.checked, dones: l.waiting[en.id], uncounted: l.uncounted[en.id]}
	j.verify = l.mayLag(j.target, j.state, j.planned, kvstore.ShardOf(en.id, l.e.shards), now) || l.mayHaveFired(j, now)
	j.lag = l.mayLeaveBehind(&j)
	if ref, ok := l.listed(en); ok {
		j.listed = &ref
	}
	return j
}

// onWindowResult takes a window job's result.
func (l *loop) onWindowResult(wr windowResult) {
	l.work.busy--
	l.onWindow(&wr)
}

// onWindow takes a window job's outcome.
func (l *loop) onWindow(wr *windowResult) {
	now := l.e.cfg.Clock.Now()
	switch wr.kind {
	case windowFire:
		l.win.firing[wr.shard] = false
		if wr.mark.rev > 0 {
			l.win.mark[wr.shard] = wr.mark
		}
		switch {
		case wr.tooLarge:
			l.win.limit = max(1, l.win.limit/2)
			l.e.log.Warn("window record refused for its size; its slots go per slot and windows are made smaller", "shard", wr.shard, "window_slots", l.win.limit, "err", wr.err)
		case errors.Is(wr.err, errNotOwned):
			l.e.log.Debug("window stopped at the lease guard", "shard", wr.shard, "err", wr.err)
			l.e.step(StepGuardClosed)
		case wr.err != nil:
			l.e.log.Warn("window claim did not finish; its shard's window record is checked again", "shard", wr.shard, "err", wr.err)
		}
		if wr.recheck {
			delete(l.win.checked, wr.shard)
		}
		for _, id := range wr.declined {
			if en := l.entries[id]; en != nil {
				en.noWindow = true
			}
		}
		for i := range wr.results {
			l.applyResult(wr.results[i])
		}
		if len(wr.deferred) > 0 {
			if len(l.win.deferred[wr.shard]) == 0 {
				l.win.deferredAt[wr.shard] = now
			}
			l.win.deferred[wr.shard] = append(l.win.deferred[wr.shard], wr.deferred...)
			for _, it := range wr.deferred {
				l.win.unrecorded[it.j.id] = true // fired: not overdue (health)
			}
		}
	case windowEnded:
		l.onEnded(wr)
	case windowRecord:
		l.win.recording[wr.shard], l.win.recordFailed = false, false
		if wr.wrote != nil {
			l.addList(*wr.wrote)
		}
		switch {
		case errors.Is(wr.err, errNotOwned):
			l.e.log.Debug("deferred state records stopped at the lease guard", "shard", wr.shard, "err", wr.err)
			l.e.step(StepGuardClosed)
		case wr.err != nil:
			// The schedules whose record was not written are decided
			// again from what they had: their fires are found (see
			// deferRecords).
			l.e.log.Warn("deferred state records not all written; their schedules are decided again", "shard", wr.shard, "err", wr.err)
			l.win.recordFailed = true
		}
		for i := range wr.results {
			l.applyResult(wr.results[i])
		}
		l.behindUnwritten(wr.results, wr.shard, now)
	case windowCheck:
		l.win.checking[wr.shard] = false
		if wr.err != nil {
			l.windowCheckFailed(wr, now)
			return
		}
		l.win.mark[wr.shard] = wr.mark
		l.loadLists(wr.shard, wr.lists)
		if wr.found != nil {
			if demote := l.undemoted(*wr.found); len(demote.Slots) > 0 {
				l.win.checking[wr.shard] = true
				l.work.sendWindow(&windowJob{kind: windowDemote, shard: wr.shard, gen: wr.gen, win: demote, known: l.knownOf(demote)})
				return
			}
		}
		l.windowChecked(wr)
	case windowDemote:
		l.win.checking[wr.shard] = false
		if wr.err != nil {
			l.windowCheckFailed(wr, now)
			return
		}
		l.windowChecked(wr)
	}
}

// windowCheckFailed retries a shard's check after windowRetry.
func (l *loop) windowCheckFailed(wr *windowResult, now time.Time) {
	l.e.log.Warn("window record check failed; its shard waits and the check is retried", "shard", wr.shard, "retry_in", windowRetry, "err", wr.err)
	l.e.step(StepWindowCheckFailed)
	l.win.want[wr.shard] = wr.gen
	l.win.retryAt[wr.shard] = now.Add(windowRetry)
}

// windowChecked lets the shard's schedules be dispatched again.
func (l *loop) windowChecked(wr *windowResult) {
	l.win.checked[wr.shard] = wr.gen
	delete(l.win.retryAt, wr.shard)
	l.releaseHeld(wr.shard)
}

// releaseHeld sends the schedules held for shard's check back to the due
// index (dispatch then parks them, or holds them for the current tenure's
// check).
func (l *loop) releaseHeld(shard int) {
	held := l.win.held[shard]
	delete(l.win.held, shard)
	for _, id := range held {
		if en := l.entries[id]; en != nil {
			l.schedule(en)
		}
	}
}

// hold keeps a due schedule of a shard whose window record is not checked
// yet until it is (windowChecked).
func (l *loop) holdFor(id string, shard int) {
	l.win.held[shard] = append(l.win.held[shard], id)
}

// undemoted is win with only the slots whose state, as this instance
// knows it, does not show them (the worker reads again on a conflict).
func (l *loop) undemoted(win kvstore.Window) kvstore.Window {
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
func (l *loop) knownOf(win kvstore.Window) map[string]slotJob {
	out := make(map[string]slotJob, len(win.Slots))
	now := l.e.cfg.Clock.Now()
	for _, s := range win.Slots {
		en := l.entries[s.Schedule]
		if en != nil && en.lazy {
			l.compileLazy(en) // a recent claim of it is checked now
		}
		if en != nil && l.known(en) && !en.busy {
			out[s.Schedule] = l.snapshot(en, now)
		}
	}
	return out
}

// nextRetry is the earliest time a failed window check is retried (zero:
// none).
func (l *loop) nextRetry() time.Time {
	var first time.Time
	for shard, at := range l.win.retryAt {
		if l.win.checking[shard] || l.win.writing(shard) {
			continue // the job's result wakes the loop (sendChecks)
		}
		if _, want := l.win.want[shard]; want && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	return first
}
