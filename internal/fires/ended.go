package fires

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Ended lists (docs/records.md, "Ended lists").
//
// With Config.EndedLists, the deferred records of a window's one-shots
// (deferRecords) are written as one list, ended.<shard>.<token> in the
// leases bucket, instead of a state record each: a herd of 100,000
// one-shots costs ~200 writes after its fires instead of 100,000. A
// listed one-shot keeps no record; every instance of this version holds,
// for the shards it owns, the lists it read at the shard's check
// (checkWindow) and those it wrote, and plans a listed one-shot as ended,
// so that it never fires again, however long ago its fire aged out of
// the stream. A listed slot stands for the schedule while it is the same
// one-shot: no record of its own, the spec's at equal to the slot, and
// the spec created no later than the list (a spec written since is asked
// its history: an edit keeps the slot ended, a remove and add again
// starts anew).
//
// The owner sweeps its shards' lists (sweepLists): one whose slots no
// longer stand for anything (each schedule removed, recorded or planned
// anew) is deleted; with lists off, or beside a member that does not read
// them, its slots that still stand are written as state records first,
// and then it is deleted.

// endedList is an ended list as the loop keeps it.
type endedList struct {
	key   string
	rev   uint64
	shard int
	at    int64 // when it was written (Unix ns)
	owner string
	ids   []string
	// sweeping: a job of the sweep holds it.
	sweeping bool
}

// endedRef is a schedule's slot in an ended list.
type endedRef struct {
	list   *endedList
	slot   int64 // Unix ns
	seq    uint64
	window string
}

// endedIndex is the ended lists of the shards this instance checked, and
// the lists' slots by schedule. Only the loop goroutine touches it; a
// job carries a copy of its schedule's endedRef.
type endedIndex struct {
	byID    map[string]endedRef
	lists   map[string]*endedList
	sweepAt time.Time
	// converting: the last sweep turned lists into records.
	converting bool
}

func newEndedIndex() endedIndex {
	return endedIndex{byID: map[string]endedRef{}, lists: map[string]*endedList{}}
}

// endedSweep is how often the owner sweeps its shards' ended lists, and
// endedConvert how soon again while it writes lists' slots as records.
const (
	endedSweep   = 30 * time.Second
	endedConvert = time.Second
)

// listsAllowed reports whether a window's one-shots may be listed instead
// of recorded: Config.EndedLists, and every member reads lists.
func (l *loop) listsAllowed() bool {
	return l.e.cfg.EndedLists && l.e.leases.fleetLists()
}

// loadLists makes lists, read at shard's check, the shard's ended lists,
// and plans the listed one-shots they stand for as ended.
func (l *loop) loadLists(shard int, lists []jsstore.EndedEntry) {
	for key, li := range l.ended.lists {
		if li.shard == shard && !li.sweeping {
			l.dropList(key)
		}
	}
	for _, e := range lists {
		l.addList(e)
	}
}

// addList indexes one ended list, a later slot of a schedule over an
// earlier one, and plans the one-shots it stands for as ended.
func (l *loop) addList(e jsstore.EndedEntry) {
	if _, ok := l.ended.lists[e.Key]; ok {
		return
	}
	li := &endedList{key: e.Key, rev: e.Revision, shard: e.List.Shard, at: e.List.At.UnixNano(), owner: e.List.Owner}
	li.ids = make([]string, 0, len(e.List.Slots))
	for _, s := range e.List.Slots {
		if s.Slot.After(e.List.At.Add(windowSkew)) || s.Seq == 0 {
			// A list names fired slots only, each with its fire's
			// sequence: this one is forged or from a clock far off, and
			// its slot keeps firing as its schedule says.
			l.e.log.Warn("ended list names a slot after its own time, or no fire; ignored", "key", e.Key, "schedule", s.Schedule, "slot", s.Slot, "list_at", e.List.At)
			continue
		}
		ref := endedRef{list: li, slot: s.Slot.UnixNano(), seq: s.Seq, window: s.Window}
		if old, ok := l.ended.byID[s.Schedule]; ok && old.slot > ref.slot {
			continue
		}
		l.ended.byID[s.Schedule] = ref
		li.ids = append(li.ids, s.Schedule)
	}
	l.ended.lists[e.Key] = li
	for _, id := range li.ids {
		if en := l.entries[id]; en != nil {
			l.applyListed(en)
		}
	}
}

// dropList forgets an ended list and the slots that are its.
func (l *loop) dropList(key string) {
	li := l.ended.lists[key]
	if li == nil {
		return
	}
	delete(l.ended.lists, key)
	for _, id := range li.ids {
		if ref, ok := l.ended.byID[id]; ok && ref.list == li {
			delete(l.ended.byID, id)
		}
	}
}

// listed is en's slot in an ended list, if it names en's one-shot time.
func (l *loop) listed(en *entry) (endedRef, bool) {
	if len(l.ended.byID) == 0 || en.at == 0 {
		return endedRef{}, false
	}
	ref, ok := l.ended.byID[en.id]
	return ref, ok && ref.slot == en.at
}

// listedEnds reports whether en is a one-shot its ended list stands for,
// as far as the loop can tell without I/O: no record of its own, and its
// spec written no later than the list. (One written since is decided by
// a worker, which asks the spec's history: endIfKnown.)
func (l *loop) listedEnds(en *entry) (endedRef, bool) {
	ref, ok := l.listed(en)
	return ref, ok && !en.hasRecord() && en.compiled.Schedule != nil && en.written <= ref.list.at
}

// applyListed plans en as ended if its ended list stands for it.
func (l *loop) applyListed(en *entry) {
	if en.busy || en.lazy {
		return // its result, or its compile, comes back through plan
	}
	if l.planEnded(en) {
		l.schedule(en)
	}
}

// planEnded gives en, if its ended list stands for it (listedEnds), the
// plan of an ended one-shot: no next slot, ended, one fire. (Its claim is
// in the list; the record a worker writes from it has it: endedState.)
func (l *loop) planEnded(en *entry) bool {
	ref, ok := l.listedEnds(en)
	if !ok {
		return false
	}
	p, ok := packState(&kvstore.State{Ended: true, Fires: 1, UpdatedAt: unixNano(ref.list.at), Owner: ref.list.owner})
	if ok {
		en.setPlan(p)
	}
	return ok
}

// endedState is the state record ref stands for, over st (a record an
// operator created, or a plan): readmodel.EndedState of its slot.
func endedState(st kvstore.State, ref endedRef, plan string, now time.Time, instance string) kvstore.State {
	return readmodel.EndedState(st, jsstore.EndedSlot{Slot: unixNano(ref.slot), Seq: ref.seq, Window: ref.window},
		jsstore.Ended{Owner: ref.list.owner, At: unixNano(ref.list.at)}, plan, now, instance)
}

// listedApplies reports whether j's ended list stands for j's schedule:
// the spec was written no later than the list, or its history shows no
// remove since (an edit that kept its at). A history that does not reach
// back that far counts as the same schedule.
func (w worker) listedApplies(ctx context.Context, j slotJob) (bool, error) {
	ref := j.listed
	if ref == nil || ref.slot != j.at {
		return false, nil
	}
	return readmodel.SameOneShot(ctx, w.e.store, j.id, j.written, unixNano(ref.list.at))
}

// listWindow writes items (a window's one-shots, fired and acknowledged)
// as one ended list of shard, and hands each back planned as ended. An
// item the list cannot stand for (a slot a calendar moved off the spec's
// time) is left in rest for its record.
func (w worker) listWindow(ctx context.Context, shard int, items []*windowItem) (list *jsstore.EndedEntry, rest []*windowItem, err error) {
	l := jsstore.Ended{Shard: shard, Owner: w.e.cfg.Instance, At: w.e.cfg.Clock.Now().UTC()}
	var listed []*windowItem
	for _, it := range items {
		if it.claim.Slot.UnixNano() != it.j.at || it.claim.Seq == 0 {
			rest = append(rest, it)
			continue
		}
		listed = append(listed, it)
		l.Slots = append(l.Slots, jsstore.EndedSlot{Schedule: it.j.id, Slot: it.claim.Slot, Seq: it.claim.Seq, Window: it.claim.Window})
	}
	if len(listed) == 0 {
		return nil, rest, nil
	}
	if err := w.guard(listed[0].j.id); err != nil {
		return nil, items, err
	}
	token := randomID()
	rev, err := w.e.store.PutEnded(ctx, l, token)
	if err != nil {
		return nil, items, err
	}
	e := &jsstore.EndedEntry{Key: jsstore.EndedKey(shard, token), Revision: rev, List: l}
	for _, it := range listed {
		it.r.listed = true
		it.r.settle(it.claim.Token)
	}
	return e, rest, nil
}

// sweepLists looks at the ended lists of the shards this instance owns
// and checked, as often as endedSweep: a list whose slots stand for
// nothing any more is deleted; one whose slots are to become records
// (lists not allowed) has them written first. A list with a schedule
// busy, or one whose spec was written after it (a worker decides it), is
// looked at again later.
func (l *loop) sweepLists(now time.Time) {
	if len(l.ended.lists) == 0 || !l.loaded() {
		return
	}
	convert := !l.listsAllowed()
	// Lists are turned into records at once when that begins (a member
	// that does not read them joined), and while a hand-back waits.
	if now.Before(l.ended.sweepAt) && !(convert && (!l.ended.converting || len(l.hand.flushing) > 0)) {
		return
	}
	l.ended.converting = convert
	next := now.Add(cmp.Or(l.e.test.sweepEvery, endedSweep))
	if convert {
		next = now.Add(min(endedConvert, cmp.Or(l.e.test.sweepEvery, endedConvert)))
	}
	for _, li := range l.ended.lists {
		if l.work.full() {
			next = now.Add(endedConvert)
			break
		}
		if li.sweeping {
			continue
		}
		if gen, ok := l.e.leases.generation(li.shard); !ok || l.win.checked[li.shard] != gen {
			continue
		}
		stand, wait := l.standing(li)
		switch {
		case wait:
			continue
		case len(stand) == 0:
			li.sweeping = true
			l.work.sendWindow(&sweepJob{list: li})
		case convert:
			li.sweeping = true
			items := make([]slotJob, 0, len(stand))
			for _, en := range stand {
				en.busy = true
				j := l.snapshot(en, now)
				items = append(items, j)
			}
			l.work.sendWindow(&sweepJob{list: li, items: items})
			next = now.Add(endedConvert)
		}
	}
	l.ended.sweepAt = next
}

// listsStanding reports whether shard has an ended list to turn into
// records before its hand-back: lists are not to be written (the member
// that made this instance hand the shard back may not read them).
func (l *loop) listsStanding(shard int) bool {
	if len(l.ended.lists) == 0 || l.listsAllowed() {
		return false
	}
	for _, li := range l.ended.lists {
		if li.shard == shard {
			return true
		}
	}
	return false
}

// standing are the schedules li still stands for (planned ended from it).
// wait: one of its schedules is busy, or its spec was written after the
// list and a worker is still to decide it.
func (l *loop) standing(li *endedList) (stand []*entry, wait bool) {
	for _, id := range li.ids {
		ref, ok := l.ended.byID[id]
		en := l.entries[id]
		if !ok || ref.list != li || en == nil {
			continue // a later list's, or removed
		}
		if en.busy || en.lazy {
			return nil, true
		}
		if st := en.view(&l.scratch); en.hasRecord() && st != nil && st.Plan == "" {
			return nil, true // an operator's record, to be planned (endIfKnown)
		}
		if _, ends := l.listedEnds(en); ends {
			stand = append(stand, en)
			continue
		}
		if r, same := l.listed(en); same && r.list == li && !en.hasRecord() && en.written > li.at {
			return nil, true
		}
	}
	return stand, false
}

// sweepEnded writes the state record of each of wj's schedules that its
// list stands for (by CAS on what the loop knew: a record written
// meanwhile is left as it is), then deletes the list if nothing else
// wrote it since.
func (w worker) sweepEnded(ctx context.Context, wj *sweepJob) *sweepResult {
	out := &sweepResult{list: wj.list}
	now := w.e.cfg.Clock.Now()
	for _, j := range wj.items {
		r := slotResult{id: j.id, state: j.state, stateRev: j.stateRev, planned: j.planned, settled: j.settled, checked: j.checked}
		if out.err == nil && j.listed != nil {
			st := endedState(kvstore.State{}, *j.listed, j.compiled.Plan, now, w.e.cfg.Instance)
			if err := w.update(ctx, j, st, &r); err != nil && !errors.Is(err, kvstore.ErrConflict) {
				out.err = err
			}
		}
		out.results = append(out.results, r)
	}
	if out.err != nil {
		return out
	}
	if !w.e.leases.owns(wj.list.shard) {
		out.err = fmt.Errorf("%w: shard %d", errNotOwned, wj.list.shard)
		return out
	}
	err := w.e.store.DeleteEnded(ctx, wj.list.key, wj.list.rev)
	switch {
	case err == nil, errors.Is(err, kvstore.ErrConflict):
		out.deleted = true // (a conflict: it was deleted, by a previous owner's sweep)
	default:
		out.err = err
	}
	return out
}

// onEnded takes a sweep job's outcome back.
func (l *loop) onEnded(wr *sweepResult) {
	wr.list.sweeping = false
	for i := range wr.results {
		l.applyResult(wr.results[i])
	}
	switch {
	case wr.deleted:
		l.dropList(wr.list.key)
		l.e.log.Debug("ended list swept", "key", wr.list.key, "records", len(wr.results))
	case errors.Is(wr.err, errNotOwned):
		l.e.step(StepGuardClosed)
	case wr.err != nil:
		l.e.log.Warn("ended list sweep did not finish; tried again later", "key", wr.list.key, "err", wr.err)
	}
}
