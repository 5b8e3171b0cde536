package fires

import (
	"context"

	"github.com/cenkalti/backoff/v4"

	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/internal/pipeline"
	"github.com/jetsched/jetsched/internal/textcut"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// permanent: see natserr.Permanent.
func permanent(err error) bool { return natserr.Permanent(err) }

// maxNoteHeader bounds the Sched-Note header. Notes are capped where they
// are entered (the API and the CLI refuse longer ones); a longer note that
// reached the state record anyway (written straight into the bucket) is
// cut here, so that it can never make a fire unpublishable.
const maxNoteHeader = 1024

// headerNote is note cut to maxNoteHeader bytes on a rune boundary, marked
// when cut.
func headerNote(note string) string { return textcut.Cut(note, maxNoteHeader, "…(cut)") }

// failSlot records a claimed slot that can never be published: its ledger
// entry says failed and why, an event and a warning say so, and the claim
// is settled, so the schedule moves on to its next slot instead of
// retrying the same refusal for ever.
func (e *Engine) failSlot(ctx context.Context, j slotJob, c kvstore.Claim, cause error) error {
	now := e.cfg.Clock.Now().UTC()
	reason := "not publishable: " + cause.Error()
	t := kvstore.Tick{Schedule: j.id, Workflow: j.workflow, Slot: c.Slot, SlotID: c.SlotID, Status: kvstore.TickFailed,
		Reason: reason, Owner: e.cfg.Instance, At: now}
	e.log.Warn("slot cannot be published; recorded as failed, the schedule moves on", "schedule", j.id, "slot", c.ID(j.id), "err", cause)
	e.cfg.Observer.NotFired(string(kvstore.TickFailed), "publish", 1)
	e.event(kvstore.Event{Kind: kvstore.EventFailed, Schedule: j.id, Slot: c.Slot, Reason: reason, Owner: e.cfg.Instance, At: now})
	tctx, cancel := context.WithTimeout(ctx, e.cfg.ClaimTTL)
	defer cancel()
	return backoff.Retry(func() error { return e.store.PutTick(tctx, t) }, natsRetry(tctx))
}

// episodes tells the fire stream's full or unacknowledged stretches:
// one warning, one event and the blocked gauge each (see
// pipeline.Episodes). Nothing is failed: the fires are retried and taken
// over as after any unacknowledged publish.
func (e *Engine) episodes() *pipeline.Episodes {
	stream := e.store.Layout().FiresStream
	return &pipeline.Episodes{Stream: stream, Log: e.log, Quiet: e.cfg.LeaseTTL,
		Blocked: func(r natserr.Refusal, on bool) { e.cfg.Observer.PublishBlocked(string(r), on) },
		Began: func(r natserr.Refusal, id string, err error) {
			e.event(pipeline.EpisodeEvent(r, e.cfg.Instance, stream, id, err, e.cfg.Clock.Now()))
		}}
}
