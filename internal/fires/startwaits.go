package fires

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jetsched/jetsched/internal/startwait"
)

// startWait bounds each request-and-answer step of a start (the fire
// stream's settings, the shard count, a watch's creation): a few of the
// API's 5 s timeouts on a busy server, never minutes.
const startWait = 30 * time.Second

// loadProgress is which watches have delivered their initial values:
// written by the loop (loader), read by the start's watchdog (watchLoad).
type loadProgress struct {
	specs, states, cals atomic.Bool
}

// reset is a new run's: nothing loaded.
func (p *loadProgress) reset() {
	p.specs.Store(false)
	p.states.Store(false)
	p.cals.Store(false)
}

// watchLoad logs, until ready closes, what the due index still waits for
// (startwait.Watchdog): the specs' watch to start, and each watch's
// initial values.
func (e *Engine) watchLoad(life context.Context, ready <-chan struct{}, specs *laterWatch) {
	startwait.Watchdog(life, e.log, "due index", ready, func() []string {
		var pending []string
		select {
		case <-specs.ready:
		default:
			pending = append(pending, "the specs' watch to start")
		}
		for _, w := range []struct {
			done *atomic.Bool
			what string
		}{{&e.loading.specs, "the specs' initial values"}, {&e.loading.states, "the state records' initial values"},
			{&e.loading.cals, "the calendars' initial values"}} {
			if !w.done.Load() {
				pending = append(pending, w.what)
			}
		}
		return pending
	})
}

// checkDuplicateWindow enforces the protocol's timing: a takeover
// re-publishes a slot at the earliest when its claim expires, so the fire
// stream must still remember the first publish's Nats-Msg-Id by then.
func (e *Engine) checkDuplicateWindow(ctx context.Context) error {
	l := e.store.Layout()
	s, err := e.store.JetStream().Stream(ctx, l.FiresStream)
	if err != nil {
		return fmt.Errorf("fire: stream %s: %w", l.FiresStream, err)
	}
	window := s.CachedInfo().Config.Duplicates
	e.dupWindow, e.fireRetention = window, s.CachedInfo().Config.MaxAge
	need := e.cfg.ClaimTTL + publishBudget(e.cfg.ClaimTTL)
	if window < need {
		return fmt.Errorf("fire: stream %s has a duplicate window of %s; the claim TTL %s plus the publish retry budget %s needs at least %s (raise the window or lower the claim TTL)",
			l.FiresStream, window, e.cfg.ClaimTTL, publishBudget(e.cfg.ClaimTTL), need)
	}
	return nil
}
