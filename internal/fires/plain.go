package fires

import "github.com/jetsched/jetsched/pkg/kvstore"

// DecidePlain is Decide's answer to in, and whether it is plain: it
// claims one regular slot, on time, and does nothing else (no policy
// reason such as a catch-up, no missed or calendar-skipped slots to
// record, no running fire to cancel), on a state that carries nothing a
// claim would have to act on besides (an operator's backfill waiting or
// pause ended, a fire tracked for an overlap policy).
//
// Only a plain decision may go into a window claim (window.go): the loop
// queues a due slot on its shard's window only when this says so
// (loop.batchable), and the worker fires in the window only the slots it
// still says so of. Every other decision takes the per-slot path. So the
// fast path's eligibility is the decider's, and cannot drift from it
// (TestBatchableIsTheDecidersPlainClaim).
func DecidePlain(in Input) (Decision, bool) {
	d := Decide(in)
	return d, plain(in, d)
}

// plain is DecidePlain's verdict on d, Decide's answer to in.
func plain(in Input, d Decision) bool {
	if d.Action != ActClaim || d.Reason != "" || d.Missed != 0 || d.Cancel != "" ||
		len(d.Step.Skipped) != 0 || d.Step.SkippedCount != 0 {
		return false
	}
	st := in.State // not nil: a claim comes of a state
	return st.Backfill == nil && st.Paused == nil && st.Running == nil && in.Policy.Overlap == kvstore.OverlapAllow &&
		in.Policy.Jitter == 0 // a window claims its slots together, not each at its own instant
}
