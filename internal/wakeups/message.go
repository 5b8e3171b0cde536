package wakeups

import (
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/labels"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Meta is what a worker reads from a wakeup message's headers.
type Meta struct {
	ID, Run, Step, Workflow, Condition, When, Reason string
	// ConditionKey is the KV key the scheduler checked (empty: none).
	ConditionKey        string
	DueAt, DispatchedAt time.Time
	// Rearms counts how often the timer was re-armed before this firing.
	Rearms int
	// Labels are the timer's labels (kvstore.HeaderLabels), which a
	// re-arm keeps; nil when it has none.
	Labels map[string]string
	// DeadLetterSeq is set on a wakeup an operator retried from a dead
	// letter (kvstore.HeaderRetryOf): the dead letter's sequence in the
	// event stream; ID is then the original wakeup's id. 0 otherwise.
	DeadLetterSeq uint64
}

// ParseMeta reads the headers of a wakeup message.
func ParseMeta(h nats.Header) (Meta, error) {
	m := Meta{
		ID: h.Get(kvstore.HeaderMsgID), Run: h.Get(kvstore.HeaderRun), Step: h.Get(kvstore.HeaderStep), Workflow: h.Get(kvstore.HeaderWorkflow),
		Condition: h.Get(kvstore.HeaderCondition), ConditionKey: h.Get(kvstore.HeaderConditionKey), When: h.Get(kvstore.HeaderWhen), Reason: h.Get(kvstore.HeaderReason),
	}
	if m.ID == "" || m.Run == "" || m.Step == "" {
		return Meta{}, fmt.Errorf("wakeup: not a wakeup message: missing %s, %s or %s", kvstore.HeaderMsgID, kvstore.HeaderRun, kvstore.HeaderStep)
	}
	if v := h.Get(kvstore.HeaderRearms); v != "" {
		if _, err := fmt.Sscan(v, &m.Rearms); err != nil {
			return Meta{}, fmt.Errorf("wakeup: header %s: %w", kvstore.HeaderRearms, err)
		}
	}
	if v := h.Get(kvstore.HeaderLabels); v != "" {
		l, err := labels.ParsePairs(strings.Split(v, ","))
		if err != nil {
			return Meta{}, fmt.Errorf("wakeup: header %s: %w", kvstore.HeaderLabels, err)
		}
		m.Labels = l
	}
	if of := h.Get(kvstore.HeaderRetryOf); of != "" {
		if _, err := fmt.Sscan(h.Get(kvstore.HeaderDeadLetterSeq), &m.DeadLetterSeq); err != nil {
			return Meta{}, fmt.Errorf("wakeup: header %s: %w", kvstore.HeaderDeadLetterSeq, err)
		}
		m.ID = of
	}
	var err error
	if m.DueAt, err = time.Parse(time.RFC3339Nano, h.Get(kvstore.HeaderDueAt)); err != nil {
		return Meta{}, fmt.Errorf("wakeup: header %s: %w", kvstore.HeaderDueAt, err)
	}
	if v := h.Get(kvstore.HeaderDispatchedAt); v != "" {
		if m.DispatchedAt, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return Meta{}, fmt.Errorf("wakeup: header %s: %w", kvstore.HeaderDispatchedAt, err)
		}
	}
	return m, nil
}
