package fires

import (
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Records left behind (docs/protocol.md, "Records left behind").
//
// With Config.StateInterval set, a window's plain fire of a recurring
// schedule whose record this instance wrote in its tenure is not
// recorded: the fire stream holds it, the window record lists it, and the
// loop keeps the schedule's state, advanced, in memory. The record is
// written once the interval has passed since its first unrecorded fire,
// with every fire since (a pipelined CAS per schedule, merged on a
// conflict), at a graceful stop, and at once when a fleet member does not
// announce that it checks such records against the stream. A write by
// anyone else meanwhile (an operator's pause, say) is merged into the
// state in memory, which keeps what the write set and the fires it did
// not see. Whoever decides such a record next without this instance's
// memory (a takeover, a restart) reads the schedule's last fire from the
// stream first (lagging.go). So a steady schedule costs one state write
// per interval instead of one per fire, and one echo of it to every
// instance.
//
// A shard's records wait a share of the interval of their own
// (behindDelay), from half of it to all of it, so that the records of a
// fleet whose schedules began firing together are not all written in the
// same turn of the loop, interval after interval: each such burst held a
// whole fleet's schedules out of the due index while it was written
// (10,000 schedules every second: a p99 lateness of 33-113 ms and a
// maximum of 240-390 ms, against 9 and 44 ms with every fire recorded).

// lagState are the schedules whose state records a window left behind
// their fires (marks), and their records to write (queue), by shard,
// oldest first. A shard whose last record job failed sends none before
// retry (behindUnwritten); held: a shard whose due records are all of
// schedules in a job or on a window, at the batcher's last look
// (sendBehind), which the timer does not wait for (nextBehind). The
// batcher keeps it; only the loop goroutine touches it.
type lagState struct {
	marks map[string]lagMark
	queue map[int][]lagRef
	retry map[int]time.Time
	held  map[int]bool
}

func newLagState() lagState {
	return lagState{marks: make(map[string]lagMark), queue: make(map[int][]lagRef), retry: make(map[int]time.Time), held: make(map[int]bool)}
}

// notBehind: schedule id's record was written (or deleted) from what
// the loop knows, so it is no longer behind its fires.
func (b *batcher) notBehind(id string) { delete(b.lag.marks, id) }

// behindFlushed reports whether no record of shard is behind its fires
// or being written (a hand-back waits for that).
func (b *batcher) behindFlushed(shard int) bool {
	if b.recording[shard] {
		return false
	}
	for _, ref := range b.lag.queue[shard] { // (it may hold references already written)
		if m, ok := b.lag.marks[ref.id]; ok && m.since.Equal(ref.since) {
			return false
		}
	}
	return true
}

// lagMark is a schedule whose record is behind its fires: since its
// first unrecorded fire, fires of them.
type lagMark struct {
	since time.Time
	fires uint64
}

// lagRef is a schedule in its shard's queue of records to write, with the
// lagMark.since it was queued for.
type lagRef struct {
	id    string
	since time.Time
}

// mayLeaveBehind reports whether a window may leave j's record behind its
// fire: a recurring schedule with a record this instance wrote in its
// tenure (a settled window claim, not to be checked: see mayLag), while
// every member checks such records.
func (b *batcher) mayLeaveBehind(j *slotJob) bool {
	l := b.l
	if l.e.cfg.StateInterval <= 0 || j.verify || j.planned || j.at != 0 || j.state == nil || !l.e.leases.fleetReads() {
		return false
	}
	c := j.state.Claim
	return c != nil && c.Window != "" && c.SlotID == "" && c.Settled() && j.state.Owner == l.e.cfg.Instance &&
		(len(l.hand.shards) == 0 || !l.handingBack(l.shardOf(j.id)))
}

// leaveBehind takes the items whose records may stay behind out of items
// (their fire published and acknowledged, not a duplicate) and hands
// their advanced state back unrecorded.
func (w worker) leaveBehind(items []*windowItem, out *fireResult) []*windowItem {
	rest := items[:0:0]
	for _, it := range items {
		if !it.j.lag || it.ack == nil || it.ack.Duplicate || it.claim.Seq == 0 {
			rest = append(rest, it)
			continue
		}
		st := it.st
		st.Claim = it.claimCopy()
		it.r.state, it.r.lagged = &st, true
		it.r.settle(it.claim.Token)
		out.results = append(out.results, it.r)
	}
	return rest
}

// lagged takes en's state left behind by a window: kept in memory, its
// record queued to be written once the interval has passed.
func (b *batcher) lagged(en *entry, st *kvstore.State, now time.Time) {
	l := b.l
	en.setState(st, l.e.cfg.Instance)
	m, ok := b.lag.marks[en.id]
	if !ok {
		m.since = now
		shard := kvstore.ShardOf(en.id, l.e.shards)
		b.lag.queue[shard] = append(b.lag.queue[shard], lagRef{id: en.id, since: now})
	}
	m.fires++
	b.lag.marks[en.id] = m
}

// mergeBehind is st, a state record someone else wrote while en's record
// was behind its fires, with those fires merged in: the next slot, the
// claim on the last fire and the count, unless st shows that fire
// already (then en's record is no longer behind).
func (b *batcher) mergeBehind(en *entry, st *kvstore.State) {
	m, ok := b.lag.marks[en.id]
	if !ok {
		return
	}
	mine := en.current()
	if mine == nil || mine.Claim == nil || shows(*st, *mine.Claim) {
		delete(b.lag.marks, en.id)
		return
	}
	st.Next, st.Ended, st.NextReason, st.NextNominal, st.Plan = mine.Next, mine.Ended, mine.NextReason, mine.NextNominal, mine.Plan
	c := *mine.Claim
	st.Claim = &c
	st.Fires += m.fires
	st.UpdatedAt, st.Owner = mine.UpdatedAt, mine.Owner
}

// sendBehind hands out the records left behind whose wait has passed
// (behindDelay; all of them when all is set, or when a member does not check records
// against the stream; a shard's all when it is being handed back), a
// window's worth per shard at a time, as long as workers are free. A
// shard this instance does not own keeps its queue for when it owns it
// again (its new owner's record, once applied, ends the marks its fires
// show: mergeBehind); one whose last record job failed waits for
// lagRetry.
func (b *batcher) sendBehind(now time.Time, all bool) {
	l := b.l
	clear(b.lag.held) // this call's look only (nextBehind, in the same turn)
	if len(b.lag.queue) == 0 {
		return
	}
	all = all || !l.e.leases.fleetReads()
	for shard, q := range b.lag.queue {
		if l.work.full() {
			return
		}
		if len(q) == 0 || b.shardBusy(shard) {
			continue
		}
		// The times first: this runs at every turn of the loop, for
		// every shard with a queue, and a lease lookup reads the clock.
		due := all || len(l.hand.shards) > 0 && l.handingBack(shard)
		wait := b.behindDelay(shard)
		if !due && now.Before(q[0].since.Add(wait)) || !b.behindSendable(shard, now) {
			continue
		}
		var items []*windowItem
		var later []lagRef
		for len(q) > 0 && len(items) < max(b.limit, 1) {
			ref := q[0]
			if !due && now.Before(ref.since.Add(wait)) {
				break
			}
			q = q[1:]
			m, ok := b.lag.marks[ref.id]
			en := l.entries[ref.id]
			if !ok || !m.since.Equal(ref.since) || en == nil {
				continue // written meanwhile, or gone
			}
			if en.busy || en.queued {
				later = append(later, ref) // its window, or its job, first
				continue
			}
			j := l.snapshot(en, now)
			if j.state == nil || j.state.Claim == nil {
				delete(b.lag.marks, ref.id)
				continue
			}
			l.index.Remove(en) // busy: out of the index until its result (schedule)
			en.busy = true
			r := slotResult{id: j.id, state: j.state, stateRev: j.stateRev, planned: j.planned, settled: j.settled, checked: j.checked}
			items = append(items, &windowItem{j: &j, r: r, st: *j.state, claim: *j.state.Claim, fired: m.fires})
		}
		if len(items) == 0 && len(later) > 0 && len(q) == 0 {
			// Every record due is of a schedule in a job or on a window:
			// that job's result wakes the loop, not the timer (which,
			// set for these past times, spun the loop until then).
			b.lag.held[shard] = true
		}
		if q = append(q, later...); len(q) == 0 {
			delete(b.lag.queue, shard)
		} else {
			b.lag.queue[shard] = q
		}
		if len(items) > 0 {
			b.recording[shard] = true
			l.work.sendWindow(&recordJob{shard: shard, records: items})
		}
	}
}

// nextBehind is when the next record left behind is to be written (zero:
// none).
func (b *batcher) nextBehind() time.Time {
	l := b.l
	var first time.Time
	reads := l.e.leases.fleetReads()
	for shard, q := range b.lag.queue {
		if len(q) == 0 || b.shardBusy(shard) || b.lag.held[shard] {
			continue
		}
		at := q[0].since.Add(b.behindDelay(shard))
		if !reads || len(l.hand.shards) > 0 && l.handingBack(shard) {
			at = q[0].since // due now (a member cannot read them, or the shard goes)
		}
		if retry := b.lag.retry[shard]; at.Before(retry) {
			at = retry
		}
		// The lease is looked up only for a time that would be the
		// first: it reads the clock, and this runs at every turn.
		if (first.IsZero() || at.Before(first)) && l.e.leases.owns(shard) {
			first = at
		}
	}
	return first
}

// behindDelay is how long the records of shard wait behind their first
// unrecorded fire: the shard's own share of Config.StateInterval, from all
// of it (shard 0) down to just over half of it (the last shard), spread
// evenly. A record is thus never more than the interval behind, and the
// shards' records come due at different instants. The queue of a shard
// stays in the order of its fires, each record waiting as long as the
// others of its shard.
func (b *batcher) behindDelay(shard int) time.Duration {
	l := b.l
	return behindDelay(l.e.cfg.StateInterval, shard, l.e.shards)
}

func behindDelay(interval time.Duration, shard, shards int) time.Duration {
	if shards <= 1 || shard <= 0 {
		return interval
	}
	half := interval / 2
	return interval - time.Duration(int64(half)*int64(min(shard, shards-1))/int64(shards))
}

// behindSendable reports whether shard's records left behind may be
// sent now: the shard is this instance's and not waiting for lagRetry.
func (b *batcher) behindSendable(shard int, now time.Time) bool {
	l := b.l
	if !l.e.leases.owns(shard) {
		return false
	}
	if retry, ok := b.lag.retry[shard]; ok {
		if now.Before(retry) {
			return false
		}
		delete(b.lag.retry, shard)
	}
	return true
}

// behindUnwritten requeues the records left behind that a record job did
// not write (an error, the lease guard): tried again after the interval,
// and not before windowRetry, unless the loop is stopping (the next owner
// finds their fires). Without that wait, records due at once (a member
// that cannot be read, as while NATS is unreachable) were sent again as
// soon as their job failed: a busy loop for as long as the outage.
func (b *batcher) behindUnwritten(rs []slotResult, shard int, now time.Time) {
	l := b.l
	if l.stopping {
		return
	}
	requeued := false
	for _, r := range rs {
		m, ok := b.lag.marks[r.id]
		if !ok {
			continue
		}
		m.since = now
		b.lag.marks[r.id] = m
		b.lag.queue[shard] = append(b.lag.queue[shard], lagRef{id: r.id, since: now})
		requeued = true
	}
	if requeued {
		b.lag.retry[shard] = now.Add(windowRetry)
	}
}
