package fires

import (
	"context"
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Records behind at a hand-back (docs/protocol.md, "Records left behind").
//
// An instance that hands a shard back to rebalance the fleet first writes
// the state records it left behind for that shard, and leaves no new ones
// behind for it in the rest of its tenure. So the next owner takes the
// shard with its records current, whatever it is: an instance of the
// previous release, which does not read records behind their fires (its
// joining is what made this one hand the shard back), or one that does,
// which then finds nothing to catch up. A lease round waits for them
// for handBackWait (it must not hold back the renewals); while some
// member does not read what is left behind, a hand-back not written by
// then waits for a later round, the shard still owned and firing, for
// handBackPatience at most (leases.holdBack). Past that, or when every
// member reads records behind the stream and ended lists, the shard goes
// anyway and its next owner catches the records up (lagging.go) or looks
// its one-shots up in the stream.

// flushReq asks the loop to write the records left behind of shards;
// done is closed once none is left (or the loop stops).
type flushReq struct {
	shards []int
	done   chan struct{}
}

// handBackWait bounds a lease round's wait for the records of the shards
// it hands back: a round must not hold back the renewals of the shards it
// keeps.
func handBackWait(ttl time.Duration) time.Duration { return min(2*time.Second, ttl/10) }

// handBackPatience bounds how long the rounds hold a hand-back back for
// its records (leases.holdBack): past it, the shards go with records not
// yet written. A fleet's first member of the release before joins while
// the others may hold a herd's ended lists (thousands of records to
// write, every second, as many at once as there are workers).
func handBackPatience(ttl time.Duration) time.Duration { return max(30*time.Second, 3*ttl) }

// flushBehind writes the records left behind of shards before their
// leases are handed back (leases.beforeDrop), waiting until they are
// written, the engine stops or ctx ends. It reports false when ctx ended
// first (the records are still being written).
func (e *Engine) flushBehind(ctx context.Context, shards []int) bool {
	done := e.svc.Done()
	if done == nil {
		return true
	}
	fr := flushReq{shards: shards, done: make(chan struct{})}
	select {
	case e.flushes <- fr:
	case <-done:
		return true
	case <-ctx.Done():
		e.log.Debug("records left behind not written before the hand-back", "shards", shards)
		return false
	}
	select {
	case <-fr.done:
		e.step(StepHandBackWritten)
	case <-done:
	case <-ctx.Done():
		e.log.Debug("records left behind not all written before the hand-back", "shards", shards)
		return false
	}
	return true
}

// onFlush takes a flush request: the shards' records left behind are due
// at once, and no more are left behind in this tenure.
func (l *loop) onFlush(fr flushReq) {
	for _, shard := range fr.shards {
		if gen, ok := l.e.leases.generation(shard); ok {
			l.hand.shards[shard] = gen
		} // not owned: nothing of it is written any more
	}
	l.hand.flushing = append(l.hand.flushing, fr)
}

// handingBack reports whether shard is being handed back in the current
// tenure (onFlush).
func (l *loop) handingBack(shard int) bool {
	gen, ok := l.hand.shards[shard]
	if !ok {
		return false
	}
	if cur, owned := l.e.leases.generation(shard); !owned || cur != gen {
		delete(l.hand.shards, shard) // that tenure is over
		return false
	}
	return true
}

// checkFlushed tells the waiting hand-backs whose shards have no record
// left behind, and no record job out, that they may go.
func (l *loop) checkFlushed() {
	keep := l.hand.flushing[:0]
	for _, fr := range l.hand.flushing {
		if l.flushed(fr.shards) {
			close(fr.done)
		} else {
			keep = append(keep, fr)
		}
	}
	clear(l.hand.flushing[len(keep):])
	l.hand.flushing = keep
}

// flushed reports whether no schedule of shards that this instance still
// owns has its record behind its fires or being written.
func (l *loop) flushed(shards []int) bool {
	for _, shard := range shards {
		if !l.handingBack(shard) {
			continue // not owned any more: nothing of it is written
		}
		if !l.win.behindFlushed(shard) || l.listsStanding(shard) {
			return false
		}
	}
	return true
}

// releaseFlushes lets every waiting hand-back go (the loop stops).
func (l *loop) releaseFlushes() {
	for _, fr := range l.hand.flushing {
		close(fr.done)
	}
	l.hand.flushing = nil
}

// shardOf is the shard of schedule id.
func (l *loop) shardOf(id string) int { return kvstore.ShardOf(id, l.e.shards) }
