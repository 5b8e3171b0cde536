package fire

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// settleQueue is how many settle notices may wait for the loop. A dropped
// notice costs a tick lookup when the schedule's next slot comes due, so
// the queue is sized for a herd's burst rather than for the workers.
const settleQueue = 8192

// inflight tracks fires sent without waiting (Engine.dispatch). One
// goroutine waits for their acknowledgements in order; each acknowledged
// fire gets its observations and its ledger tick, and the loop hears that
// its claim is settled. A fire whose send failed is published again
// synchronously, until shortly before its claim expires; if that fails too,
// the claim stays unsettled and is taken over when it expires (by this
// instance or another), exactly as after a crash.
type inflight struct {
	e       *Engine
	pending chan sentFire
	// settles tells the loop which claims are settled. A full channel drops
	// the news: the loop then reads the tick when the claim matters.
	settles chan settle
	done    chan struct{}
	retries sync.WaitGroup
}

type sentFire struct {
	j    job
	c    kvstore.Claim
	msg  *nats.Msg
	now  time.Time // the injected clock when dispatched
	sent time.Time // the process clock when sent
	f    jetstream.PubAckFuture
}

// settle: the claim with token on schedule id is published and recorded.
type settle struct{ id, token string }

func newInflight(e *Engine, size int) *inflight {
	in := &inflight{e: e, pending: make(chan sentFire, size), settles: make(chan settle, settleQueue), done: make(chan struct{})}
	go in.run()
	return in
}

// add tracks a sent fire. It blocks while size fires wait for their
// acknowledgements.
func (in *inflight) add(s sentFire) { in.pending <- s }

// run waits for each sent fire's acknowledgement (kvstore.AckWait at most:
// then it is published again, synchronously, into the duplicate window).
func (in *inflight) run() {
	defer close(in.done)
	acks := kvstore.NewAckTimer()
	defer acks.Stop()
	for s := range in.pending {
		if ack, err := acks.Await(s.f, s.sent); err != nil {
			in.republish(s, err)
		} else {
			in.published(s, ack)
		}
	}
}

func (in *inflight) republish(s sentFire, first error) {
	in.retries.Go(func() {
		in.e.log.Debug("fire not acknowledged; publishing it again", "schedule", s.j.id, "slot", s.c.Slot, "err", first)
		ack, err := in.e.publishMsg(context.Background(), s.j, s.c, s.msg)
		if err != nil {
			in.e.log.Warn("fire not published before its claim expires; it will be taken over", "schedule", s.j.id, "slot", s.c.Slot, "err", err)
			return
		}
		in.published(s, ack)
	})
}

func (in *inflight) published(s sentFire, ack *jetstream.PubAck) {
	e := in.e
	e.published(s.j, s.c, "", s.now)
	e.step(StepAfterPublish)
	if err := e.followups.PutTick(context.Background(), e.dispatchedTick(s.j, s.c, ack)); err != nil {
		e.log.Warn("ledger tick not sent; the claim will be checked", "schedule", s.j.id, "slot", s.c.Slot, "err", err)
		return
	}
	e.step(StepAfterLedger)
	select {
	case in.settles <- settle{id: s.j.id, token: s.c.Token}:
	default:
	}
}

// close waits for every sent fire to be acknowledged (or given up), then
// stops. Call it once nothing is dispatched any more.
func (in *inflight) close() {
	close(in.pending)
	<-in.done
	in.retries.Wait()
}
