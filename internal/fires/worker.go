package fires

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jetsched/jetsched/internal/claimttl"
	"github.com/jetsched/jetsched/internal/slotid"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// maxSteps bounds the decide-and-act rounds of one job, so that a busy
// schedule goes back through the loop (and the other schedules get their
// turn) after a few steps.
const maxSteps = 4

// worker runs jobs: it decides, acts on NATS, and reports the new state.
type worker struct{ e *Engine }

// slot runs one slot's job: the per-slot protocol (docs/protocol.md, "Per
// slot").
func (w worker) slot(ctx context.Context, j slotJob) slotResult {
	r := w.steps(ctx, j)
	// Progress: a state written (a fire claimed, a misfire recorded, a
	// re-plan) or a claim settled. Waiting and looking up do not count.
	r.progress = r.err == nil && (r.stateRev != j.stateRev || r.settledNow)
	return r
}

// steps decides and acts for one job, a few steps at most.
func (w worker) steps(ctx context.Context, j slotJob) slotResult {
	r := slotResult{id: j.id, state: j.state, stateRev: j.stateRev, planned: j.planned, settled: j.settled, checked: j.checked, uncounted: j.uncounted}
	if j.remove {
		w.removeState(ctx, j)
		r.removed = true
		return r
	}
	if len(j.dones) > 0 && r.state != nil && !r.planned {
		w.applyDones(ctx, j, &r)
	}
	if j.planned && j.stateRev > 0 {
		switch ok, err := w.specCurrent(ctx, j); {
		case err != nil:
			r.err = err
			return r
		case !ok:
			r.specStale = true
			w.e.step(StepSpecStale)
			return r
		}
	}
	if j.verify && !w.catchUp(ctx, j, &r) {
		return r
	}
	conflicts := 0
	var created time.Time
	gapChecked := false
	for range maxSteps {
		now := w.e.cfg.Clock.Now()
		in := w.e.decideInput(now, j.id, j.target, j.compiled, j.written, r.state, r.settled, r.checked)
		if created.IsZero() && w.predatesSpec(in) {
			created = w.specCreated(ctx, j.id)
		}
		in.Created = created
		d := Decide(in)
		if !gapChecked && w.mayPassOver(j, in) {
			gapChecked = true
			switch why, err := w.passesOver(ctx, j, in); {
			case err != nil:
				r.err = err
				return r
			case why != "":
				d = replanAfterClaim(in, why)
			}
		}
		if d.Action == ActWait {
			return r
		}
		err := w.act(ctx, j, d, now, &r)
		if errors.Is(err, kvstore.ErrConflict) {
			// Someone else wrote the state: re-read and re-decide.
			conflicts++
			st, rev, gerr := w.e.store.GetState(ctx, j.id)
			switch {
			case gerr == nil && rev > r.stateRev:
				r.state, r.stateRev, r.planned = &st, rev, false
				if j.verify && !w.catchUp(ctx, j, &r) {
					return r
				}
				continue
			case errors.Is(gerr, kvstore.ErrNotFound):
				// The record was deleted: the schedule was removed (and
				// perhaps added again). Only the loop knows whether its
				// spec still exists, so it decides again from a clean
				// slate; this job must not resurrect the old schedule.
				r.state, r.stateRev, r.planned, r.absent = nil, 0, false, true
				return r
			}
			// A stale read (R3 direct get) or an error: back off via the loop.
			r.err = err
			return r
		}
		if err != nil {
			r.err = err
			return r
		}
		if d.Action == ActClaim || d.Action == ActTrigger || d.Action == ActBackfill {
			return r // one fire per job: others get their turn
		}
	}
	if conflicts == maxSteps {
		// Every step lost its CAS: back off through the loop rather than
		// spin against whoever keeps writing.
		r.err = fmt.Errorf("fire: state of %s changed at each of %d steps: %w", j.id, maxSteps, kvstore.ErrConflict)
	}
	return r
}

// StepSpecStale: a schedule whose state record was deleted was not planned
// anew, because its spec is no longer the one this instance holds (a
// removal whose spec delete its watch has not brought yet: specCurrent).
const StepSpecStale Step = "spec-stale"

// specCurrent reports whether j's spec is still the stored one. It is
// asked before a schedule whose state record was deleted (j.stateRev is
// then the delete marker's, or the record's that a worker found deleted)
// is decided from a plan: such a delete is most often a removal's (a
// removal deletes the spec, then the record: Store.DeleteSpec), and this
// instance's spec watch, which goes through a decoder, may bring the
// spec's delete after its state watch brought the record's. Planned from the spec it
// still held, the schedule was owed its slots from the misfire threshold
// back, and fired one of them after it was removed: the 1-hour soak of 5
// December fired a slot 59.6 s late, 3 ms after its schedule was removed.
// A record deleted by hand leaves the spec current, and the schedule is
// planned anew as before.
func (w worker) specCurrent(ctx context.Context, j slotJob) (bool, error) {
	kv, err := w.e.store.SpecRecord(ctx, j.id)
	switch {
	case errors.Is(err, kvstore.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("fire: spec of %s, to check it before its deleted state record is planned anew: %w", j.id, err)
	}
	return kv.Revision() == j.specRev, nil
}

// catchUp starts r's decision from the fire stream's last fire if r's
// state record is behind it (see lagging); false, with r.err set, when
// the stream could not be asked.
func (w worker) catchUp(ctx context.Context, j slotJob, r *slotResult) bool {
	if r.state == nil || r.planned && j.at != 0 {
		return true // a one-shot is looked up as it fires (endIfKnown)
	}
	j.planned = r.planned
	caught, err := w.lookupFor(j)(ctx, j.id, j.compiled, r.state)
	if err != nil {
		r.err = fmt.Errorf("fire: last fire of %s, to check its state record against: %w", j.id, err)
		return false
	}
	if caught != nil {
		r.state = caught // written by the decision's move past it, on the record's revision
	}
	return true
}

// predatesSpec reports whether a recurring schedule's next slot is older
// than its spec's current revision (by more than the misfire threshold):
// then it may be older than the schedule itself, which only the spec's
// history tells (see Input.Created).
func (w worker) predatesSpec(in Input) bool {
	st := in.State
	return st != nil && in.At.IsZero() && !in.Written.IsZero() && !st.Next.IsZero() && st.Next.Before(in.Written.Add(-in.threshold()))
}

// specCreated is when schedule id was created, or the zero time when its
// spec's history does not tell.
func (w worker) specCreated(ctx context.Context, id string) time.Time {
	created, known, err := w.e.store.SpecCreated(ctx, id)
	if err != nil || !known {
		return time.Time{}
	}
	return created
}

// removeState deletes the state of a schedule whose spec was deleted, so
// that an id added again starts clean. A delete that loses its CAS re-reads
// the record and deletes what it finds, unless it was written after the
// spec was deleted (then it belongs to the schedule added again).
func (w worker) removeState(ctx context.Context, j slotJob) {
	rev := j.stateRev
	for range maxControlAttempts {
		err := w.e.store.DeleteState(ctx, j.id, rev)
		if err == nil || !errors.Is(err, kvstore.ErrConflict) {
			if err != nil {
				w.e.log.Warn("delete state of removed schedule", "schedule", j.id, "err", err)
			}
			return
		}
		st, cur, gerr := w.e.store.GetState(ctx, j.id)
		switch {
		case errors.Is(gerr, kvstore.ErrNotFound):
			return // deleted already (schedule rm deletes it with the spec)
		case gerr != nil && !errors.Is(gerr, kvstore.ErrInvalid):
			w.e.log.Warn("delete state of removed schedule", "schedule", j.id, "err", gerr)
			return
		case gerr == nil && !j.removedAt.IsZero() && st.UpdatedAt.After(j.removedAt):
			return // written since: the schedule was added again
		}
		rev = cur
	}
}

// endIfKnown ends a one-shot that has no state record if its slot is in
// the ledger: it fired (or was recorded) before its record was written
// (see deferRecords) or after it was lost, and must neither fire again
// nor be recorded missed. ended reports that it did.
func (w worker) endIfKnown(ctx context.Context, j slotJob, slot, now time.Time, r *slotResult) (ended bool, err error) {
	if !r.planned || j.at == 0 {
		return false, nil
	}
	if j.listed != nil && j.listed.slot == slot.UnixNano() {
		// Its ended list names the slot, but the spec was written after
		// the list: the same one-shot edited, or one added anew.
		switch applies, err := w.listedApplies(ctx, j); {
		case err != nil:
			return false, err
		case applies:
			return true, w.update(ctx, j, endedState(*r.state, *j.listed, j.compiled.Plan, now, w.e.cfg.Instance), r)
		}
	}
	switch known, err := w.e.slotKnown(ctx, j.id, kvstore.SlotID(j.id, slot)); {
	case err != nil:
		return false, err
	case !known:
		return false, nil
	}
	st := w.next(r, now)
	st.Next, st.Ended = time.Time{}, true
	return true, w.update(ctx, j, st, r)
}

// act carries out one decision and updates r.
func (w worker) act(ctx context.Context, j slotJob, d Decision, now time.Time, r *slotResult) error {
	plan := j.compiled.Plan
	switch d.Action {
	case ActInit:
		st := plannedState(plan, d, now)
		r.state, r.planned = st, true
		if _, keep := inMemoryPlan(plan, d, now); keep {
			return nil // kept in memory, as the loop does (see loop.plan)
		}
		// The plan skips slots, or does not pack: write it now, with the
		// skips in the ledger.
		if err := w.update(ctx, j, w.next(r, now), r); err != nil {
			return err
		}
		w.e.recordSkipped(ctx, j, d.Step, now)
		return nil

	case ActReplan:
		if r.state != nil && r.state.Plan == "" && !r.planned {
			// A record an operator created on a one-shot whose fire is in
			// an ended list: it keeps the action and ends.
			switch applies, err := w.listedApplies(ctx, j); {
			case err != nil:
				return err
			case applies:
				return w.update(ctx, j, endedState(*r.state, *j.listed, plan, now, w.e.cfg.Instance), r)
			}
		}
		st := w.next(r, now)
		st.Plan = plan
		setNext(&st, d)
		if d.Implausible != "" && j.at == 0 {
			// Planned again as if it had no record: caught up with the
			// stream's last regular fire, so that slots that fired are
			// neither fired again nor recorded missed (replanFrom).
			caught, _, err := plannedBehind(ctx, w.e.store, j.id, j.compiled, &st)
			if err != nil {
				return fmt.Errorf("fire: last fire of %s, to re-plan its implausible state from: %w", j.id, err)
			}
			if caught != nil {
				st = *caught
			}
		}
		if err := w.update(ctx, j, st, r); err != nil {
			return err
		}
		if d.Implausible != "" {
			w.e.replanned(j, d, now)
		}
		w.e.recordSkipped(ctx, j, d.Step, now)
		return nil

	case ActMisfire:
		if ended, err := w.endIfKnown(ctx, j, d.Slot, now, r); ended || err != nil {
			return err // fired: not missed
		}
		st := w.next(r, now)
		setNext(&st, d)
		st.SkipNext = d.SkipNext
		countNotFired(&st, d)
		if p := st.Paused; p != nil && !p.Until.IsZero() && !now.Before(p.Until) {
			st.Paused, st.ResumedAt = nil, p.Until
		}
		if err := w.update(ctx, j, st, r); err != nil {
			return err
		}
		w.e.recordMissed(ctx, j, d, now)
		w.e.recordSkipped(ctx, j, d.Step, now)
		return nil

	case ActCheckClaim:
		return w.checkClaim(ctx, j, now, r)

	case ActClaim:
		if ended, err := w.endIfKnown(ctx, j, d.Slot, now, r); ended || err != nil {
			return err
		}
		st := w.next(r, now)
		c := w.newClaim(d.Slot, now)
		if prev := *r.state; prev.NextReason != "" && d.Slot.Equal(prev.Next) {
			c.Reason, c.Note, c.Nominal = kvstore.ReasonMoved, prev.NextReason, prev.NextNominal
		}
		if d.Reason != "" {
			c.Reason = d.Reason
		}
		c.Cancel = d.Cancel
		setNext(&st, d)
		st.Fires++
		countNotFired(&st, d)
		w.track(&st, j, c)
		return w.claimAndDispatch(ctx, j, st, c, r, func() {
			if d.Missed > 0 {
				w.e.recordMissed(ctx, j, d, now)
			}
			w.e.recordSkipped(ctx, j, d.Step, now)
		})

	case ActTrigger:
		st := w.next(r, now)
		t := st.Triggers[0]
		st.Triggers = append([]kvstore.Trigger(nil), st.Triggers[1:]...)
		c := w.newClaim(t.At, now)
		c.Reason, c.Note, c.SlotID, c.Trace = kvstore.ReasonTrigger, t.Note, slotid.Extra(j.id, "trigger", t.At), t.Trace
		st.Fires++
		w.track(&st, j, c)
		return w.claimAndDispatch(ctx, j, st, c, r, nil)

	case ActBackfill:
		st := w.next(r, now)
		b := *st.Backfill
		if d.Slot.IsZero() {
			st.Backfill = nil
			if err := w.update(ctx, j, st, r); err != nil {
				return err
			}
			w.e.log.Info("backfill finished", "schedule", j.id, "from", b.From, "to", b.To)
			return nil
		}
		b.Cursor, b.Done = d.Slot.UTC(), b.Done+1
		b.NotBefore = now.Add(time.Duration(float64(time.Second) / b.Rate)).UTC()
		st.Backfill = &b
		c := w.newClaim(d.Slot, now)
		c.Reason, c.Note, c.SlotID = kvstore.ReasonBackfill, b.Note, slotid.Extra(j.id, "backfill", d.Slot)
		st.Fires++
		return w.claimAndDispatch(ctx, j, st, c, r, nil)
	}
	return fmt.Errorf("fire: unexpected action %s", d.Action)
}

// next starts the state this instance writes next.
func (w worker) next(r *slotResult, now time.Time) kvstore.State {
	st := *r.state
	st.UpdatedAt, st.Owner = now.UTC(), w.e.cfg.Instance
	return st
}

func (w worker) newClaim(slot, now time.Time) *kvstore.Claim {
	return &kvstore.Claim{
		Slot: utc(slot), Token: randomID(), Owner: w.e.cfg.Instance,
		At: now.UTC(), Expires: now.Add(w.e.cfg.ClaimTTL).UTC(),
	}
}

// track records a claimed fire as running, for the overlap policies.
func (w worker) track(st *kvstore.State, j slotJob, c *kvstore.Claim) {
	if j.compiled.policy().Overlap == kvstore.OverlapAllow {
		return
	}
	st.Running = &kvstore.Running{SlotID: c.ID(j.id), Slot: c.Slot, Since: c.At,
		Deadline: c.At.Add(j.compiled.policy().CompletionTimeout)}
}

// claimAndDispatch writes the claim by CAS, runs after (observations of the
// decision), then publishes and settles the slot.
func (w worker) claimAndDispatch(ctx context.Context, j slotJob, st kvstore.State, c *kvstore.Claim, r *slotResult, after func()) error {
	st.Claim = c
	w.e.step(StepBeforeClaim)
	if err := w.update(ctx, j, st, r); err != nil {
		return err
	}
	w.e.step(StepAfterClaim)
	if after != nil {
		after()
	}
	settled, err := w.e.dispatch(ctx, j, *c)
	if err != nil {
		// The claim stays unsettled; when it expires, an instance (this
		// one included) takes it over.
		return err
	}
	if settled {
		r.settle(c.Token)
	} // else the in-flight tracker settles it when its publish is acknowledged
	return nil
}

// checkClaim settles an expired claim that this instance does not know to
// be settled: its slot is the schedule's last fire in the stream or has a
// ledger entry, or the slot is taken over and re-published.
func (w worker) checkClaim(ctx context.Context, j slotJob, now time.Time, r *slotResult) error {
	old := *r.state.Claim
	known, err := w.e.slotKnown(ctx, j.id, old.ID(j.id))
	switch {
	case err != nil:
		return err
	case known:
		w.e.step(StepClaimSettled)
		r.settle(old.Token)
		return nil
	case now.Before(claimttl.Expiry(old, now, w.e.maxClaim())) && !lapsedClaim(old, w.e.tenureSince(j.id, r.state, "")):
		r.checked = old.Token // its owner may still be publishing
		return nil
	case w.e.beyondEvidence(old, now):
		w.e.outcomeUnknown(ctx, j, old, now)
		w.e.step(StepOutcomeUnknown)
		r.settle(old.Token)
		return nil
	}
	// Take the slot over by CAS, so that one instance at a time does it.
	c := old
	c.Token, c.Owner, c.At, c.Expires = randomID(), w.e.cfg.Instance, now.UTC(), now.Add(w.e.cfg.ClaimTTL).UTC()
	st := w.next(r, now)
	st.Claim = &c
	if err := w.update(ctx, j, st, r); err != nil {
		return err
	}
	w.e.log.Info("taking over an expired claim", "schedule", j.id, "slot", old.Slot, "previous_owner", old.Owner)
	if err := w.e.dispatchTakeover(ctx, j, old, c); err != nil {
		return err
	}
	r.settle(c.Token)
	return nil
}

// errNotOwned stops a job before a write when its shard's lease guard has
// closed (90% of the lease TTL without a renewal, by this instance's
// clock): whatever delayed the job since its dispatch (a queue behind
// workers stuck on a lost server, a starved process), nothing is claimed
// or recorded past the guard. The schedule waits for its shard again.
var errNotOwned = errors.New("fire: the shard's lease guard closed before the write")

// guard returns errNotOwned (wrapped, naming the schedule) unless this
// instance owns schedule id's shard now.
func (w worker) guard(id string) error {
	if !w.e.leases.owns(kvstore.ShardOf(id, w.e.shards)) {
		return fmt.Errorf("%w: schedule %s", errNotOwned, id)
	}
	return nil
}

// update writes st by CAS on the revision r holds, if the shard is still
// owned (guard). The first write of a planned schedule creates its record
// (at revision 0, or over the delete marker of an earlier one).
func (w worker) update(ctx context.Context, j slotJob, st kvstore.State, r *slotResult) error {
	if err := w.guard(j.id); err != nil {
		return err
	}
	var rev uint64
	var err error
	if r.uncounted > 0 {
		st.Fires -= min(st.Fires, r.uncounted) // fires the stream took for duplicates (see settle)
	}
	if r.planned || r.state == nil {
		// No record: create it, over the delete marker of an earlier one
		// if there is one (whatever its revision).
		rev, err = w.e.store.CreateState(ctx, j.id, st)
	} else {
		rev, err = w.e.store.UpdateState(ctx, j.id, st, r.stateRev)
	}
	if st.Claim != nil && (r.state == nil || r.state.Claim == nil || r.state.Claim.Token != st.Claim.Token) {
		w.e.cfg.Observer.Claimed(errors.Is(err, kvstore.ErrConflict))
	}
	if err != nil {
		return err
	}
	r.state, r.stateRev, r.planned, r.uncounted = &st, rev, false, 0
	return nil
}

// countNotFired adds a decision's slots that do not fire to the state's
// counters: misfires to Missed (whatever the misfire policy, also those a
// catch-up claim passes over), pauses, overlaps and operator skips to
// Skipped, and calendar skips before the next slot to Skipped.
func countNotFired(st *kvstore.State, d Decision) {
	if d.Missed > 0 {
		if notFiredStatus(d.MissedReason) == kvstore.TickMissed {
			st.Missed += uint64(d.Missed)
			st.MissedAtLeast = st.MissedAtLeast || d.MissedAtLeast
		} else {
			st.Skipped += uint64(d.Missed)
		}
	}
	st.Skipped += uint64(d.Step.SkippedCount)
}

// setNext writes a decision's next slot, and why it moved, into st.
func setNext(st *kvstore.State, d Decision) {
	st.Next, st.Ended = utc(d.Next), d.Next.IsZero()
	st.NextReason, st.NextNominal = d.Step.Moved, time.Time{}
	if d.Step.Moved != "" {
		st.NextNominal = utc(d.Step.Nominal)
	}
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}
