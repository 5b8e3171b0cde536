package fires

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// settleQueue is how many settle notices may wait for the loop. A dropped
// notice costs a tick lookup when the schedule's next slot comes due, so
// the queue is sized for a herd's burst rather than for the workers.
const settleQueue = 8192

// settle: the claim with token on schedule id is published and recorded.
// duplicate: the stream had the slot already (a repeated backfill, say):
// the claim counted a fire that was none, which the next state write of the
// schedule takes back (State.Fires counts fires the stream accepted).
type settle struct {
	id, token string
	duplicate bool
}

// trackFire hands a fire sent without waiting (Engine.dispatch) to the
// in-flight tracker. Acknowledged, it gets its observations and its ledger
// tick, and the loop hears that its claim is settled. Unacknowledged, it is
// published again synchronously until shortly before its claim expires; if
// that fails too, the claim stays unsettled and is taken over when it
// expires (by this instance or another), exactly as after a crash.
func (e *Engine) trackFire(j job, c kvstore.Claim, msg *nats.Msg, now time.Time, f jetstream.PubAckFuture) {
	e.inflight.Add(f, time.Now(), func(first error) (*jetstream.PubAck, error) {
		e.log.Debug("fire not acknowledged; publishing it again", "schedule", j.id, "slot", c.Slot, "err", first)
		ack, err := e.publishMsg(context.Background(), j, c, msg)
		switch {
		case permanent(err):
			if ferr := e.failSlot(context.Background(), j, c, err); ferr == nil {
				e.notifySettled(j.id, c.Token, false)
			}
		case err != nil:
			e.log.Warn("fire not published before its claim expires; it will be taken over", "schedule", j.id, "slot", c.Slot, "err", err)
		}
		return ack, err
	}, func(ack *jetstream.PubAck) {
		e.published(j, c, "", now, ack)
		e.step(StepAfterPublish)
		if err := e.followups.PutTick(context.Background(), e.dispatchedTick(j, c, ack)); err != nil {
			e.log.Warn("ledger tick not sent; the claim will be checked", "schedule", j.id, "slot", c.Slot, "err", err)
			return
		}
		e.step(StepAfterLedger)
		e.notifySettled(j.id, c.Token, ack.Duplicate)
	})
}

// notifySettled tells the loop that the claim with token on schedule id is
// settled. A full queue drops the news: the loop then looks the tick up
// when the claim matters.
func (e *Engine) notifySettled(id, token string, duplicate bool) {
	select {
	case e.settles <- settle{id: id, token: token, duplicate: duplicate}:
	default:
	}
}
