package fires

import (
	"iter"
	"maps"
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// A health query walks every entry: at a million schedules a quarter of a
// second on two cores, which held due work back for as long at every
// metrics scrape. The walk is done a slice of healthChunk entries per loop
// turn instead, between the loop's other work. Entries changed while it
// goes are seen as they are when it reaches them (a gauge, not a
// snapshot); queries asked meanwhile wait for the next walk, one walk
// answering all of those with the same tolerance.

// healthChunk is how many entries a health query looks at per loop turn.
const healthChunk = 16384

// healthScan is a health query being answered.
type healthScan struct {
	next      func() (string, *entry, bool)
	stop      func()
	turn      chan struct{} // closed: see scanning
	now       time.Time
	tolerance time.Duration
	h         Health
	replies   []chan Health
}

// askHealth starts a walk for q, or queues q for the next one.
func (l *loop) askHealth(q healthQuery) {
	if l.health.scan != nil {
		l.health.asked = append(l.health.asked, q)
		return
	}
	next, stop := iter.Pull2(maps.All(l.entries))
	l.health.scan = &healthScan{next: next, stop: stop, turn: make(chan struct{}), now: l.e.cfg.Clock.Now(), tolerance: q.tolerance,
		h: Health{Shards: l.e.shards}, replies: []chan Health{q.reply}}
	close(l.health.scan.turn)
	// Those asked already with the same tolerance get this walk's answer.
	rest := l.health.asked[:0]
	for _, a := range l.health.asked {
		if a.tolerance == q.tolerance {
			l.health.scan.replies = append(l.health.scan.replies, a.reply)
		} else {
			rest = append(rest, a)
		}
	}
	clear(l.health.asked[len(rest):])
	l.health.asked = rest
}

// scanning is ready while a walk is under way, so that the loop takes a
// turn for its next slice even when nothing else happens.
func (l *loop) scanning() <-chan struct{} {
	if l.health.scan == nil {
		return nil
	}
	return l.health.scan.turn
}

// scanHealth looks at the walk's next slice of entries, and answers its
// queries once it has seen them all.
func (l *loop) scanHealth() {
	sc := l.health.scan
	for range healthChunk {
		id, en, ok := sc.next()
		if !ok {
			for _, r := range sc.replies {
				r <- sc.h // buffered: never blocks
			}
			l.endScan()
			if len(l.health.asked) > 0 {
				q := l.health.asked[0]
				l.health.asked = l.health.asked[1:]
				l.askHealth(q)
			}
			return
		}
		l.healthOf(&sc.h, id, en, sc.now, sc.tolerance)
	}
}

// endScan drops the walk under way, if any.
func (l *loop) endScan() {
	if l.health.scan != nil {
		l.health.scan.stop()
		l.health.scan = nil
	}
}

// healthOf adds en to h: counted if it is invalid or stalled, listed if
// its next slot is late beyond tolerance, when its shard is owned
// (ownership is asked only of the few that are), and counted uncompiled.
func (l *loop) healthOf(h *Health, id string, en *entry, now time.Time, tolerance time.Duration) {
	if en.lazy {
		h.Uncompiled++
	}
	invalid, stalled := en.invalid, en.failures >= stallAfter
	var late time.Duration
	if st := en.view(&l.scratch); st != nil && (en.compiled.Schedule != nil || en.lazy) && !l.win.unrecordedFire(id) && !st.Ended && !st.Next.IsZero() && st.Paused == nil {
		late = now.Sub(st.Next)
	}
	if !invalid && !stalled && late <= tolerance || !l.e.leases.owns(kvstore.ShardOf(id, l.e.shards)) {
		return
	}
	if invalid {
		h.Invalid++
	}
	if stalled {
		h.Stalled++
	}
	if late > tolerance {
		h.Overdue = append(h.Overdue, Overdue{ID: id, Workflow: en.workflow, Late: late})
	}
}
