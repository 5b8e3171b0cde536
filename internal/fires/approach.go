package fires

import (
	"cmp"
	"context"
	"errors"
	"time"

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
func (l *loop) lazyUntil(en *entry, now time.Time) (at time.Time, keep, wait bool) {
	if en.busy || en.pending != nil {
		return time.Time{}, false, false
	}
	if en.stateRev == 0 {
		return time.Time{}, false, !l.load.statesLoaded
	}
	if en.form != statePacked || en.written > en.packed.updated {
		return time.Time{}, false, false
	}
	if en.calendar && !l.load.calsLoaded {
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
func (l *loop) approach(en *entry) {
	at, keep, wait := l.lazyUntil(en, l.e.cfg.Clock.Now())
	switch {
	case wait:
		l.index.Remove(en)
	case !keep:
		l.compileLazy(en)
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
func (l *loop) compileLazy(en *entry) {
	spec := en.heldSpec()
	en.lazy = false
	if spec == nil {
		en.record = ""
		l.compiled(en, kvstore.Compiled{}, errLazyRecord)
		return
	}
	l.compileHeld(en, spec)
}

// compileHeld compiles a lazy entry's spec, decoded, on the loop: the
// loop holds the calendars. Its record is kept if it names a calendar (a
// change of the calendar compiles it again). Until every calendar is
// known, one naming a calendar waits (calendarsLoaded compiles it).
func (l *loop) compileHeld(en *entry, spec *kvstore.Spec) {
	if spec.Calendar == "" {
		en.record = ""
	} else if !l.load.calsLoaded {
		en.compiled.Schedule = nil
		return
	}
	c, err := l.e.compileSpec(en.id, spec, l.calendarSource)
	l.compiled(en, c, err)
}

// makeLazy keeps a decoded spec record (raw) as en's spec, to be compiled
// on approach.
func (l *loop) makeLazy(en *entry, raw []byte) {
	en.clearPlan()
	en.compiled, en.invalid, en.failures = sched{}, false, 0
	if !en.lazy {
		l.load.loadLazy = append(l.load.loadLazy, en.id)
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
	compiled kvstore.Compiled
	err      error
	spec     *kvstore.Spec
}

// lazyBatch is how many lazy specs go to the compiler, and come back, at a
// time: one loop turn per spec (a dispatch and a timer reset each) made a
// million of them take minutes.
const lazyBatch = 512

// behind hands the entries made lazy during the load to the compiler
// behind the loop, once the index is complete: those compiled or removed
// since are skipped as they come up (nextLazy). Collected as they were
// made lazy (makeLazy), in the load's order: a walk of a million entries
// here held the loop for ~0.6 s just as it began to fire.
func (l *loop) behind() {
	l.load.lazyIDs, l.load.loadLazy = l.load.loadLazy, nil
}

// nextLazy is the next batch of lazy entries to hand over (nil: none),
// skipping those compiled meanwhile; it stays l.load.lazyNext until taken.
func (l *loop) nextLazy() []lazySpec {
	if len(l.load.lazyNext) > 0 || len(l.load.lazyIDs) == 0 {
		return l.load.lazyNext
	}
	n := 0
	for n < len(l.load.lazyIDs) && len(l.load.lazyNext) < lazyBatch {
		id := l.load.lazyIDs[n]
		n++
		if en := l.entries[id]; en != nil && en.lazy {
			l.load.lazyNext = append(l.load.lazyNext, lazySpec{id: id, rev: en.specRev, record: en.record})
		}
	}
	l.load.lazyIDs = l.load.lazyIDs[n:]
	if len(l.load.lazyIDs) == 0 {
		l.load.lazyIDs = nil
	}
	return l.load.lazyNext
}

// onLazy makes the specs compiled behind the loop their entries'
// schedules, unless an entry was compiled, changed or removed meanwhile.
func (l *loop) onLazy(rs []lazyCompiled) {
	for _, r := range rs {
		en := l.entries[r.id]
		if en == nil || !en.lazy || en.specRev != r.rev {
			continue
		}
		en.lazy = false
		if r.spec != nil {
			l.compileHeld(en, r.spec)
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
