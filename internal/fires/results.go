package fires

import (
	"errors"
	"math"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

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
	l.win.recorded(r.id)
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
		l.win.lagged(en, r.state, l.e.cfg.Clock.Now())
	case r.removed || r.absent:
		l.win.notBehind(r.id)
		// The record is gone (deleted by the remove job, or found deleted
		// by the worker). Its delete marker, watched, is newer than
		// stateRev, so it is applied when it comes (or below, if it came).
		en.setState(nil, l.e.cfg.Instance)
	case r.stateRev > en.stateRev:
		l.win.notBehind(r.id) // written from the state in memory: not behind
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

// onDone queues a worker's completion report on its schedule; the owner
// of the shard records it (ledger status, and the end of Running).
func (l *loop) onDone(d doneReport) {
	en := l.entries[d.Schedule]
	if en == nil || !l.e.leases.owns(kvstore.ShardOf(d.Schedule, l.e.shards)) {
		return
	}
	l.waiting[d.Schedule] = append(l.waiting[d.Schedule], d)
	if en.lazy {
		l.load.compileLazy(en) // its report is recorded from the compiled schedule
	}
	if !en.busy && en.compiled.Schedule != nil {
		l.index.Set(en, l.e.cfg.Clock.Now())
	}
}

// adopt makes a state record a demotion wrote (window_check.go) its
// schedule's state at once, instead of when the watch brings it: the
// shard's held schedules are dispatched as soon as the check ends, and
// one decided from the plan the demotion replaced could otherwise go out
// on a window of its own as a plain fire of the window claim's slot. An
// entry a worker holds (busy) or a window holds (queued) is left to the
// watch (their writes go by CAS on the revision they read).
func (l *loop) adopt(d demoted) {
	en := l.entries[d.id]
	if en == nil || en.busy || en.queued || en.compiled.Schedule == nil || d.rev <= en.stateRev {
		return
	}
	l.win.notBehind(d.id)
	en.stateRev = d.rev
	st := d.state
	en.setState(&st, l.e.cfg.Instance)
	l.applyPending(en)
	l.schedule(en)
}

// lookAgain makes sure en is looked at within d.
func (l *loop) lookAgain(en *entry, d time.Duration) {
	if en.lazy {
		l.load.compileLazy(en)
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
