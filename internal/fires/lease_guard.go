package fires

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/nats-io/nats.go/jetstream"
)

// guardChange is a shard whose guard closed or opened after silence
// without a successful renewal; reported: its closing was said already.
type guardChange struct {
	shard    int
	silence  time.Duration
	reported bool
}

// heldShard is a shard with the lease this instance held of it.
type heldShard struct {
	shard int
	lease heldLease
}

// closeGuards reports the held leases whose guard has closed (no
// renewal for guardAt) since the last look: a guard_closed event for
// each, one warning, the gauge. A guard closes with the passage of time,
// not at a write, so the lease loops look at every round (renewAll, run)
// and the dispatch path (owns) only compares times, at no cost per fire.
func (l *leases) closeGuards() {
	var closed []guardChange
	l.mu.Lock()
	now := l.clock.Now()
	for s, h := range l.held {
		if silence := now.Sub(h.renewed); !h.closed && silence >= l.guardAt() {
			h.closed = true
			l.held[s] = h
			closed = append(closed, guardChange{shard: s, silence: silence})
		}
	}
	l.mu.Unlock()
	if len(closed) == 0 {
		return
	}
	slices.SortFunc(closed, func(a, b guardChange) int { return a.shard - b.shard })
	for _, c := range closed {
		l.guardEvent(kvstore.EventGuardClosed, c)
	}
	shards, longest := span(closed)
	l.log.Warn("lease guard closed: no renewal for 90% of the TTL; not dispatching these shards until one succeeds (a starved process or NATS out of reach)",
		"shards", shards, "silence", longest, "ttl", l.ttl)
	l.report()
}

// openGuards reports the leases renewed after their guard closed, each
// with the silence it ended (a guard_closed first for one whose closing
// was not said yet: it closed while its renewal was on its way), and
// wakes the loops, which parked the shards' due schedules meanwhile.
func (l *leases) openGuards(opened []guardChange) {
	for _, c := range opened {
		if !c.reported {
			l.guardEvent(kvstore.EventGuardClosed, c)
		}
		l.guardEvent(kvstore.EventGuardOpened, c)
	}
	shards, longest := span(opened)
	l.log.Info("lease guard opened: renewals resumed after a silence; dispatching again",
		"shards", shards, "silence", longest, "ttl", l.ttl)
	l.notify()
}

// span is the shards of changes and the longest of their silences, for
// a log line.
func span(changes []guardChange) (shards []int, longest time.Duration) {
	for _, c := range changes {
		shards = append(shards, c.shard)
		longest = max(longest, c.silence)
	}
	return shards, longest.Round(time.Millisecond)
}

// guardEvent raises an event of kind about c.
func (l *leases) guardEvent(kind kvstore.EventKind, c guardChange) {
	l.event(kvstore.Event{Kind: kind, Shard: &c.shard, Silence: silenceString(c.silence), Owner: l.instance, At: l.clock.Now().UTC()})
}

// silenceString is a silence as events carry it: a Go duration, to the
// millisecond.
func silenceString(d time.Duration) string { return d.Round(time.Millisecond).String() }

// loss is why a renewal's CAS failed: the key's state (whyLost).
type loss struct {
	why    string // lostExpired, lostTakenOver, lostConflict; "" if the lease is still this process's
	holder string // lostTakenOver: the owner of the value there
	run    string // ... and its process (leaseValue.Run)
	err    error  // lostConflict: why the key could not be read
	// The key's revision and when it was written, when it holds this
	// process's own value (a renewal whose acknowledgement was lost).
	rev     uint64
	renewed time.Time
}

// lostAll drops the leases whose renewal found another revision, each
// with why (whyLost), and says so: a lease_lost event each, and a
// warning per reason and holder, with the silence since their last
// renewal. A lease whose key holds this process's own last write (a
// renewal that timed out but was stored) is kept at that revision; if
// that reopens its guard, it is returned.
func (l *leases) lostAll(ctx context.Context, conflicts []heldShard) (reopened []guardChange) {
	// Read the keys at once: they can be many (a starved process finds
	// every lease it held expired), and each read is a round trip.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.ttl/3)
	defer cancel()
	losses := make([]loss, len(conflicts))
	var reads sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, c := range conflicts {
		reads.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			losses[i] = l.whyLost(rctx, c.shard)
		})
	}
	reads.Wait()

	type group struct{ why, holder, run string }
	groups := map[group][]int{}
	var order []group
	longest := map[group]time.Duration{}
	errs := map[group]error{}
	now := l.clock.Now()
	for i, c := range conflicts {
		ls := losses[i]
		if ls.why == "" {
			l.mu.Lock()
			if cur, ok := l.held[c.shard]; ok && cur.rev == c.lease.rev {
				if cur.closed && now.Sub(ls.renewed) < l.guardAt() {
					reopened = append(reopened, guardChange{shard: c.shard, silence: now.Sub(c.lease.renewed), reported: true})
					cur.closed = false
				}
				cur.rev, cur.renewed = ls.rev, ls.renewed
				l.held[c.shard] = cur
			}
			l.mu.Unlock()
			l.log.Debug("lease renewal conflicted with this process's own earlier renewal, stored though unacknowledged; kept", "shard", c.shard, "revision", ls.rev)
			continue
		}
		silence := now.Sub(c.lease.renewed)
		l.mu.Lock()
		delete(l.held, c.shard)
		l.mu.Unlock()
		l.event(kvstore.Event{Kind: kvstore.EventLeaseLost, Shard: &c.shard, Reason: ls.why, Holder: ls.holder,
			Silence: silenceString(silence), Owner: l.instance, At: now.UTC()})
		g := group{ls.why, ls.holder, ls.run}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], c.shard)
		longest[g] = max(longest[g], silence)
		if ls.err != nil {
			errs[g] = ls.err
		}
	}
	for _, g := range order {
		attrs := []any{"shards", groups[g], "why", g.why, "silence", longest[g].Round(time.Millisecond), "ttl", l.ttl}
		switch g.why {
		case lostExpired:
			l.log.Warn("lease lost: its key expired (or was deleted) before a renewal reached the server", attrs...)
		case lostTakenOver:
			attrs = append(attrs, "holder", g.holder)
			if g.holder == l.instance {
				attrs = append(attrs, "holder_run", g.run, "run", l.runID) // another process under this name
			}
			l.log.Warn("lease lost: taken over", attrs...)
		default:
			l.log.Warn("lease lost: its renewal conflicted and the key could not be read", append(attrs, "err", errs[g])...)
		}
	}
	if len(order) > 0 {
		l.notify()
	}
	return reopened
}

// whyLost reads shard's key after its renewal's CAS failed: gone (the
// server expired it, or it was deleted) is lostExpired, another
// instance's value lostTakenOver, and this process's own value (a renewal
// it sent was stored but its acknowledgement did not come) is no loss.
func (l *leases) whyLost(ctx context.Context, shard int) loss {
	e, err := l.kv.Get(ctx, shardKey(shard))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
		return loss{why: lostExpired}
	case err != nil:
		return loss{why: lostConflict, err: fmt.Errorf("read %s: %w", shardKey(shard), err)}
	}
	var v leaseValue
	if err := json.Unmarshal(e.Value(), &v); err != nil {
		return loss{why: lostTakenOver} // someone wrote something else there
	}
	if v.Owner == l.instance && v.Run == l.runID {
		return loss{rev: e.Revision(), renewed: v.Renewed}
	}
	return loss{why: lostTakenOver, holder: v.Owner, run: v.Run}
}
