package fires

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// A state record behind the fire stream (docs/protocol.md, "Behind the
// stream").
//
// A recurring schedule's record written by a window claim says which
// slot fires next. The fire stream says which slots did fire. The two
// agree while the record is written with every fire; a record restored
// from a backup, put back by hand, or written by an owner that died
// before recording its last fires is behind: its next slot, or a later
// one, is in the stream already. Decided from the record alone, such a
// slot is fired again (beyond the duplicate window the stream does not
// drop it) or, late past its misfire threshold, recorded missed although
// it fired.
//
// So before this instance first decides such a record in its tenure of
// the shard, it reads the schedule's last fire from the stream (one
// direct get by subject). A regular slot at or after the record's next
// one means the record is behind: the decision starts from a settled
// claim on that slot (kvstore.ClaimFromStream), the fires in between
// counted, and moves past it without publishing anything, as it does for
// a window slot demoted onto its record. A record this instance wrote
// itself in this tenure follows from its own decisions and is not looked
// up again.

// StepCaughtUp: a state record was found behind the fire stream and its
// decision starts from the stream's last fire (nothing written yet).
const StepCaughtUp Step = "caught-up"

// StepHandBackWritten: before handing a shard back to rebalance, the
// instance wrote the state records it had left behind for it
// (handback.go).
const StepHandBackWritten Step = "hand-back-written"

// lookupsAtOnce bounds a window's concurrent last-fire lookups.
const lookupsAtOnce = 16

// mayLag reports whether st, the state record of a recurring schedule of
// shard, must be checked against the fire stream before it is decided at
// now: written by a window claim (settled), due, and not written by this
// instance in its current tenure of the shard.
func (l *loop) mayLag(t target, st *kvstore.State, planned bool, shard int, now time.Time) bool {
	if st == nil || planned || t.at != 0 || st.Ended || st.Next.IsZero() || st.Next.After(now) {
		return false
	}
	if c := st.Claim; c == nil || c.Window == "" || c.SlotID != "" || !c.Settled() {
		return false
	}
	since, ok := l.e.leases.since(shard)
	return !ok || st.Owner != l.e.cfg.Instance || st.UpdatedAt.Before(since)
}

// mayHaveFired reports whether j, a recurring schedule without a state
// record, is planned from so far back (its spec's write: Decide's
// firstAfter) that a slot it is about to decide may have fired, beyond
// what the duplicate window remembers: the record was deleted by hand,
// say. Such a plan is checked against the stream before it is decided
// (plannedBehind). A schedule new since less than the window is not:
// a slot it fired again would be a duplicate the stream drops.
func (l *loop) mayHaveFired(j slotJob, now time.Time) bool {
	st := j.state
	return j.planned && j.at == 0 && st != nil && !st.Ended && !st.Next.IsZero() &&
		now.Sub(st.Next) >= l.e.replayLimit()
}

// lagging returns j's state caught up with the fire stream if its record
// is behind it (see above), nil if it is not.
func (w worker) lagging(ctx context.Context, id string, c sched, st *kvstore.State) (*kvstore.State, error) {
	return w.caughtUp(ctx, id, c, st, behindStream, "state record behind the fire stream")
}

// plannedLagging is lagging for a recurring schedule without a state
// record whose plan reaches further back than the duplicate window
// (plannedBehind).
func (w worker) plannedLagging(ctx context.Context, id string, c sched, st *kvstore.State) (*kvstore.State, error) {
	return w.caughtUp(ctx, id, c, st, plannedBehind, "schedule without a state record has fired already")
}

// caughtUp runs behind, a check of st against the fire stream, and
// reports a state it caught up (what says why it was behind).
func (w worker) caughtUp(ctx context.Context, id string, c sched, st *kvstore.State,
	behind func(context.Context, *jsstore.Store, string, sched, *kvstore.State) (*kvstore.State, uint64, error), what string) (*kvstore.State, error) {
	caught, n, err := behind(ctx, w.e.store, id, c, st)
	if caught != nil {
		w.e.log.Info(what+"; its decision starts from the stream's last fire", "schedule", id,
			"next", st.Next, "last_fired", caught.Claim.Slot, "seq", caught.Claim.Seq, "fires_counted", n)
		w.e.step(StepCaughtUp)
	}
	return caught, err
}

// lookupFor is how job j's state is checked against the fire stream:
// lagging for a record, plannedLagging for a plan.
func (w worker) lookupFor(j slotJob) func(context.Context, string, sched, *kvstore.State) (*kvstore.State, error) {
	if j.planned {
		return w.plannedLagging
	}
	return w.lagging
}

// behindStream is readmodel.BehindStream for st, the state record of
// schedule id compiled as c.
func behindStream(ctx context.Context, store *jsstore.Store, id string, c sched, st *kvstore.State) (*kvstore.State, uint64, error) {
	return readmodel.BehindStream(ctx, store, id, c.Schedule, c.Plan, st)
}

// plannedBehind is readmodel.PlannedBehind for st, the plan of schedule
// id compiled as c, which has no state record.
func plannedBehind(ctx context.Context, store *jsstore.Store, id string, c sched, st *kvstore.State) (*kvstore.State, uint64, error) {
	return readmodel.PlannedBehind(ctx, store, id, c.Schedule, c.Plan, st)
}

// lookUpLags runs lagging for each item of a window that asks for it, a
// few at a time, and reports the indexes of those that cannot go into
// the window: behind the stream (the per-slot path writes the catch-up)
// or not looked up (an error; the per-slot path tries again).
func (w worker) lookUpLags(ctx context.Context, items []slotJob) map[int]bool {
	if !slices.ContainsFunc(items, func(j slotJob) bool { return j.verify }) {
		return nil // a running fleet's windows: nothing to look up, nothing allocated
	}
	var mu sync.Mutex
	out := map[int]bool{}
	sem := make(chan struct{}, lookupsAtOnce)
	var wg sync.WaitGroup
	for i := range items {
		if !items[i].verify {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			j := &items[i]
			caught, err := w.lookupFor(*j)(ctx, j.id, j.compiled, j.state)
			if caught != nil || err != nil {
				mu.Lock()
				out[i] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out
}

// mayPassOver reports whether in's state, a recurring schedule's record
// this instance did not write in its tenure of the shard, has a next slot
// later than the one after its last claim, settled: whoever moved it on
// recorded the slots between (missed, skipped), or the record passes them
// over (forged, or restored from a backup with its next slot ahead). Such
// a record is checked once, when it is decided (passesOver).
func (w worker) mayPassOver(j slotJob, in Input) bool {
	st := in.State
	if st == nil || j.planned || j.at != 0 || st.Plan != in.Plan || st.Ended || st.Next.IsZero() || st.Paused != nil {
		return false
	}
	c := st.Claim
	if c == nil || c.SlotID != "" || !c.Settled() && c.Token != in.Settled {
		return false
	}
	next := afterClaim(in.Schedule, st)
	if next.IsZero() || !st.Next.After(next) {
		return false
	}
	since, ok := w.e.leases.since(kvstore.ShardOf(j.id, w.e.shards))
	return !ok || st.Owner != w.e.cfg.Instance || st.UpdatedAt.Before(since)
}

// passesOver looks the slot after in's state's last claim up in the
// ledger: "" when it has an entry (or the stream has fired past it),
// else why the record passes it over.
func (w worker) passesOver(ctx context.Context, j slotJob, in Input) (string, error) {
	slot := afterClaim(in.Schedule, in.State)
	_, err := w.e.store.GetTick(ctx, kvstore.SlotID(j.id, slot))
	switch {
	case err == nil:
		return "", nil
	case !errors.Is(err, kvstore.ErrNotFound):
		return "", fmt.Errorf("fire: ledger entry of %s, the slot after %s's last claim: %w", stamp(slot), j.id, err)
	}
	f, err := w.e.store.LastFired(ctx, j.id)
	switch {
	case err == nil && !f.Slot.Before(slot):
		return "", nil // fired up to it or past it (a record behind the stream: caught up as such)
	case err != nil && !errors.Is(err, kvstore.ErrNotFound) && !errors.Is(err, jetstream.ErrStreamNotFound):
		return "", fmt.Errorf("fire: last fire of %s, to check its record's next slot: %w", j.id, err)
	}
	return fmt.Sprintf("next slot %s passes over %s, the slot after the last claimed (%s), which has no ledger entry",
		stamp(in.State.Next), stamp(slot), stamp(in.State.Claim.Slot)), nil
}
