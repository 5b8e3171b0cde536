package fires

import (
	"errors"
	"time"
)

// apply takes a window job's result back (the loop's one point for all
// of them), by the result's type.
func (b *batcher) apply(wr windowResult) {
	b.l.work.busy--
	b.onWindow(wr)
}

// onWindow takes a window job's outcome.
func (b *batcher) onWindow(wr windowResult) {
	now := b.l.e.cfg.Clock.Now()
	switch r := wr.(type) {
	case *fireResult:
		b.onFire(r, now)
	case *bundleResult:
		for _, fr := range r.fires {
			b.onFire(fr, now)
		}
	case *recordResult:
		b.onRecord(r, now)
	case *checkResult:
		b.onCheck(r, now)
	case *demoteResult:
		b.checking[r.shard] = false
		for i := range r.wrote {
			b.l.adopt(r.wrote[i])
		}
		if r.err != nil {
			b.windowCheckFailed(r.shard, r.gen, r.err, now)
			return
		}
		b.windowChecked(r.shard, r.gen)
	case *sweepResult:
		b.l.onEnded(r)
	}
}

// onFire takes a window fire's outcome: the shard's new window mark, the
// slots' results, the declined slots (per slot from now on), and the
// one-shots whose records wait (deferred).
func (b *batcher) onFire(wr *fireResult, now time.Time) {
	l := b.l
	b.firing[wr.shard] = false
	if wr.mark.rev > 0 {
		b.mark[wr.shard] = wr.mark
	}
	switch {
	case wr.tooLarge:
		b.limit = max(1, b.limit/2)
		l.e.log.Warn("window record refused for its size; its slots go per slot and windows are made smaller", "shard", wr.shard, "window_slots", b.limit, "err", wr.err)
	case errors.Is(wr.err, errNotOwned):
		l.e.log.Debug("window stopped at the lease guard", "shard", wr.shard, "err", wr.err)
		l.e.step(StepGuardClosed)
	case wr.err != nil:
		l.e.log.Warn("window claim did not finish; its shard's window record is checked again", "shard", wr.shard, "err", wr.err)
	}
	if wr.recheck {
		delete(b.checked, wr.shard)
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
		if len(b.deferred[wr.shard]) == 0 {
			b.deferredAt[wr.shard] = now
		}
		b.deferred[wr.shard] = append(b.deferred[wr.shard], wr.deferred...)
		for _, it := range wr.deferred {
			b.unrecorded[it.j.id] = true // fired: not overdue (health)
		}
	}
}

// onRecord takes a record job's outcome: the ended list it wrote, the
// records' results, and the records left behind it did not write
// (requeued, behindUnwritten).
func (b *batcher) onRecord(wr *recordResult, now time.Time) {
	l := b.l
	b.recording[wr.shard], b.recordFailed = false, false
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
		b.recordFailed = true
	}
	for i := range wr.results {
		l.applyResult(wr.results[i])
	}
	b.behindUnwritten(wr.results, wr.shard, now)
}

// onCheck takes a shard's check: its window mark and ended lists, and
// either the demotion of the slots of its window record that no state
// record shows, or the shard's release (windowChecked).
func (b *batcher) onCheck(wr *checkResult, now time.Time) {
	l := b.l
	b.checking[wr.shard] = false
	if wr.err != nil {
		b.windowCheckFailed(wr.shard, wr.gen, wr.err, now)
		return
	}
	b.mark[wr.shard] = wr.mark
	l.loadLists(wr.shard, wr.lists)
	if wr.found != nil {
		if demote := b.undemoted(*wr.found); len(demote.Slots) > 0 {
			b.checking[wr.shard] = true
			l.work.sendWindow(&demoteJob{shard: wr.shard, gen: wr.gen, win: demote, known: b.knownOf(demote)})
			return
		}
	}
	b.windowChecked(wr.shard, wr.gen)
}

// windowCheckFailed retries shard's check for tenure gen after
// windowRetry.
func (b *batcher) windowCheckFailed(shard int, gen uint64, err error, now time.Time) {
	l := b.l
	l.e.log.Warn("window record check failed; its shard waits and the check is retried", "shard", shard, "retry_in", windowRetry, "err", err)
	l.e.step(StepWindowCheckFailed)
	b.want[shard] = gen
	b.retryAt[shard] = now.Add(windowRetry)
}

// windowChecked lets the shard's schedules be dispatched again.
func (b *batcher) windowChecked(shard int, gen uint64) {
	b.checked[shard] = gen
	delete(b.retryAt, shard)
	b.releaseHeld(shard)
}
