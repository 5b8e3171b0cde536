package fire

import (
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Action is what the engine must do next for one schedule.
type Action int

// Actions, in the order Decide considers them.
const (
	// ActWait: nothing to do until Decision.Until (zero: until the spec or
	// state changes).
	ActWait Action = iota
	// ActInit: the schedule has no state yet; create it with Next.
	ActInit
	// ActReplan: the recurrence changed; set Next, planned from now.
	ActReplan
	// ActCheckClaim: the last claim is not known to be settled and the next
	// slot is due, or the claim expired. Look up its ledger entry; if it is
	// missing and the claim expired, take the slot over.
	ActCheckClaim
	// ActClaim: claim Slot and advance to Next in one CAS, then publish.
	ActClaim
	// ActMisfire: Slot is later than the misfire threshold; record Missed
	// slots (Slot through LastMissed) and advance to Next without firing.
	ActMisfire
)

func (a Action) String() string {
	switch a {
	case ActWait:
		return "wait"
	case ActInit:
		return "init"
	case ActReplan:
		return "replan"
	case ActCheckClaim:
		return "check-claim"
	case ActClaim:
		return "claim"
	case ActMisfire:
		return "misfire"
	}
	return "unknown"
}

// maxMissedCount bounds the walk over missed slots; past it the misfire
// jumps straight to the first slot after now.
const maxMissedCount = 100_000

// Input is everything Decide looks at. It is a value: Decide does no I/O
// and reads no clock, so every decision is a table test.
type Input struct {
	Now time.Time
	// Plan is the current spec's kvstore.Spec.Plan.
	Plan string
	// Schedule is the spec's parsed recurrence.
	Schedule cronx.Schedule
	// State is the schedule's state, nil when it has none.
	State *kvstore.State
	// Settled is the token of a claim this instance knows to be settled
	// (it published the slot and wrote its tick, or found the tick).
	Settled string
	// Checked is the token of a live claim whose tick this instance looked
	// up and did not find: its owner may still be publishing, so it is not
	// looked up again before it expires.
	Checked string
	// MisfireThreshold is how late a slot may be and still fire.
	MisfireThreshold time.Duration
}

// Decision is Decide's answer.
type Decision struct {
	Action Action
	// Until is when to look again (ActWait).
	Until time.Time
	// Slot is the slot to claim (ActClaim) or the first missed (ActMisfire).
	Slot time.Time
	// Next is the next slot after the action; zero when the recurrence ends.
	Next time.Time
	// Step explains Next: occurrences skipped before it, and why it moved.
	Step cronx.Step
	// Missed is the number of slots skipped (ActMisfire), ending at
	// LastMissed; Missed == maxMissedCount means "at least".
	Missed     int
	LastMissed time.Time
}

// Decide chooses the next step for one schedule.
func Decide(in Input) Decision {
	st := in.State
	switch {
	case st == nil:
		step := cronx.Explain(in.Schedule, in.Now)
		return Decision{Action: ActInit, Next: step.At, Step: step}
	case st.Plan != in.Plan:
		step := cronx.Explain(in.Schedule, in.Now)
		return Decision{Action: ActReplan, Next: step.At, Step: step}
	}
	if c := st.Claim; c != nil && c.Token != in.Settled {
		until := claimDue(in)
		if until.After(in.Now) {
			return Decision{Action: ActWait, Until: until}
		}
		return Decision{Action: ActCheckClaim, Slot: c.Slot}
	}
	if st.Ended || st.Next.IsZero() {
		return Decision{Action: ActWait}
	}
	slot := st.Next
	if slot.After(in.Now) {
		return Decision{Action: ActWait, Until: slot}
	}
	if in.Now.Sub(slot) > in.MisfireThreshold {
		d := Decision{Action: ActMisfire, Slot: slot}
		n := slot
		for !n.IsZero() && !n.After(in.Now) {
			d.Missed++
			d.LastMissed = n
			if d.Missed == maxMissedCount {
				break
			}
			n = in.Schedule.Next(n)
		}
		from := d.LastMissed
		if d.Missed == maxMissedCount {
			from = in.Now
		}
		d.Step = cronx.Explain(in.Schedule, from)
		d.Next = d.Step.At
		return d
	}
	step := cronx.Explain(in.Schedule, slot)
	return Decision{Action: ActClaim, Slot: slot, Next: step.At, Step: step}
}

// Due is when the engine must look at a schedule again, from its state
// alone; ok is false when nothing can happen until the spec or state
// changes. It agrees with Decide: Decide(now >= due) never answers ActWait
// with an earlier Until.
func Due(in Input) (due time.Time, ok bool) {
	st := in.State
	if st == nil || st.Plan != in.Plan {
		return in.Now, true
	}
	if c := st.Claim; c != nil && c.Token != in.Settled {
		return claimDue(in), true
	}
	if st.Ended || st.Next.IsZero() {
		return time.Time{}, false
	}
	return st.Next, true
}

// claimDue is when a claim not known to be settled needs a look: when the
// next slot is due (its tick is looked up: usually it is there, as after a
// restart), or when the claim expires (a takeover if the tick is missing),
// whichever is first, unless it was already looked up while live.
func claimDue(in Input) time.Time {
	st, c := in.State, in.State.Claim
	if c.Token != in.Checked && !st.Ended && !st.Next.IsZero() && st.Next.Before(c.Expires) {
		return st.Next
	}
	return c.Expires
}
