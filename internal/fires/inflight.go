package fires

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

// notifySettled tells the loop that the claim with token on schedule id is
// settled. A full queue drops the news: the loop then looks the tick up
// when the claim matters.
func (e *Engine) notifySettled(id, token string, duplicate bool) {
	select {
	case e.settles <- settle{id: id, token: token, duplicate: duplicate}:
	default:
	}
}
