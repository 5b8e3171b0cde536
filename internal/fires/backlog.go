package fires

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Overload: when due work comes faster than the workers take it, the due
// schedules wait in the due index (one entry each, never one per slot:
// the index does not grow with the lateness), and each, when its turn
// comes, is decided at that time under its misfire policy: a slot past
// its threshold is recorded missed (or merged into the next), not fired
// late, so the backlog drains as fast as the records go. The loop
// measures the backlog (the schedules due and not yet handed to a
// worker, and how late the oldest is) and reports it to an Observer that
// is a BacklogObserver, and raises an overloaded event when the oldest is
// more than overloadAfter late, then a caught_up one once none waits,
// counting the slots recorded missed meanwhile (the shedding).

// BacklogObserver is an Observer that also takes the due backlog: the
// engine calls DueBacklog from its loop at most every backlogEvery while
// schedules wait, and once with 0 when none does any more.
type BacklogObserver interface {
	// DueBacklog: n schedules are due and not yet taken up by a worker,
	// the oldest of them late by oldest.
	DueBacklog(n int, oldest time.Duration)
}

const (
	// overloadAfter is how late the oldest waiting schedule is when an
	// overload episode starts.
	overloadAfter = time.Second
	// backlogEvery is how often a backlog is counted (a walk of the due
	// part of the index) while it lasts.
	backlogEvery = 250 * time.Millisecond
)

// backlog is the loop's overload episode. Only the loop touches it.
type backlog struct {
	// counted is when the backlog was last counted, n and oldest what.
	counted time.Time
	n       int
	// since is when the episode began (zero: none), peak its largest
	// count and latest, shedFrom the engine's shed count then.
	since    time.Time
	peak     int
	latest   time.Duration
	shedFrom int64
	// reported: the observer last had a count above 0.
	reported bool
}

// checkBacklog, after a dispatch, measures the due work left waiting
// (in the index, and queued for a shard's next window) and starts or
// ends an overload episode. It counts when a backlog first shows at the
// index's head, and then at most every backlogEvery (resetTimer wakes the
// loop for it while one is reported): a dispatch in between costs a peek.
func (l *loop) checkBacklog(now time.Time) {
	b := &l.backlog
	_, due, ok := l.index.Peek()
	headDue := ok && !due.After(now)
	if now.Sub(b.counted) < backlogEvery && (b.reported || !headDue) {
		return
	}
	b.counted = now
	n, oldest := 0, time.Duration(0)
	if headDue {
		n, oldest = l.index.CountDue(now), now.Sub(due)
	}
	pn, pOldest := l.win.pendingSince(now)
	n, oldest = n+pn, max(oldest, pOldest)
	if n == 0 {
		if b.reported {
			b.reported = false
			l.e.backlogTo().DueBacklog(0, 0)
		}
		if !b.since.IsZero() {
			l.caughtUp(now)
		}
		return
	}
	b.reported = true
	l.e.backlogTo().DueBacklog(n, oldest)
	if !b.since.IsZero() {
		b.peak, b.latest = max(b.peak, n), max(b.latest, oldest)
		return
	}
	if oldest < overloadAfter {
		return
	}
	b.since, b.peak, b.latest, b.shedFrom = now, n, oldest, l.e.shed.Load()
	l.e.log.Warn("overloaded: due work waits for the workers; slots past their misfire threshold are recorded missed",
		"waiting", n, "oldest_late", oldest.Round(time.Millisecond), "workers", l.e.cfg.Workers)
	l.e.event(kvstore.Event{Kind: kvstore.EventOverloaded, Instance: l.e.cfg.Instance, Owner: l.e.cfg.Instance, At: now.UTC(),
		Count:  uint64(n),
		Reason: fmt.Sprintf("%d schedules due and waiting for a worker, the oldest %s late", n, oldest.Round(time.Millisecond))})
}

// backlogWake is when the loop must look again for the backlog's sake:
// while one is reported, when it is next counted (zero: never).
func (l *loop) backlogWake() time.Time {
	if !l.backlog.reported {
		return time.Time{}
	}
	return l.backlog.counted.Add(backlogEvery)
}

// pendingSince is how many due schedules wait for their shard's next
// window, and how late the oldest of them is.
func (b *batcher) pendingSince(now time.Time) (int, time.Duration) {
	n, oldest := 0, time.Duration(0)
	at := dueNanos(now)
	for _, q := range b.pend {
		n += len(q)
		for _, p := range q {
			if p.en.due < at {
				oldest = max(oldest, time.Duration(at-p.en.due))
			}
		}
	}
	return n, oldest
}

// caughtUp ends the overload episode: none waits any more.
func (l *loop) caughtUp(now time.Time) {
	b := &l.backlog
	shed := max(l.e.shed.Load()-b.shedFrom, 0)
	took := now.Sub(b.since)
	l.e.log.Info("caught up: no due work waits for the workers", "after", took.Round(time.Millisecond), "peak_waiting", b.peak,
		"latest", b.latest.Round(time.Millisecond), "recorded_missed", shed)
	l.e.event(kvstore.Event{Kind: kvstore.EventCaughtUp, Instance: l.e.cfg.Instance, Owner: l.e.cfg.Instance, At: now.UTC(),
		Count: uint64(shed),
		Reason: fmt.Sprintf("back on time after %s (peak %d waiting, the oldest up to %s late); %d slots recorded missed meanwhile",
			took.Round(time.Millisecond), b.peak, b.latest.Round(time.Millisecond), shed)})
	b.since = time.Time{}
}

// CountDue is how many entries are due at now (a walk of the heap's due
// part only: it costs what is due, not the index's size).
func (q *dueQueue) CountDue(now time.Time) int {
	at := dueNanos(now)
	n := 0
	stack := []int{0}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if i >= len(q.h) || q.h[i].due > at {
			continue // and nothing below it is due either
		}
		n++
		stack = append(stack, 2*i+1, 2*i+2)
	}
	return n
}

// shedCounter is the engine's Observer as the engine calls it: the
// configured one, and a count of the slots recorded missed (the
// shedding an overload episode reports).
type shedCounter struct {
	Observer
	shed *atomic.Int64
}

// NotFired counts the missed slots, then tells the configured observer.
func (s shedCounter) NotFired(kind, reason string, n int) {
	if kind == "missed" {
		s.shed.Add(int64(n))
	}
	s.Observer.NotFired(kind, reason, n)
}

// nopBacklog is the BacklogObserver of an Observer that is none.
type nopBacklog struct{}

func (nopBacklog) DueBacklog(int, time.Duration) {}

// backlogTo is the engine's BacklogObserver (one that does nothing on
// an engine not made by New, as internal tests make them).
func (e *Engine) backlogTo() BacklogObserver {
	if e.backlogObs == nil {
		return nopBacklog{}
	}
	return e.backlogObs
}

// backlogObserver is o's BacklogObserver side, or one that does nothing.
func backlogObserver(o Observer) BacklogObserver {
	if b, ok := o.(BacklogObserver); ok {
		return b
	}
	return nopBacklog{}
}
