package fires

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// slotKnown reports whether slot slotID of schedule id needs nothing more:
// it is the schedule's last fire in the fire stream (the stream is the
// ledger of dispatched slots), or it has a ledger entry in sched_ticks (a
// slot recorded as failed, or dispatched by a scheduler from before the
// per-schedule fire subjects). The stream is asked first: a fire of this
// version has no ledger entry.
func (e *Engine) slotKnown(ctx context.Context, id, slotID string) (bool, error) {
	_, published, err := e.store.Published(ctx, id, slotID)
	if err != nil && !errors.Is(err, kvstore.ErrInvalid) && !errors.Is(err, jetstream.ErrStreamNotFound) {
		// (No fire stream: nothing was published into it; the publish
		// will fail until it is back, and retry.)
		return false, err
	}
	if published {
		return true, nil
	}
	if extraSlot(slotID) {
		// A trigger's or backfill's slot may have been published as a
		// duplicate of an earlier run of the same backfill, whose message
		// is not the schedule's last: look for it among all its fires
		// (operator slots are few; a schedule's history is bounded).
		found := false
		err := e.store.FiresOf(ctx, id, func(f jsstore.Fired) bool {
			found = f.SlotID == slotID
			return !found
		})
		if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return false, err
		}
		if found {
			return true, nil
		}
	}
	switch _, err := e.store.GetTick(ctx, slotID); {
	case err == nil:
		return true, nil
	case errors.Is(err, kvstore.ErrNotFound):
		return false, nil
	default:
		return false, err
	}
}

// extraSlot reports whether slotID names a slot outside the recurrence
// ("<id>.trigger-<ms>", "<id>.backfill-<ms>").
func extraSlot(slotID string) bool {
	return strings.ContainsRune(slotID[strings.LastIndexByte(slotID, '.')+1:], '-')
}

// evidenceMargin is how long before the fire stream's retention a claim
// is still taken to be checkable: messages age out of the stream in
// blocks, not at the exact instant.
const evidenceMargin = time.Hour

// beyondEvidence reports whether claim c is older than anything the fire
// stream can still say about it: a slot published then has aged out, so
// that finding no fire of it proves nothing. Such a claim was almost
// surely settled by its owner long ago (an unsettled claim is taken over
// within a claim TTL by any instance holding the shard); publishing it
// again could fire the slot twice.
func (e *Engine) beyondEvidence(c kvstore.Claim, now time.Time) bool {
	r := e.fireRetention
	if r <= 0 {
		return false
	}
	return now.Sub(c.At) > r-min(r/10, evidenceMargin)
}

// outcomeUnknown settles claim c, older than the fire stream's retention,
// without publishing it again: a ledger entry (missed, with the reason),
// a warning and a missed event say so.
func (e *Engine) outcomeUnknown(ctx context.Context, j slotJob, c kvstore.Claim, now time.Time) {
	reason := fmt.Sprintf("outcome unknown: the claim of %s is older than the fire stream's retention (%s); not published again, so that it never fires twice",
		c.At.UTC().Format(time.RFC3339), e.fireRetention)
	e.log.Warn("claim older than the fire stream's retention settled without publishing", "schedule", j.id, "slot", c.ID(j.id), "claimed_at", c.At)
	t := kvstore.Tick{Schedule: j.id, Workflow: j.workflow, Slot: c.Slot, SlotID: c.SlotID, Status: kvstore.TickMissed,
		Reason: reason, Owner: e.cfg.Instance, At: now.UTC()}
	if err := e.store.PutTick(ctx, t); err != nil {
		e.log.Warn("record a claim's unknown outcome", "schedule", j.id, "err", err)
	}
	e.cfg.Observer.NotFired(string(kvstore.TickMissed), "other", 1)
	e.event(kvstore.Event{Kind: kvstore.EventMissed, Schedule: j.id, Slot: c.Slot, Reason: reason, Count: 1, Owner: e.cfg.Instance, At: now.UTC()})
}
