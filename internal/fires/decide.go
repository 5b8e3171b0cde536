package fires

import (
	"fmt"
	"math"
	"time"

	"github.com/jetsched/jetsched/internal/claimttl"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Action is what the engine must do next for one schedule.
type Action int

// Actions.
const (
	// ActWait: nothing to do until Decision.Until (zero: until the spec or
	// state changes).
	ActWait Action = iota
	// ActInit: the schedule has no state yet; plan Next in memory (the
	// first claim or misfire creates the record).
	ActInit
	// ActReplan: the recurrence changed; set Next, planned from now.
	ActReplan
	// ActCheckClaim: the last claim is not known to be settled and the next
	// slot is due, or the claim expired. Look up its ledger entry; if it is
	// missing and the claim expired, take the slot over.
	ActCheckClaim
	// ActClaim: claim Slot (with Reason, and SlotID for extra slots) and
	// advance to Next in one CAS, then publish. Missed slots (catch-up
	// policies) are recorded first.
	ActClaim
	// ActMisfire: record Missed slots (Slot through LastMissed) with
	// Reason and advance to Next without firing.
	ActMisfire
	// ActTrigger: claim the oldest operator trigger (an extra slot).
	ActTrigger
	// ActBackfill: claim the next slot of the backfill (an extra slot), or
	// end the backfill when Slot is zero.
	ActBackfill
)

func (a Action) String() string {
	return [...]string{"wait", "init", "replan", "check-claim", "claim", "misfire", "trigger", "backfill"}[a]
}

// maxMissedCount bounds the walk over missed slots; past it the misfire
// jumps straight to the first slot after now.
const maxMissedCount = 100_000

// Input is everything Decide looks at. It is a value: Decide does no I/O
// and reads no clock, so every decision is a table test.
type Input struct {
	Now time.Time
	// ID is the schedule's id: with a jitter (Policy.Jitter), each slot is
	// due at its time plus the offset its slot id fixes
	// (compile.JitterOffset).
	ID string
	// Plan is the compiled spec's plan.
	Plan string
	// Schedule is the spec's compiled recurrence.
	Schedule cronx.Schedule
	// Policy is the spec's misfire and overlap handling.
	Policy compile.Policy
	// State is the schedule's state, nil when it has none.
	State *kvstore.State
	// Settled is the token of a claim this instance knows to be settled
	// (it published the slot and wrote its tick, or found the tick).
	Settled string
	// Checked is the token of a live claim whose tick this instance looked
	// up and did not find: its owner may still be publishing, so it is not
	// looked up again before it expires.
	Checked string
	// MisfireThreshold is the scheduler's default for how late a slot may
	// be and still fire (the spec's misfire_threshold wins).
	MisfireThreshold time.Duration
	// Written is when the spec's current revision was written (zero:
	// unknown). A new schedule is owed its slots from then on, so a slot
	// that falls due between the write and the first scheduler seeing it
	// still fires (late) instead of being silently passed over.
	Written time.Time
	// At is a one-shot spec's fire time (zero otherwise): a one-shot is
	// owed its slot even when it was written after that time.
	At time.Time
	// MaxClaim is the longest a claim can be exclusive (see
	// claimttl.Expiry): what the fire stream's duplicate window
	// can absorb. Zero: claimttl.Max.
	MaxClaim time.Duration
	// TenureSince is when this instance's current tenure of the
	// schedule's shard began (zero: unknown, or no unsettled claim to
	// judge). An unsettled claim made before then was made by a previous
	// owner of the shard (another instance, or this one's previous process
	// or tenure), whose lease lapsed or was handed back: its check is due
	// now, not at the claim's expiry (see claimDue).
	TenureSince time.Time
	// Created is when the schedule was created: the first revision of its
	// spec since it was last deleted (zero: unknown). A recurring slot
	// from before then cannot be owed, so a state whose next slot is older
	// is implausible (forged, or a bad clock) and is re-planned.
	Created time.Time
}

// Decision is Decide's answer.
type Decision struct {
	Action Action
	// Until is when to look again (ActWait).
	Until time.Time
	// Slot is the slot to claim, or the first missed (ActMisfire).
	Slot time.Time
	// SlotID names an extra slot (trigger, backfill).
	SlotID string
	// Reason is why a policy produced a claim: its Sched-Reason
	// ("catchup", "trigger", "backfill").
	Reason string
	// Cancel is the running slot a claim cancels (cancel_other).
	Cancel string
	// Next is the next slot after the action; zero when the recurrence ends.
	Next time.Time
	// Step explains Next: occurrences skipped before it, and why it moved.
	Step cronx.Step
	// Missed slots are recorded as not fired, with MissedReason: Missed
	// of them, from FirstMissed to LastMissed; Missed == maxMissedCount
	// means "at least".
	Missed                  int
	FirstMissed, LastMissed time.Time
	// FirstMissedNominal is the occurrence FirstMissed came from when a
	// calendar moved it (zero otherwise): the walk over the missed slots
	// goes on from it (cronx.ExplainAfter).
	FirstMissedNominal time.Time
	MissedReason       string
	// MissedThreshold and MissedNote are set when the slots were missed
	// by the misfire policy: each slot's ledger reason then states its
	// own lateness (see MisfireReason).
	MissedThreshold time.Duration
	MissedNote      string
	// MissedAtLeast: there were too many missed slots to walk and the
	// schedule cannot count them, so Missed is a lower bound.
	MissedAtLeast bool
	// Implausible says why the state could not have been written by a
	// scheduler of this spec (ActReplan): its next slot lies beyond the
	// recurrence's, before the schedule existed, or not after the slot
	// last claimed. The schedule is re-planned from now, with an event.
	Implausible string
	// SkipNext is the state's new skip count (ActMisfire of one slot).
	SkipNext int
}

// firstAfter is where a new schedule's first slot is searched from: just
// before its spec was written (every slot since is owed: guarantee 10 of
// docs/protocol.md, "Every slot accounted for"); a one-shot: just before
// its time, however long ago. The slots then follow the misfire policy:
// those late past the threshold are fired (fire_all, fire_once) or
// recorded missed (skip), never passed over in silence, whether a
// scheduler saw the spec at once or every scheduler was down from its
// write until now. A schedule without a state record may have fired
// (its record deleted by hand): the engine looks its last fire up in the
// stream before it decides a slot older than the duplicate window
// (worker.verifyPlanned), so such slots are not fired twice.
func firstAfter(in Input) time.Time {
	from := in.Now
	if !in.Written.IsZero() {
		from = in.Written.Add(-time.Nanosecond)
	}
	if !in.At.IsZero() && in.At.Add(-time.Nanosecond).Before(from) {
		// Written after its time: owed all the same. (Written before it,
		// the walk from the write finds it, where a calendar that moves
		// it earlier, a roll to the previous business day, puts it.)
		from = in.At.Add(-time.Nanosecond)
	}
	if from.After(in.Now) {
		from = in.Now
	}
	return from
}

// threshold is how late a slot may be and still fire: the spec's
// misfire_threshold, else the scheduler's, counted from the latest a slot
// may be due (its time plus the jitter).
func (in Input) threshold() time.Duration {
	t := in.MisfireThreshold
	if in.Policy.MisfireThreshold > 0 {
		t = in.Policy.MisfireThreshold
	}
	return t + in.Policy.Jitter
}

// due is when a regular slot is due: its time, plus its jitter offset.
func (in Input) due(slot time.Time) time.Time {
	if in.Policy.Jitter <= 0 {
		return slot
	}
	return slot.Add(compile.JitterOffset(in.ID, slot, in.Policy.Jitter))
}

// planUndecodable is the plan of a state record that does not decode: it
// matches no spec's plan, so the schedule re-plans from now.
const planUndecodable = "undecodable"

// Reasons a slot does not fire, as recorded in the ledger.
const (
	reasonPaused   = "paused"
	reasonOperator = "skipped by an operator (skip-next)"
)

// Decide chooses the next step for one schedule. A next slot at or past
// the supported time range (kvstore.MaxTime) is none: the recurrence ends
// there, so that no time the engine plans overflows its Unix nanoseconds.
func Decide(in Input) Decision {
	d := decide(in)
	if !d.Next.IsZero() && !d.Next.Before(kvstore.MaxTime) {
		// (The occurrences passed over before it stay, for the ledger.)
		d.Next, d.Step.At, d.Step.Nominal, d.Step.Moved = time.Time{}, time.Time{}, time.Time{}, ""
	}
	return d
}

func decide(in Input) Decision {
	st := in.State
	switch {
	case st == nil:
		step := cronx.Explain(in.Schedule, firstAfter(in))
		return Decision{Action: ActInit, Next: step.At, Step: step}
	case st.Plan == "":
		// A record an operator action created before any scheduler wrote
		// one (a pause before the first fire): plan it as a new schedule,
		// keeping what the action set.
		step := cronx.Explain(in.Schedule, firstAfter(in))
		return Decision{Action: ActReplan, Next: step.At, Step: step}
	case st.Plan != in.Plan:
		step := cronx.Explain(in.Schedule, in.Now)
		return Decision{Action: ActReplan, Next: step.At, Step: step}
	}
	if c := st.Claim; c != nil && c.Token != in.Settled && !c.Settled() {
		until := claimDue(in)
		if until.After(in.Now) {
			return Decision{Action: ActWait, Until: until}
		}
		return Decision{Action: ActCheckClaim, Slot: c.Slot}
	}
	// Operator requests come before the regular slots, paused or not.
	if len(st.Triggers) > 0 {
		return Decision{Action: ActTrigger, Slot: st.Triggers[0].At, Reason: kvstore.ReasonTrigger}
	}
	var wake time.Time
	if b := st.Backfill; b != nil {
		if d, ok := decideBackfill(in, b); ok {
			return d
		}
		wake = b.NotBefore
	}
	d := decideRegular(in)
	if d.Action == ActWait && !wake.IsZero() && (d.Until.IsZero() || wake.Before(d.Until)) {
		d.Until = wake
	}
	return d
}

// decideBackfill returns the backfill's action when one is due now.
func decideBackfill(in Input, b *kvstore.Backfill) (Decision, bool) {
	if in.Now.Before(b.NotBefore) {
		return Decision{}, false
	}
	from := b.Cursor
	if from.IsZero() {
		from = b.From.Add(-time.Nanosecond)
	}
	slot := in.Schedule.Next(from)
	if slot.IsZero() || slot.After(b.To) {
		return Decision{Action: ActBackfill}, true // done
	}
	return Decision{Action: ActBackfill, Slot: slot, Reason: kvstore.ReasonBackfill}, true
}

// decideRegular handles the recurrence's own slots: pause, skip-next,
// overlap and misfire policies.
func decideRegular(in Input) Decision {
	st, pol := in.State, in.Policy
	if st.Ended || st.Next.IsZero() {
		return Decision{Action: ActWait}
	}
	resumed := st.ResumedAt
	if p := st.Paused; p != nil {
		if p.Until.IsZero() || in.Now.Before(p.Until) {
			return Decision{Action: ActWait, Until: p.Until}
		}
		resumed = p.Until
	}
	slot := st.Next
	if c := st.Claim; c != nil && c.Window != "" && c.SlotID == "" && !slot.IsZero() && !slot.After(c.Slot) {
		// A window's slot written as a claim on this record by the
		// instance that took the shard over (docs/protocol.md, "Window
		// claims"), now settled: move past it without firing it again.
		step := cronx.Explain(in.Schedule, c.Slot)
		return Decision{Action: ActReplan, Next: step.At, Step: step}
	}
	if why := implausible(in, slot); why != "" {
		step := cronx.Explain(in.Schedule, replanFrom(in))
		return Decision{Action: ActReplan, Next: step.At, Step: step, Implausible: why}
	}
	if due := in.due(slot); due.After(in.Now) {
		return Decision{Action: ActWait, Until: due}
	}
	if slot.Before(resumed) {
		return skipThrough(in, slot, resumed.Add(-time.Nanosecond), reasonPaused)
	}
	if st.SkipNext > 0 {
		d := skipThrough(in, slot, slot, reasonOperator)
		d.SkipNext = st.SkipNext - 1
		return d
	}
	held := false // the slot waited for the previous fire (buffer policies)
	if r := st.Running; r != nil && pol.Overlap != kvstore.OverlapAllow {
		if in.Now.Before(r.Deadline) {
			switch pol.Overlap {
			case kvstore.OverlapSkip:
				return skipThrough(in, slot, slot, "overlap: "+r.SlotID+" is still running")
			case kvstore.OverlapBufferOne, kvstore.OverlapBufferAll:
				return Decision{Action: ActWait, Until: r.Deadline}
			case kvstore.OverlapCancelOther:
				d := claim(in, slot, "")
				d.Cancel = r.SlotID
				return d
			}
		}
		held = !slot.After(r.Deadline)
	}
	if !st.LastDone.IsZero() && !slot.After(st.LastDone) && (pol.Overlap == kvstore.OverlapBufferOne || pol.Overlap == kvstore.OverlapBufferAll) {
		held = true
	}
	if held {
		d := claim(in, slot, "")
		if pol.Overlap == kvstore.OverlapBufferOne {
			// One buffered fire; the slots that came due meanwhile are
			// skipped.
			if n := d.Next; !n.IsZero() && !n.After(in.Now) {
				rest := skipThrough(in, n, in.Now, "overlap: buffer_one keeps one fire")
				d.takeMissed(rest)
				d.Next, d.Step = rest.Next, rest.Step
			}
		}
		return d
	}
	threshold := in.threshold()
	if in.Now.Sub(slot) <= threshold {
		return claim(in, slot, "")
	}
	// A misfire.
	oldest := in.Now.Add(-pol.CatchupWindow)
	switch pol.Misfire {
	case kvstore.MisfireFireAll:
		if slot.Before(oldest) {
			// Missed: the slots late past the threshold and older than the
			// window. A window shorter than the threshold leaves the slots
			// within the threshold to fire, as they would under any policy.
			through := oldest
			if onTime := in.Now.Add(-threshold); onTime.Before(through) {
				through = onTime
			}
			return misfire(in, slot, through.Add(-time.Nanosecond), threshold, "older than the catch-up window "+pol.CatchupWindow.String())
		}
		return claim(in, slot, kvstore.ReasonCatchup)
	case kvstore.MisfireFireOnce:
		// The slots late past the threshold collapse into one catch-up
		// fire, of the latest of them; the ones before it are recorded
		// merged into it. Slots within the threshold are not misfires:
		// they fire as usual afterwards, as under skip.
		last, lastNom, count := slot, nominalOf(in, slot), 0
		for n, nom := last, lastNom; !n.IsZero() && in.Now.Sub(n) > threshold && count < maxMissedCount; count++ {
			last, lastNom = n, nom
			st := cronx.ExplainAfter(in.Schedule, n, nom)
			n, nom = st.At, st.Nominal
		}
		if last.Before(oldest) {
			break // nothing recent enough to catch up
		}
		d := claimFrom(in, last, lastNom, kvstore.ReasonCatchup)
		if last.After(slot) {
			d.takeMissed(misfire(in, slot, last.Add(-time.Nanosecond), threshold, "fire_once: merged into the catch-up fire of "+stamp(last)))
		}
		return d
	}
	// skip: the slots later than the threshold are missed; those within
	// it (the one due as a scheduler comes back, say) fire as usual.
	return misfire(in, slot, in.Now.Add(-threshold-time.Nanosecond), threshold, "")
}

// takeMissed makes the slots o records as not fired d's too (a claim
// that records the slots before it, or after it, at once).
func (d *Decision) takeMissed(o Decision) {
	d.Missed, d.FirstMissed, d.LastMissed, d.FirstMissedNominal = o.Missed, o.FirstMissed, o.LastMissed, o.FirstMissedNominal
	d.MissedReason, d.MissedThreshold, d.MissedNote, d.MissedAtLeast = o.MissedReason, o.MissedThreshold, o.MissedNote, o.MissedAtLeast
}

// misfire records the slots from slot through until as missed by the
// misfire policy.
func misfire(in Input, slot, until time.Time, threshold time.Duration, note string) Decision {
	d := skipThrough(in, slot, until, MisfireReason(in.Now.Sub(slot), threshold, note))
	d.MissedThreshold, d.MissedNote = threshold, note
	return d
}

// MisfireReason is the ledger reason of a slot missed late by late: e.g.
// "misfire: 3m0.5s late, threshold 1m0s; fire_once catches up the latest
// only".
func MisfireReason(late, threshold time.Duration, note string) string {
	r := fmt.Sprintf("misfire: %s late, threshold %s", late.Round(time.Millisecond), threshold)
	if note != "" {
		r += "; " + note
	}
	return r
}

// claim claims slot and plans the one after it.
func claim(in Input, slot time.Time, reason string) Decision {
	return claimFrom(in, slot, nominalOf(in, slot), reason)
}

// claimFrom claims slot, which came from occurrence nominal (zero: slot
// itself), and plans the one after it: from that occurrence, so that a
// calendar's later occurrences moved before this fire's are not passed
// over (cronx.ExplainAfter).
func claimFrom(in Input, slot, nominal time.Time, reason string) Decision {
	step := cronx.ExplainAfter(in.Schedule, slot, nominal)
	return Decision{Action: ActClaim, Slot: slot, Reason: reason, Next: step.At, Step: step}
}

// nominalOf is the occurrence slot came from when the state says so (its
// next slot, moved by a calendar), else the zero time (slot itself).
func nominalOf(in Input, slot time.Time) time.Time {
	if st := in.State; st != nil && slot.Equal(st.Next) {
		return st.NextNominal
	}
	return time.Time{}
}

// skipThrough records the slots from slot through until (inclusive) as not
// fired and plans the first slot after until. It walks at most
// maxMissedCount slots; past that an Interval counts the rest exactly and
// any other schedule reports a lower bound (Decision.MissedAtLeast).
func skipThrough(in Input, slot, until time.Time, reason string) Decision {
	nom := nominalOf(in, slot)
	d := Decision{Action: ActMisfire, Slot: slot, FirstMissed: slot, FirstMissedNominal: nom, MissedReason: reason, SkipNext: in.State.SkipNext}
	n, lastNom := slot, nom
	for !n.IsZero() && !n.After(until) {
		d.Missed++
		d.LastMissed, lastNom = n, nom
		if d.Missed == maxMissedCount {
			break
		}
		st := cronx.ExplainAfter(in.Schedule, n, nom)
		n, nom = st.At, st.Nominal
	}
	from := d.LastMissed
	if d.Missed == maxMissedCount {
		from = until
		d.MissedAtLeast = true
		if iv, ok := in.Schedule.(cronx.Interval); ok {
			if c, ok := iv.Count(slot.Add(-time.Nanosecond), until); ok {
				d.Missed, d.MissedAtLeast = int(min(c, uint64(math.MaxInt))), false
				if after := iv.Next(until); !after.IsZero() {
					d.LastMissed = after.Add(-iv.Every)
				}
			}
		}
	}
	if from.Equal(d.LastMissed) {
		d.Step = cronx.ExplainAfter(in.Schedule, from, lastNom)
	} else {
		d.Step = cronx.Explain(in.Schedule, from)
	}
	d.Next = d.Step.At
	return d
}

// replanAfterClaim re-plans in's state from the slot after its last claim,
// why being how the record was found to pass over that slot
// (worker.passesOver).
func replanAfterClaim(in Input, why string) Decision {
	c := in.State.Claim
	step := cronx.ExplainAfter(in.Schedule, c.Slot, c.Nominal)
	return Decision{Action: ActReplan, Next: step.At, Step: step, Implausible: why}
}

// afterClaim is the slot the recurrence gives after st's last regular
// claim (zero: none, or no such claim).
func afterClaim(s cronx.Schedule, st *kvstore.State) time.Time {
	c := st.Claim
	if c == nil || c.SlotID != "" {
		return time.Time{}
	}
	return cronx.ExplainAfter(s, c.Slot, c.Nominal).At
}

// replanFrom is where an implausible state is planned again from: as if
// it had no record (its spec's write: firstAfter), but after the slot it
// last claimed when that is later and due. Not from now: the slots due
// since its last claim would be passed over without a trace (issue 51: a
// restored backup whose next slot lay beyond the recurrence lost the
// three slots due while its claim ran out). The engine then catches the
// plan up with the fire stream before it writes it (worker.act), so that
// what fired is not fired again. The result is always plausible: its next
// slot is after the claim, and not before the spec's write.
func replanFrom(in Input) time.Time {
	from := firstAfter(in)
	if c := in.State.Claim; c != nil && c.SlotID == "" && c.Slot.After(from) && !c.Slot.After(in.Now) {
		from = c.Slot
	}
	return from
}

// implausible says why a state's next slot cannot have come from this
// spec, or "" when it can. Re-planning from now always yields a plausible
// state, so an implausible one is re-planned once, never in a loop.
func implausible(in Input, slot time.Time) string {
	st := in.State
	if c := st.Claim; c != nil && c.SlotID == "" && !slot.After(c.Slot) && !c.Slot.After(in.Now) {
		return fmt.Sprintf("next slot %s is not after the slot last claimed, %s", stamp(slot), stamp(c.Slot))
	}
	if in.At.IsZero() && !in.Created.IsZero() && slot.Before(in.Created.Add(-in.threshold())) {
		return fmt.Sprintf("next slot %s is before the schedule was created (%s)", stamp(slot), stamp(in.Created))
	}
	if !slot.After(in.Now) {
		return ""
	}
	// Plausible: at most the first slot after now plus the threshold (a
	// scheduler whose clock runs ahead plans from a later now), or the first
	// slot after now (what a re-plan writes), or within the threshold.
	horizon := in.Now.Add(in.threshold())
	limit := in.Schedule.Next(horizon)
	if !limit.IsZero() && !slot.After(limit) {
		return ""
	}
	if first := in.Schedule.Next(in.Now); !first.IsZero() && !slot.After(first) || !slot.After(horizon) {
		return ""
	}
	if nom := st.NextNominal; !nom.IsZero() && !nom.After(horizon) {
		// A slot a calendar moved from an occurrence already due: found
		// from that occurrence (cronx.ExplainAfter), so not by Next from
		// now. Plausible when that occurrence does move to it.
		if e := cronx.Explain(in.Schedule, nom.Add(-time.Nanosecond)); e.Nominal.Equal(nom) && e.At.Equal(slot) {
			return ""
		}
	}
	if limit.IsZero() {
		return fmt.Sprintf("next slot %s is beyond the recurrence's end", stamp(slot))
	}
	return fmt.Sprintf("next slot %s is beyond the recurrence's next slot %s (misfire threshold %s)", stamp(slot), stamp(limit), in.threshold())
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Due is when the engine must look at a schedule again; ok is false when
// nothing can happen until the spec or state changes. It is Decide's
// answer read as a time: now for any action, Until for a wait.
func Due(in Input) (due time.Time, ok bool) {
	d := Decide(in)
	if d.Action != ActWait {
		return in.Now, true
	}
	return d.Until, !d.Until.IsZero()
}

// claimDue is when a claim not known to be settled needs a look: when the
// next slot is due (its tick is looked up: usually it is there, as after a
// restart), or when the claim expires (a takeover if the tick is missing),
// whichever is first, unless it was already looked up while live.
func claimDue(in Input) time.Time {
	st, c := in.State, in.State.Claim
	if lapsedClaim(*c, in.TenureSince) {
		return in.Now
	}
	expires := claimttl.Expiry(*c, in.Now, in.MaxClaim)
	if c.Token != in.Checked && !st.Ended && !st.Next.IsZero() && st.Next.Before(expires) {
		return st.Next
	}
	return expires
}

// lapsedClaim reports whether claim c was made before this instance's
// tenure of its shard began at since (zero: unknown): by a previous owner,
// whose lease has lapsed or was handed back since. Such a claim is not
// waited out to its expiry. A SIGKILLed owner's last claims otherwise held
// their slots for a whole claim TTL after the takeover (the soak's minute
// after each kill: p99 lateness 8-31 s). Taking the slot over before the
// claim expires is safe for exactly-once because of the duplicate window.
// The previous owner publishes a claim's slot at the latest by its expiry
// plus the publish budget, which that window covers (checkDuplicateWindow).
// So if both publish, the stream keeps the first.
func lapsedClaim(c kvstore.Claim, since time.Time) bool {
	return !since.IsZero() && c.At.Before(since)
}

// deref is *t, or the zero time for nil.
func deref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}
