package fires

import "time"

// The steady path's turns (docs/performance.md, "Where the steady state's
// CPU goes"): at a steady rate the loop used to wake once per event (a
// worker's result, a settled claim, a timer per due slot), and each turn
// paid its fixed cost (dispatch's walks of the window queues and of the
// records left behind, a timer reset) and the runtime's park and wake.
// Two things make a turn serve many slots instead:
//
//   - takeReady: after the event a turn woke for, the results, settled
//     claims and completion reports already waiting are taken too, before
//     the one dispatch and timer reset of the turn;
//   - the fire quantum (Config.FireQuantum): a slot is dispatched at the
//     first multiple of the quantum at or after its time, never before its
//     time, so that the slots due within one quantum are dispatched
//     together, by one timer wake-up, and the windows see them together.

// maxTurnEvents bounds what takeReady takes in one turn, so that the due
// index and the watches get their turn behind a stream of results.
const maxTurnEvents = 256

// takeReady takes the workers' results, the settled claims and the
// completion reports that are waiting, without blocking, up to
// maxTurnEvents: one dispatch then serves them all.
func (l *loop) takeReady() {
	for range maxTurnEvents {
		select {
		case r := <-l.work.slotDone:
			l.onResult(r)
		case wr := <-l.work.windowDone:
			l.win.apply(wr)
		case s := <-l.in.settles:
			l.onSettle(s)
		case d := <-l.in.dones:
			l.onDone(d)
		default:
			return
		}
	}
}

// DefaultFireQuantum is scheduler run's --fire-quantum: the most a slot
// waits behind its time so that the slots due together are dispatched
// together.
const DefaultFireQuantum = 4 * time.Millisecond

// MaxFireQuantum bounds Config.FireQuantum: it is lateness added to every
// slot not on a multiple of it.
const MaxFireQuantum = 100 * time.Millisecond

// dispatchAt is when a slot due at due is dispatched: the first multiple
// of the fire quantum at or after due (due itself without a quantum).
// Never before due.
func (l *loop) dispatchAt(due time.Time) time.Time {
	return QuantumEnd(due, l.e.cfg.FireQuantum)
}

// QuantumEnd is the first multiple of q at or after t (t itself when q
// is 0 or less): when the engine dispatches a slot due at t. Never before
// t. The bench's publish floor sends in the same quanta with it.
func QuantumEnd(t time.Time, q time.Duration) time.Time {
	if q <= 0 {
		return t
	}
	n := t.UnixNano()
	r := n % int64(q)
	if r == 0 {
		return t
	}
	if r < 0 {
		r += int64(q) // before 1970: still the next multiple
	}
	return time.Unix(0, n-r+int64(q))
}
