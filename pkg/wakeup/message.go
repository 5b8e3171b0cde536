package wakeup

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// Headers of a wakeup message on sched.wakeup.<workflow>. The body is the
// timer's payload, unchanged.
const (
	HeaderMsgID        = nats.MsgIdHdr // "wakeup.<key>.<due unix ms>"
	HeaderRun          = "Sched-Run"
	HeaderStep         = "Sched-Step"
	HeaderWorkflow     = "Sched-Workflow"
	HeaderDueAt        = "Sched-Due-At" // RFC 3339 with nanoseconds, in the timer's zone
	HeaderDispatchedAt = "Sched-Dispatched-At"
	HeaderCondition    = "Sched-Condition"
	// HeaderConditionKey is the timer's condition key "BUCKET/KEY", which
	// the scheduler checked held Sched-Condition before publishing.
	HeaderConditionKey = "Sched-Condition-Key"
	HeaderWhen         = "Sched-When" // the form it was registered with
	HeaderReason       = "Sched-Reason"
	HeaderRearms       = "Sched-Rearms"
)

// Meta is what a worker reads from a wakeup message's headers.
type Meta struct {
	ID, Run, Step, Workflow, Condition, When, Reason string
	// ConditionKey is the KV key the scheduler checked (empty: none).
	ConditionKey        string
	DueAt, DispatchedAt time.Time
	// Rearms counts how often the timer was re-armed before this firing.
	Rearms int
}

// ParseMeta reads the headers of a wakeup message.
func ParseMeta(h nats.Header) (Meta, error) {
	m := Meta{
		ID: h.Get(HeaderMsgID), Run: h.Get(HeaderRun), Step: h.Get(HeaderStep), Workflow: h.Get(HeaderWorkflow),
		Condition: h.Get(HeaderCondition), ConditionKey: h.Get(HeaderConditionKey), When: h.Get(HeaderWhen), Reason: h.Get(HeaderReason),
	}
	if m.ID == "" || m.Run == "" || m.Step == "" {
		return Meta{}, fmt.Errorf("wakeup: not a wakeup message: missing %s, %s or %s", HeaderMsgID, HeaderRun, HeaderStep)
	}
	if v := h.Get(HeaderRearms); v != "" {
		if _, err := fmt.Sscan(v, &m.Rearms); err != nil {
			return Meta{}, fmt.Errorf("wakeup: header %s: %w", HeaderRearms, err)
		}
	}
	var err error
	if m.DueAt, err = time.Parse(time.RFC3339Nano, h.Get(HeaderDueAt)); err != nil {
		return Meta{}, fmt.Errorf("wakeup: header %s: %w", HeaderDueAt, err)
	}
	if v := h.Get(HeaderDispatchedAt); v != "" {
		if m.DispatchedAt, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return Meta{}, fmt.Errorf("wakeup: header %s: %w", HeaderDispatchedAt, err)
		}
	}
	return m, nil
}
