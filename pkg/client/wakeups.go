package client

import (
	"cmp"
	"context"
	"iter"
	"slices"
	"time"

	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/wakeup"
)

// The timer calls write and read sched_wakeups directly, as the admin API
// does, with the same validation and compare-and-swap: none of them needs
// a running scheduler (one fires the timers).

func (c *Client) timers() wakeups.Client { return wakeups.Client{Store: c.store} }

// Wakeup sets a timer that wakes run at step: one message on
// sched.wakeup.<workflow> when due. Registering the same run and step again
// replaces it. r.Run, r.Step and r.Workflow are required; see
// wakeup.Request for the forms of r.When. An invalid request is a
// *kvstore.FieldError naming the field, and nothing is stored.
func (c *Client) Wakeup(ctx context.Context, r wakeup.Request) (TimerInfo, error) {
	e, err := c.timers().Register(ctx, r)
	if err != nil {
		return TimerInfo{}, err
	}
	return newTimerInfo(e), nil
}

// GetWakeup returns the pending timer of run at step; ErrNotFound when
// there is none (it fired, was cancelled, or never was).
func (c *Client) GetWakeup(ctx context.Context, run, step string) (TimerInfo, error) {
	e, err := c.store.GetTimer(ctx, kvstore.TimerKey(run, step))
	if err != nil {
		return TimerInfo{}, err
	}
	return newTimerInfo(e), nil
}

// CancelWakeup cancels a timer: WakeupCancelled, or WakeupAlreadyFired
// when a scheduler was already firing it (a harmless race when the
// worker checks the wakeup's condition). ErrNotFound when none is pending.
func (c *Client) CancelWakeup(ctx context.Context, run, step string) (CancelOutcome, error) {
	out, err := c.timers().Cancel(ctx, run, step)
	return CancelOutcome(out), err
}

// CancelWakeups cancels every pending timer of run (the run left the
// activity, or ended) and says how many it cancelled: each as
// CancelWakeup does, so a timer a scheduler was already firing is not
// counted (WakeupAlreadyFired), and one gone meanwhile is passed over.
func (c *Client) CancelWakeups(ctx context.Context, run string) (int, error) {
	return c.timers().CancelRun(ctx, run)
}

// Wakeups iterates over the pending timers f selects: those of a run
// (f.Run), of a workflow (f.Workflow), of both, or with the zero Filter
// all, including those a scheduler is firing (TimerInfo.Firing); a label
// selector (f.Selector, "team=billing,tier!=gold") keeps those whose
// labels match it, and an invalid one is a *kvstore.FieldError naming
// the field selector. It reads
// them from sched_wakeups when the iteration starts (a run's on the
// server, by its keys) and yields them in run, then step order. An error
// ends the iteration after it is yielded.
func (c *Client) Wakeups(ctx context.Context, f wakeup.Filter) iter.Seq2[TimerInfo, error] {
	return func(yield func(TimerInfo, error) bool) {
		entries, err := c.timers().List(ctx, f)
		if err != nil {
			yield(TimerInfo{}, err)
			return
		}
		infos := make([]TimerInfo, len(entries))
		for i, e := range entries {
			infos[i] = newTimerInfo(e)
		}
		slices.SortFunc(infos, func(a, b TimerInfo) int {
			return cmp.Or(cmp.Compare(a.Run, b.Run), cmp.Compare(a.Step, b.Step))
		})
		for _, t := range infos {
			if !yield(t, nil) {
				return
			}
		}
	}
}

// RearmWakeup answers a wakeup with "not ready, retry at": it sets the
// timer of m's run and step again, due at (which must be in the future),
// with m's workflow, condition, condition key and labels and with payload, and
// counts the re-arm (TimerInfo.Rearms; the next wakeup's Meta.Rearms).
// From a pkg/worker handler: c.RearmWakeup(ctx, w.Meta, w.Payload, at).
// A timer set with Wakeup instead starts its count again.
func (c *Client) RearmWakeup(ctx context.Context, m wakeup.Meta, payload []byte, at time.Time) (TimerInfo, error) {
	e, err := c.timers().Rearm(ctx, m, payload, at)
	if err != nil {
		return TimerInfo{}, err
	}
	return newTimerInfo(e), nil
}
