package fire

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// maxSteps bounds the decide-and-act rounds of one job, so that a busy
// schedule goes back through the loop (and the other schedules get their
// turn) after a few steps.
const maxSteps = 4

// worker runs jobs: it decides, acts on NATS, and reports the new state.
type worker struct{ e *Engine }

func (w worker) process(ctx context.Context, j job) result {
	r := result{id: j.id, state: j.state, stateRev: j.stateRev, settled: j.settled, checked: j.checked}
	if j.remove {
		if err := w.e.store.DeleteState(ctx, j.id, j.stateRev); err != nil && !errors.Is(err, kvstore.ErrConflict) {
			w.e.log.Warn("delete state of removed schedule", "schedule", j.id, "err", err)
		}
		r.removed = true
		return r
	}
	for range maxSteps {
		now := w.e.cfg.Clock.Now()
		in := Input{
			Now: now, Plan: j.compiled.Plan, Schedule: j.sched, State: r.state,
			Settled: r.settled, Checked: r.checked, MisfireThreshold: w.e.cfg.MisfireThreshold,
		}
		d := Decide(in)
		if d.Action == ActWait {
			return r
		}
		err := w.act(ctx, j, d, now, &r)
		if errors.Is(err, kvstore.ErrConflict) {
			// Someone else wrote the state: re-read and re-decide.
			st, rev, gerr := w.e.store.GetState(ctx, j.id)
			switch {
			case gerr == nil && rev > r.stateRev:
				r.state, r.stateRev = &st, rev
				continue
			case errors.Is(gerr, kvstore.ErrNotFound):
				r.state, r.stateRev = nil, 0
				continue
			}
			// A stale read (R3 direct get) or an error: back off via the loop.
			r.err = err
			return r
		}
		if err != nil {
			r.err = err
			return r
		}
		if d.Action == ActClaim {
			return r // one fire per job: others get their turn
		}
	}
	return r
}

// act carries out one decision and updates r.
func (w worker) act(ctx context.Context, j job, d Decision, now time.Time, r *result) error {
	plan := j.compiled.Plan
	switch d.Action {
	case ActInit:
		st := kvstore.State{Plan: plan, UpdatedAt: now.UTC()}
		setNext(&st, d)
		rev, err := w.e.store.CreateState(ctx, j.id, st)
		if err != nil {
			return err
		}
		r.state, r.stateRev = &st, rev
		w.e.log.Debug("schedule planned", "schedule", j.id, "next", d.Next)
		w.e.recordSkipped(ctx, j, d.Step, now)
		return nil

	case ActReplan:
		st := *r.state
		st.Plan, st.UpdatedAt = plan, now.UTC()
		setNext(&st, d)
		if err := w.update(ctx, j.id, st, r); err != nil {
			return err
		}
		w.e.recordSkipped(ctx, j, d.Step, now)
		return nil

	case ActMisfire:
		st := *r.state
		st.UpdatedAt = now.UTC()
		setNext(&st, d)
		st.Missed += uint64(d.Missed)
		if err := w.update(ctx, j.id, st, r); err != nil {
			return err
		}
		w.e.recordMissed(ctx, j, d, now)
		w.e.recordSkipped(ctx, j, d.Step, now)
		return nil

	case ActCheckClaim:
		return w.checkClaim(ctx, j, now, r)

	case ActClaim:
		prev := *r.state
		c := &kvstore.Claim{
			Slot: utc(d.Slot), Token: randomID(), Owner: w.e.cfg.Instance,
			At: now.UTC(), Expires: now.Add(w.e.cfg.ClaimTTL).UTC(),
		}
		if prev.NextReason != "" {
			c.Reason, c.Note, c.Nominal = ReasonMoved, prev.NextReason, prev.NextNominal
		}
		st := prev
		st.Claim, st.UpdatedAt = c, now.UTC()
		setNext(&st, d)
		st.Fires++
		if err := w.update(ctx, j.id, st, r); err != nil {
			return err
		}
		w.e.recordSkipped(ctx, j, d.Step, now)
		if err := w.e.dispatch(ctx, j, *c); err != nil {
			// The claim stays unsettled; when it expires, an instance
			// (this one included) takes it over.
			return err
		}
		r.settled = c.Token
		return nil
	}
	return fmt.Errorf("fire: unexpected action %s", d.Action)
}

// checkClaim settles an expired claim that this instance does not know to
// be settled: its tick exists, or the slot is taken over and re-published.
func (w worker) checkClaim(ctx context.Context, j job, now time.Time, r *result) error {
	old := *r.state.Claim
	_, err := w.e.store.GetTick(ctx, kvstore.SlotID(j.id, old.Slot))
	switch {
	case err == nil:
		r.settled = old.Token
		return nil
	case !errors.Is(err, kvstore.ErrNotFound):
		return err
	case now.Before(old.Expires):
		r.checked = old.Token // its owner may still be publishing
		return nil
	}
	// Take the slot over by CAS, so that one instance at a time does it.
	c := old
	c.Token, c.Owner, c.At, c.Expires = randomID(), w.e.cfg.Instance, now.UTC(), now.Add(w.e.cfg.ClaimTTL).UTC()
	st := *r.state
	st.Claim, st.UpdatedAt = &c, now.UTC()
	if err := w.update(ctx, j.id, st, r); err != nil {
		return err
	}
	w.e.log.Info("taking over an expired claim", "schedule", j.id, "slot", old.Slot, "previous_owner", old.Owner)
	if err := w.e.dispatchTakeover(ctx, j, old, c); err != nil {
		return err
	}
	r.settled = c.Token
	return nil
}

func (w worker) update(ctx context.Context, id string, st kvstore.State, r *result) error {
	rev, err := w.e.store.UpdateState(ctx, id, st, r.stateRev)
	if err != nil {
		return err
	}
	r.state, r.stateRev = &st, rev
	return nil
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
