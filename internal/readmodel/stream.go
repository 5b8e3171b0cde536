package readmodel

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// A state record behind the fire stream (docs/protocol.md, "Behind the
// stream"): a recurring schedule's record written by a window claim says
// which slot fires next, the stream which slots did fire. A record left
// behind (restored, put back by hand, or written by an owner that died
// before recording its last fires) has its next slot, or a later one, in
// the stream already. The engine reads the last fire before it decides
// such a record (fires, lagging.go); readers are shown the record caught
// up the same way (Model.CaughtUp).

// maxCounted bounds the slots counted between a record and the stream's
// last fire (as the engine bounds a misfire count).
const maxCounted = 100_000

// BehindStream returns st, the state record of schedule id whose compiled
// recurrence is sched with plan, caught up with the schedule's last fire
// in the stream if that is a regular slot at or after st.Next (with n,
// the slots in between counted as fires), nil if the record is not behind
// the stream.
func BehindStream(ctx context.Context, store *jsstore.Store, id string, sched cronx.Schedule, plan string, st *kvstore.State) (caught *kvstore.State, n uint64, err error) {
	f, err := store.LastFired(ctx, id)
	switch {
	case errors.Is(err, kvstore.ErrNotFound), errors.Is(err, jetstream.ErrStreamNotFound):
		return nil, 0, nil // nothing in the stream says otherwise
	case err != nil:
		return nil, 0, err
	}
	if f.SlotID != kvstore.SlotID(id, f.Slot) {
		// An operator's extra slot, written with its record: the record
		// shows every regular fire before it.
		return nil, 0, nil
	}
	caught, n = CaughtUpWith(sched, plan, st, f)
	return caught, n, nil
}

// CaughtUpWith is BehindStream's answer once f, the schedule's last
// regular fire, is known.
func CaughtUpWith(sched cronx.Schedule, plan string, st *kvstore.State, f jsstore.Fired) (*kvstore.State, uint64) {
	if f.Slot.Before(st.Next) || sched == nil || st.Plan != plan {
		// A slot before the record's next one, or a plan the slot did not
		// come from (the re-plan moves on from now).
		return nil, 0
	}
	if cl := st.Claim; cl != nil && cl.SlotID == "" && !cl.Slot.Before(f.Slot) {
		// The record's claim is that fire (or a later slot): the record
		// counts it already, and only its next slot has not moved past
		// it yet (a window record's check wrote the catch-up: demote).
		// Decide moves past the claim; counting the slots again would
		// count them twice.
		return nil, 0
	}
	up := *st
	var n uint64
	for s, nom := st.Next, st.NextNominal; !s.IsZero() && !s.After(f.Slot) && n < maxCounted; n++ {
		step := cronx.ExplainAfter(sched, s, nom)
		s, nom = step.At, step.Nominal
	}
	up.Fires += n
	at := f.At.UTC()
	up.Claim = &kvstore.Claim{Slot: f.Slot.UTC(), Token: "stream-" + strconv.FormatUint(f.Seq, 10), Owner: f.Instance,
		At: at, Expires: at, Seq: f.Seq, Window: kvstore.ClaimFromStream}
	return &up, n
}

// PlannedBehind is BehindStream for a recurring schedule without a state
// record, planned from its spec's write (the engine's first slot after
// it): such a schedule has fired nothing unless its record was deleted by
// hand, and then the stream holds its fires. Its last regular fire is read
// (LastRegularFire). Nil when none is at or after the plan's next slot:
// the slots from the plan on are owed, and follow the misfire policy.
func PlannedBehind(ctx context.Context, store *jsstore.Store, id string, sched cronx.Schedule, plan string, st *kvstore.State) (*kvstore.State, uint64, error) {
	f, found, err := LastRegularFire(ctx, store, id)
	if err != nil || !found {
		return nil, 0, err // never fired, or only extra slots: every regular slot is owed
	}
	caught, n := CaughtUpWith(sched, plan, st, f)
	return caught, n, nil
}

// LastRegularFire is schedule id's last regular fire in the stream (not an
// operator's trigger or backfill): the last fire when that is a regular
// slot, else the stream's fires of the schedule read back to the last
// regular one. found is false when the stream holds none (within its
// retention).
func LastRegularFire(ctx context.Context, store *jsstore.Store, id string) (f jsstore.Fired, found bool, err error) {
	f, err = store.LastFired(ctx, id)
	switch {
	case errors.Is(err, kvstore.ErrNotFound), errors.Is(err, jetstream.ErrStreamNotFound):
		return jsstore.Fired{}, false, nil
	case err != nil:
		return jsstore.Fired{}, false, err
	}
	if f.SlotID == kvstore.SlotID(id, f.Slot) {
		return f, true, nil
	}
	err = store.FiresOf(ctx, id, func(g jsstore.Fired) bool {
		if g.SlotID == kvstore.SlotID(id, g.Slot) {
			f, found = g, true
		}
		return true
	})
	return f, found, err
}

// lastFiredOneShot reports whether the stream's last fire of one-shot id
// is its slot at (a one-shot fired in a window has its record written a
// little after its fire: fires.Config.RecordLag), with that fire's slot.
func lastFiredOneShot(ctx context.Context, store *jsstore.Store, id string, at time.Time) (time.Time, bool) {
	f, err := store.LastFired(ctx, id)
	if err != nil || f.SlotID != kvstore.SlotID(id, at) {
		return time.Time{}, false
	}
	return f.Slot, true
}
