package fires

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jetsched/jetsched/internal/jsname"
	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/internal/pipelined"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// renewLoop renews what is held and, once joined, the member key, every
// third of the TTL (from the end of the last renewal) until ctx ends.
func (l *leases) renewLoop(ctx context.Context) {
	tick := l.clock.NewTimer(l.ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		rctx, cancel := context.WithTimeout(ctx, l.ttl/2)
		l.renewAll(rctx)
		if l.joined.Load() {
			l.registerMember(rctx)
		}
		cancel()
		tick.Reset(l.ttl / 3)
	}
}

// renewAll refreshes every held lease by CAS with a new TTL. A lease
// whose revision moved on is dropped, with the reason read from its key
// (whyLost): expired, or taken over by the instance whose value is there.
// A lease renewed after a silence past the guard (owns was false, so the
// loops parked its due schedules) is news for the loops, as a gained one
// is, and its guard's closing and opening are reported (closeGuards,
// guard_opened).
//
// The renewals go out together and their acknowledgements are awaited
// after: one after the other, a round took a round trip per shard held,
// and over a link with 400 ms of round trip an instance holding 22 shards
// renewed each only every ~9 s, past the TTL, so the fleet kept taking its
// leases from one another and fired nothing (integration/links,
// latency-200ms). A renewal counts from when it was sent: the server's TTL
// starts when it stores the write, before its acknowledgement comes back.
func (l *leases) renewAll(ctx context.Context) {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	// A round that comes late (a starved process) finds the guards it
	// missed closed: they are reported before the renewals say more.
	l.closeGuards()
	type renewal struct {
		shard int
		was   heldLease
		fut   jetstream.PubAckFuture
		err   error
	}
	held := l.heldShards()
	out := make([]renewal, 0, len(held))
	sent := l.clock.Now()
	for _, s := range held {
		l.mu.Lock()
		h, ok := l.held[s]
		l.mu.Unlock()
		if !ok {
			continue
		}
		f, err := l.casTTLAsync(ctx, shardKey(s), h.rev)
		out = append(out, renewal{shard: s, was: h, fut: f, err: err})
	}
	var reopened []guardChange
	var conflicts []heldShard
	for _, r := range out {
		rev, err := pipelined.AwaitRevision(ctx, r.fut, r.err)
		switch {
		case err == nil:
			l.mu.Lock()
			if cur, ok := l.held[r.shard]; ok && cur.rev == r.was.rev {
				// Not owned any more when the acknowledgement came (sent
				// in time or not): the loops parked the shard's due
				// schedules and must hear that it is owned again.
				if silence := l.clock.Now().Sub(r.was.renewed); cur.closed || silence >= l.guardAt() {
					reopened = append(reopened, guardChange{shard: r.shard, silence: silence, reported: cur.closed})
				}
				l.held[r.shard] = heldLease{rev: rev, renewed: sent, gen: r.was.gen, taken: r.was.taken}
			}
			l.mu.Unlock()
		case errors.Is(err, jetstream.ErrKeyRevisionMismatch):
			conflicts = append(conflicts, heldShard{shard: r.shard, lease: r.was})
		default:
			// NATS is away: keep trying; owns() turns false at 90% TTL.
			l.log.Debug("lease renewal failed", "shard", r.shard, "err", err)
			if l.failed != nil {
				l.failed(r.shard, err)
			}
		}
	}
	if len(conflicts) > 0 {
		reopened = append(reopened, l.lostAll(ctx, conflicts)...)
	}
	if len(reopened) > 0 {
		l.openGuards(reopened)
	}
	// Renewals that failed, or whose acknowledgement came late, may have
	// let more guards close meanwhile.
	l.closeGuards()
}

// registerMember keeps member.<instance> alive.
func (l *leases) registerMember(ctx context.Context) {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	key := "member." + l.instance
	if l.member != 0 {
		if rev, err := l.casTTL(ctx, key, l.member); err == nil {
			l.member, l.memberAcked = rev, time.Now()
			return
		}
	}
	if rev, err := l.kv.Create(ctx, key, l.value(), jetstream.KeyTTL(l.ttl)); err == nil {
		l.member, l.memberAcked = rev, time.Now()
		return
	}
	// A previous incarnation's member key: overwrite it once it expires.
}

// casTTL writes key with a fresh TTL if it is still at revision rev. KV's
// Update would clear the TTL, so this publishes to the key's subject with
// the same expectations Update uses, plus Nats-TTL.
func (l *leases) casTTL(ctx context.Context, key string, rev uint64) (uint64, error) {
	msg := l.renewalMsg(key)
	ack, err := l.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(rev), jetstream.WithMsgTTL(l.ttl))
	if err != nil {
		if natserr.WrongLastSequence(err) {
			return 0, fmt.Errorf("%w: %v", jetstream.ErrKeyRevisionMismatch, err)
		}
		return 0, err
	}
	return ack.Sequence, nil
}

// casTTLAsync sends casTTL's write without waiting for its
// acknowledgement (see renewAll).
func (l *leases) casTTLAsync(ctx context.Context, key string, rev uint64) (jetstream.PubAckFuture, error) {
	return pipelined.Publish(ctx, l.js, l.renewalMsg(key), jetstream.WithExpectLastSequencePerSubject(rev), jetstream.WithMsgTTL(l.ttl))
}

// renewalMsg is the write of key's lease value to its subject.
func (l *leases) renewalMsg(key string) *nats.Msg {
	return &nats.Msg{Subject: jsname.KV(l.js, l.kv.Bucket(), key), Data: l.value(), Header: nats.Header{}}
}
