package fires

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Compiled on approach (docs/protocol.md, "Cold start: due work first").
//
// During the initial load a spec is decoded but not compiled until it is
// needed: most schedules of a large fleet are not due for minutes, and
// their state records already say when their next slot is. Such an entry
// is "lazy": it keeps its spec record and sits in the due index at its
// slot less DefaultCompileLead, where dispatch compiles it. Once the index
// is complete, a goroutine compiles every lazy entry left, in batches and
// in no particular order (the due index covers the urgent ones), so that a
// start's compiles come after Ready instead of before it, and every spec
// is checked (Decide's plausibility check of a forged next slot needs the
// compiled schedule) soon after it. A spec that names a calendar is only
// decoded there and compiled on the loop, which holds the calendars; a
// change of any calendar compiles every lazy one that names one, with the
// calendars as they are then, as if it had never been lazy.

// DefaultCompileLead is how long before its state record's next slot a
// lazy entry is compiled at the latest.
const DefaultCompileLead = 30 * time.Second

// lazyUntil is when a lazy entry must be compiled by, and whether it may
// stay lazy at all. It may while its state record is plain (packed: no
// claim, pause, trigger or backfill to act on), written after its spec
// (a spec written after the record changed the schedule while nobody
// looked: its plan is checked now) and, if the spec names a calendar,
// after every calendar record, and its next slot is more than the lead
// away. An ended schedule stays lazy without a time: nothing of it
// is due. wait reports a spec whose state record has not come yet while
// the state records still load, or that names a calendar while the
// calendars still load: it is neither compiled nor indexed until the
// record, or the end of the records or calendars, comes.
func (ld *loader) lazyUntil(en *entry, now time.Time) (at time.Time, keep, wait bool) {
	l := ld.l
	if en.busy || en.pending != nil {
		return time.Time{}, false, false
	}
	if en.stateRev == 0 {
		return time.Time{}, false, !ld.statesLoaded
	}
	if en.form != statePacked || en.written > en.packed.updated {
		return time.Time{}, false, false
	}
	if en.calendar && !ld.calsLoaded {
		return time.Time{}, false, true
	}
	if en.calendar && l.cal.written > en.packed.updated {
		return time.Time{}, false, false // a calendar may have changed while no instance ran: its plan is checked now
	}
	if en.packed.ended {
		return time.Time{}, true, false
	}
	if en.packed.next == 0 {
		return time.Time{}, false, false
	}
	at = unixNano(en.packed.next).Add(-cmp.Or(l.e.test.compileLead, DefaultCompileLead))
	return at, at.After(now), false
}

// approach schedules a lazy entry: in the due index at the time it must
// be compiled by, or compiled now (and scheduled as any other).
func (ld *loader) approach(en *entry) {
	l := ld.l
	at, keep, wait := ld.lazyUntil(en, l.e.cfg.Clock.Now())
	switch {
	case wait:
		l.index.Remove(en)
	case !keep:
		ld.compileLazy(en)
	case at.IsZero():
		l.index.Remove(en)
	default:
		l.index.Set(en, at)
	}
}

// errLazyRecord is what a lazy entry whose kept spec record no longer
// decodes is reported invalid with (it decoded when it came).
var errLazyRecord = errors.New("the spec record kept for compiling it later does not decode")

// compileLazy compiles a lazy entry now, and schedules it.
func (ld *loader) compileLazy(en *entry) {
	l := ld.l
	spec := en.heldSpec()
	en.lazy = false
	if spec == nil {
		en.record = ""
		l.compiled(en, compile.Compiled{}, errLazyRecord)
		return
	}
	ld.compileHeld(en, spec)
}

// compileHeld compiles a lazy entry's spec, decoded, on the loop: the
// loop holds the calendars. Its record is kept if it names a calendar (a
// change of the calendar compiles it again). Until every calendar is
// known, one naming a calendar waits (calendarsIn compiles it).
func (ld *loader) compileHeld(en *entry, spec *kvstore.Spec) {
	l := ld.l
	if spec.Calendar == "" {
		en.record = ""
	} else if !ld.calsLoaded {
		en.compiled.Schedule = nil
		return
	}
	c, err := l.e.compileSpec(en.id, spec, l.calendarSource)
	l.compiled(en, c, err)
}

// makeLazy keeps a decoded spec record (raw) as en's spec, to be compiled
// on approach.
func (ld *loader) makeLazy(en *entry, raw []byte) {
	l := ld.l
	en.clearPlan()
	en.compiled, en.invalid, en.failures = sched{}, false, 0
	if !en.lazy {
		ld.loadLazy = append(ld.loadLazy, en.id)
	}
	en.spec, en.record, en.lazy = nil, string(raw), true
	l.schedule(en)
}

// lazySpec is a lazy entry's spec handed to the compiler behind the loop.
type lazySpec struct {
	id     string
	rev    uint64
	record string
}

// lazyCompiled is a lazySpec compiled, or only decoded (spec) if it names
// a calendar: that one is compiled on the loop (compileHeld).
type lazyCompiled struct {
	id       string
	rev      uint64
	compiled compile.Compiled
	err      error
	spec     *kvstore.Spec
}

// lazyBatch is how many lazy specs go to the compiler, and come back, at a
// time: one loop turn per spec (a dispatch and a timer reset each) made a
// million of them take minutes.
const lazyBatch = 512

// ready hands the entries made lazy during the load to the compiler
// behind the loop, once the index is complete: those compiled or removed
// since are skipped as they come up (nextLazy). Collected as they were
// made lazy (makeLazy), in the load's order: a walk of a million entries
// here held the loop for ~0.6 s just as it began to fire.
func (ld *loader) ready() {
	ld.lazyIDs, ld.loadLazy = ld.loadLazy, nil
}

// lazyOffer is the next batch of lazy entries for the compiler and the
// channel to hand it over on (nil, nil: nothing to hand over), for the
// loop's select; lazyTaken says the compiler took it.
func (ld *loader) lazyOffer() (chan<- []lazySpec, []lazySpec) {
	next := ld.nextLazy()
	if len(next) == 0 {
		return nil, nil
	}
	return ld.lazyIn, next
}

// lazyTaken: the compiler took the batch lazyOffer offered.
func (ld *loader) lazyTaken() { ld.lazyNext = nil }

// nextLazy is the next batch of lazy entries to hand over (nil: none),
// skipping those compiled meanwhile; it stays lazyNext until taken.
func (ld *loader) nextLazy() []lazySpec {
	l := ld.l
	if len(ld.lazyNext) > 0 || len(ld.lazyIDs) == 0 {
		return ld.lazyNext
	}
	n := 0
	for n < len(ld.lazyIDs) && len(ld.lazyNext) < lazyBatch {
		id := ld.lazyIDs[n]
		n++
		if en := l.entries[id]; en != nil && en.lazy {
			ld.lazyNext = append(ld.lazyNext, lazySpec{id: id, rev: en.specRev, record: en.record})
		}
	}
	ld.lazyIDs = ld.lazyIDs[n:]
	if len(ld.lazyIDs) == 0 {
		ld.lazyIDs = nil
	}
	return ld.lazyNext
}

// onLazy makes the specs compiled behind the loop their entries'
// schedules, unless an entry was compiled, changed or removed meanwhile.
func (ld *loader) onLazy(rs []lazyCompiled) {
	l := ld.l
	for _, r := range rs {
		en := l.entries[r.id]
		if en == nil || !en.lazy || en.specRev != r.rev {
			continue
		}
		en.lazy = false
		if r.spec != nil {
			ld.compileHeld(en, r.spec)
			continue
		}
		en.record = ""
		l.compiled(en, r.compiled, r.err)
	}
}

// compileLazySpecs decodes and compiles the batches of in onto out until
// in is closed or ctx ends, once hold (a test's) is closed.
func (e *Engine) compileLazySpecs(ctx context.Context, in <-chan []lazySpec, out chan<- []lazyCompiled, hold <-chan struct{}) {
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return
		}
	}
	for batch := range in {
		rs := make([]lazyCompiled, len(batch))
		for i, s := range batch {
			rs[i] = lazyCompiled{id: s.id, rev: s.rev}
			spec, err := kvstore.DecodeSpec([]byte(s.record))
			switch {
			case err != nil:
				rs[i].err = errLazyRecord
			case spec.Calendar != "":
				rs[i].spec = &spec
			default:
				rs[i].compiled, rs[i].err = e.compileSpec(s.id, &spec, nil)
			}
		}
		select {
		case out <- rs:
		case <-ctx.Done():
			return
		}
	}
}
