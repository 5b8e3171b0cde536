// Package control carries out an operator's actions on a schedule
// (pause, resume, skip, trigger, backfill) by compare-and-swap on its
// state record. It is not the engine: running schedulers pick the change
// up from their watch of the state bucket. The admin API, the console,
// the CLI and pkg/client use it.
package control

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/slotid"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Control carries out operator actions on a schedule's state: pause and
// resume, skip the next slots, trigger an extra fire, backfill a range.
// Each is a compare-and-swap on the state record, retried on conflict, so
// it composes with running schedulers, which pick the change up from their
// watch. The zero Clock is the system clock. Invalid requests are refused
// with a *kvstore.FieldError naming the request field, before anything is
// written.
type Control struct {
	Store *jsstore.Store
	Clock clock.Clock
	// MaxBackfillSlots caps the slots one backfill may replay. Default
	// DefaultMaxBackfillSlots.
	MaxBackfillSlots int
}

// DefaultMaxBackfillSlots is the most slots one backfill replays unless
// Control.MaxBackfillSlots says otherwise.
const DefaultMaxBackfillSlots = 10_000

// MaxSkip is the most slots one skip request may skip.
const MaxSkip = 1_000_000

// maxControlAttempts bounds the CAS retries of one action.
const maxControlAttempts = 20

// update applies fn to the state of id by CAS, retrying on conflict, and
// returns the state written. The audit trail is written ahead: before the
// first write, the intent (action on id, with the detail fn returns) is
// appended; when it cannot be, nothing is written and the error wraps
// kvstore.ErrAuditUnavailable. Retries carry the same intent; when no
// write lands, the intent is abandoned.
func (c Control) update(ctx context.Context, id, action string, fn func(*kvstore.State) (any, error)) (st kvstore.State, err error) {
	if _, err := c.Store.GetSpec(ctx, id); err != nil && !errors.Is(err, kvstore.ErrInvalid) {
		return kvstore.State{}, err
	}
	var mark jsstore.AuditMark
	intended := false
	defer func() {
		if err != nil && intended {
			c.Store.Abandon(ctx, err, mark)
		}
	}()
	retry := retryBackoff()
	for range maxControlAttempts {
		st, rev, err := c.Store.GetState(ctx, id)
		// No record yet (schedulers create it with the first fire): the
		// action creates one with an empty plan, which the owning
		// scheduler plans as it would a new schedule, keeping the action.
		create := errors.Is(err, kvstore.ErrNotFound)
		if create {
			st, err = kvstore.State{}, nil
		}
		if err != nil {
			return kvstore.State{}, err
		}
		detail, err := fn(&st)
		if err != nil {
			return kvstore.State{}, err
		}
		if !intended {
			in := jsstore.Intent{Action: action, Target: id, Detail: detail, Bucket: c.Store.Layout().StateBucket, Key: id, Expect: rev}
			if mark, err = c.Store.Intend(ctx, in); err != nil {
				return kvstore.State{}, err
			}
			intended = true
		}
		st.UpdatedAt = c.Clock.Now().UTC()
		if create {
			rev = 0
		}
		_, err = c.Store.WriteState(ctx, id, st, rev, mark)
		if err == nil {
			return st, nil
		} else if !errors.Is(err, kvstore.ErrConflict) {
			return kvstore.State{}, err
		}
		select {
		case <-ctx.Done():
			return kvstore.State{}, ctx.Err()
		case <-c.Clock.After(retry.NextBackOff()):
		}
	}
	return kvstore.State{}, fmt.Errorf("control: state of %s kept changing; gave up after %d attempts", id, maxControlAttempts)
}

// retryBackoff is the pause before each retry of a write that met a
// conflict: exponential from 50 ms to 5 s, with jitter, as the engine's
// retries of a schedule.
func retryBackoff() *backoff.ExponentialBackOff {
	return backoff.NewExponentialBackOff(backoff.WithInitialInterval(50*time.Millisecond),
		backoff.WithMaxInterval(5*time.Second), backoff.WithMultiplier(2),
		backoff.WithRandomizationFactor(0.5), backoff.WithMaxElapsedTime(0))
}

// Pause stops the schedule's regular slots (triggers and backfills still
// run) until Resume, or until until when it is not zero. Slots that come
// due meanwhile are skipped and recorded as "paused" when it resumes.
func (c Control) Pause(ctx context.Context, id, note string, until time.Time) (kvstore.State, error) {
	now := c.Clock.Now()
	if !until.IsZero() {
		if err := fieldcheck.Time("until", until); err != nil {
			return kvstore.State{}, err
		}
		if !until.After(now) {
			return kvstore.State{}, &kvstore.FieldError{Field: "until", Value: until.Format(time.RFC3339), Reason: "is not in the future"}
		}
	}
	if err := fieldcheck.Note("note", note); err != nil {
		return kvstore.State{}, err
	}
	return c.update(ctx, id, "schedule.pause", func(st *kvstore.State) (any, error) {
		st.Paused = &kvstore.Pause{Note: note, At: now.UTC(), Until: until.UTC()}
		if until.IsZero() {
			st.Paused.Until = time.Time{}
		}
		return st.Paused, nil
	})
}

// NotPaused ends the message of Resume's error for a schedule that is not
// paused ("invalid: nightly is not paused"); the CLI recognises it to
// make a repeated resume succeed.
const NotPaused = "is not paused"

// Resume ends a pause. The schedule fires again from its next slot after
// now; the slots it missed while paused are recorded as skipped.
func (c Control) Resume(ctx context.Context, id string) (kvstore.State, error) {
	now := c.Clock.Now()
	return c.update(ctx, id, "schedule.resume", func(st *kvstore.State) (any, error) {
		if st.Paused == nil {
			return nil, fmt.Errorf("%w: %s %s", kvstore.ErrInvalid, id, NotPaused)
		}
		st.Paused, st.ResumedAt = nil, now.UTC()
		return nil, nil
	})
}

// Skip skips the next n regular slots (recorded as skipped by an
// operator).
func (c Control) Skip(ctx context.Context, id string, n int) (kvstore.State, error) {
	if n < 1 || n > MaxSkip {
		return kvstore.State{}, &kvstore.FieldError{Field: "count", Value: fmt.Sprint(n), Reason: fmt.Sprintf("must be 1 to %d", MaxSkip)}
	}
	return c.update(ctx, id, "schedule.skip", func(st *kvstore.State) (any, error) {
		st.SkipNext += n
		return map[string]int{"count": n}, nil
	})
}

// Trigger asks for an extra fire now, with its own slot id
// ("<id>.trigger-<unix ms>") and Sched-Reason: trigger. It returns that
// slot id. The trace context of ctx's span, when there is one, is kept
// with the trigger: the fire's dispatch span is its child.
func (c Control) Trigger(ctx context.Context, id, note string) (string, error) {
	if err := fieldcheck.Note("note", note); err != nil {
		return "", err
	}
	at := c.Clock.Now().UTC().Truncate(time.Millisecond)
	trace := jsstore.TraceContextOf(ctx) // the triggered fire's dispatch span is its child
	var slot string
	_, err := c.update(ctx, id, "schedule.trigger", func(st *kvstore.State) (any, error) {
		if len(st.Triggers) >= 100 {
			return nil, fmt.Errorf("%w: %s already has 100 pending triggers", kvstore.ErrInvalid, id)
		}
		at := at
		for _, t := range st.Triggers {
			if !t.At.Before(at) {
				at = t.At.Add(time.Millisecond) // distinct slot ids
			}
		}
		st.Triggers = append(st.Triggers, kvstore.Trigger{At: at, Note: note, Trace: trace})
		slot = slotid.Extra(id, "trigger", at)
		return map[string]string{"slot_id": slot, "note": note}, nil
	})
	if err != nil {
		return "", err
	}
	return slot, nil
}

// Backfill replays the schedule's slots in [from, to] (each with its own
// slot id "<id>.backfill-<unix ms>" and Sched-Reason: backfill) at most
// rate per second, across all schedulers: the pace is kept in the state
// record. A range of more than MaxBackfillSlots slots is refused (field
// "to") with the count it would make. A second backfill replaces one in
// progress; CancelBackfill ends one.
func (c Control) Backfill(ctx context.Context, id string, from, to time.Time, rate float64, note string) (kvstore.State, error) {
	now := c.Clock.Now()
	switch {
	case from.IsZero():
		return kvstore.State{}, &kvstore.FieldError{Field: "from", Reason: "required"}
	case to.IsZero():
		return kvstore.State{}, &kvstore.FieldError{Field: "to", Reason: "required"}
	case !from.Before(to):
		return kvstore.State{}, &kvstore.FieldError{Field: "to", Value: to.Format(time.RFC3339), Reason: "is not after from " + from.Format(time.RFC3339)}
	case to.After(now):
		return kvstore.State{}, &kvstore.FieldError{Field: "to", Value: to.Format(time.RFC3339), Reason: "is in the future; a backfill replays the past"}
	case !(rate > 0 && rate <= 10_000): // also refuses NaN
		return kvstore.State{}, &kvstore.FieldError{Field: "rate", Value: fmt.Sprint(rate), Reason: "must be above 0 and at most 10000 per second"}
	}
	if err := fieldcheck.Note("note", note); err != nil {
		return kvstore.State{}, err
	}
	e, err := c.Store.GetSpec(ctx, id)
	if err != nil {
		return kvstore.State{}, err
	}
	compiled, err := compile.Compile(e.Spec, id, c.Store.CalendarSource(ctx), nil)
	if err != nil {
		return kvstore.State{}, fmt.Errorf("schedule %s cannot be backfilled: %w", id, err)
	}
	total, err := c.countSlots(compiled.Schedule, from, to)
	if err != nil {
		return kvstore.State{}, err
	}
	return c.update(ctx, id, "schedule.backfill", func(st *kvstore.State) (any, error) {
		st.Backfill = &kvstore.Backfill{From: from.UTC(), To: to.UTC(), Rate: rate, Note: note, Total: total}
		return st.Backfill, nil
	})
}

// countSlots counts the slots of sched in [from, to], refusing a range
// with none or with more than the maximum. Beyond the maximum it stops
// counting and estimates the count from the pace of the slots it saw.
func (c Control) countSlots(sched interface{ Next(time.Time) time.Time }, from, to time.Time) (int, error) {
	limit := c.MaxBackfillSlots
	if limit <= 0 {
		limit = DefaultMaxBackfillSlots
	}
	n, first, last := 0, time.Time{}, time.Time{}
	for t := sched.Next(from.Add(-time.Nanosecond)); !t.IsZero() && !t.After(to); t = sched.Next(t) {
		if n == 0 {
			first = t
		}
		n, last = n+1, t
		if n > limit {
			about := float64(n)
			if gap := last.Sub(first); gap > 0 {
				about = 1 + float64(to.Sub(first))/(float64(gap)/float64(n-1))
			}
			return 0, &kvstore.FieldError{Field: "to", Value: to.Format(time.RFC3339), Reason: fmt.Sprintf(
				"the range from %s would make about %.0f slots, more than the maximum of %d per backfill; narrow the range or split it",
				from.Format(time.RFC3339), about, limit)}
		}
	}
	if n == 0 {
		return 0, &kvstore.FieldError{Field: "from", Value: from.Format(time.RFC3339), Reason: "the range to " + to.Format(time.RFC3339) + " holds no slot of the schedule"}
	}
	return n, nil
}

// CancelBackfill ends the backfill in progress: no further slot of it is
// replayed (a slot already claimed still completes). It returns the
// backfill as it stood; kvstore.ErrNotFound when none is in progress.
func (c Control) CancelBackfill(ctx context.Context, id string) (kvstore.Backfill, error) {
	var was kvstore.Backfill
	_, err := c.update(ctx, id, "schedule.backfill.cancel", func(st *kvstore.State) (any, error) {
		if st.Backfill == nil {
			return nil, usererr.NotFound("backfill in progress for schedule", id)
		}
		was, st.Backfill = *st.Backfill, nil
		return map[string]int{"done": was.Done, "total": was.Total}, nil
	})
	if err != nil {
		return kvstore.Backfill{}, err
	}
	return was, nil
}
