package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Cancel requests (overlap policy cancel_other) are core messages on
// sched.cancel.<workflow>.<schedule id>: every instance subscribed gets
// each. The instance running the slot cancels that handler's context; the
// others remember the slot for rememberCancel, so that a delivery of it
// that comes later (it was still waiting in the stream, or is redelivered)
// is terminated and reported cancelled without running.
const (
	rememberCancel    = time.Hour // the default completion timeout
	rememberCancelMax = 4096
)

// cancels knows the fires running in this worker and the slots cancelled
// lately.
type cancels struct {
	mu     sync.Mutex
	runs   map[string][]*runningFire // by slot id
	recent map[string]cancelledSlot
	order  []string // recent's keys, oldest first
}

type runningFire struct{ cancel context.CancelCauseFunc }

type cancelledSlot struct {
	cause error
	at    time.Time
}

func newCancels() *cancels {
	return &cancels{runs: map[string][]*runningFire{}, recent: map[string]cancelledSlot{}}
}

// running records a running fire's cancel function until the returned
// func is called.
func (c *cancels) running(slot string, cancel context.CancelCauseFunc) (done func()) {
	r := &runningFire{cancel: cancel}
	c.mu.Lock()
	c.runs[slot] = append(c.runs[slot], r)
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		rs := c.runs[slot]
		for i, x := range rs {
			if x == r {
				rs = append(rs[:i], rs[i+1:]...)
				break
			}
		}
		if len(rs) == 0 {
			delete(c.runs, slot)
		} else {
			c.runs[slot] = rs
		}
	}
}

// cancel ends the handlers running slot with cause, or remembers the slot
// when none runs here; it reports whether one ran.
func (c *cancels) cancel(slot string, cause error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rs := c.runs[slot]; len(rs) > 0 {
		for _, r := range rs {
			r.cancel(cause)
		}
		return true
	}
	now := time.Now()
	if _, ok := c.recent[slot]; !ok {
		c.order = append(c.order, slot)
	}
	c.recent[slot] = cancelledSlot{cause: cause, at: now}
	for len(c.order) > 0 {
		oldest := c.order[0]
		if len(c.order) <= rememberCancelMax && now.Sub(c.recent[oldest].at) < rememberCancel {
			break
		}
		delete(c.recent, oldest)
		c.order = c.order[1:]
	}
	return false
}

// cancelled reports whether slot was cancelled lately, and why.
func (c *cancels) cancelled(slot string) (error, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.recent[slot]
	if !ok || time.Now().Sub(s.at) >= rememberCancel {
		return nil, false
	}
	return s.cause, true
}

// subscribeCancels subscribes to the cancel requests of a fire handler's
// workflow: sched.cancel.<workflow>.> (sched.cancel.> for AllWorkflows),
// which the shipped worker accounts allow for their workflows.
func (w *Worker) subscribeCancels(workflow string) (*nats.Subscription, error) {
	subject := w.cfg.Layout.CancelSubject(workflow, ">")
	if workflow == AllWorkflows {
		subject = w.cfg.Layout.Prefix + ".cancel.>"
	}
	sub, err := w.cfg.JetStream.Conn().Subscribe(subject, w.onCancel)
	if err != nil {
		return nil, fmt.Errorf("worker: subscribe %s: %w", subject, err)
	}
	return sub, nil
}

// onCancel handles one cancel request: {"schedule", "slot_id", "by",
// "at"} on sched.cancel.<workflow>.<schedule id>. A request whose slot is
// not one of the subject's schedule is ignored, as the scheduler ignores
// such a completion report.
func (w *Worker) onCancel(m *nats.Msg) {
	var req kvstore.CancelRequest
	tokens := strings.Split(m.Subject, ".")
	schedule := tokens[len(tokens)-1]
	if err := json.Unmarshal(m.Data, &req); err != nil || req.SlotID == "" || !strings.HasPrefix(req.SlotID, schedule+".") {
		w.log.Warn("cancel request ignored: not {\"slot_id\": \"<schedule id>.…\"} for the subject's schedule", "subject", m.Subject)
		return
	}
	cause := fmt.Errorf("%w: slot %s replaces it", ErrCancelRequested, req.By)
	ran := w.cancels.cancel(req.SlotID, cause)
	w.log.Info("cancel request", "slot", req.SlotID, "by", req.By, "running_here", ran)
}
