package fire

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// Headers of a fire message on sched.fire.<workflow>. The body is the
// schedule's input JSON, unchanged (empty when the spec has none).
const (
	// HeaderMsgID is JetStream's dedupe header; its value is the slot id
	// "<schedule id>.<unix ms>".
	HeaderMsgID = nats.MsgIdHdr
	// HeaderScheduleID is the schedule's id.
	HeaderScheduleID = "Sched-Schedule-Id"
	// HeaderWorkflow is the workflow token of the subject.
	HeaderWorkflow = "Sched-Workflow"
	// HeaderScheduledAt is the slot's time, RFC 3339 with nanoseconds in
	// the schedule's zone: the time the fire was due, not when it was sent.
	HeaderScheduledAt = "Sched-Scheduled-At"
	// HeaderDispatchedAt is when the scheduler published (UTC, RFC 3339).
	HeaderDispatchedAt = "Sched-Dispatched-At"
	// HeaderReason is set when a policy produced the fire: "takeover" for
	// a slot re-published by another instance after a crash (a duplicate
	// the stream drops unless its window had passed); later "catchup",
	// "trigger", "backfill".
	HeaderReason = "Sched-Reason"
	// HeaderInstance is the scheduler instance that published.
	HeaderInstance = "Sched-Instance"
	// HeaderNominalAt is set on a moved fire: the recurrence's occurrence
	// it came from (RFC 3339 in the schedule's zone).
	HeaderNominalAt = "Sched-Nominal-At"
	// HeaderNote explains Sched-Reason, e.g. the calendar rule that moved
	// the fire.
	HeaderNote = "Sched-Note"
)

// Values of Sched-Reason.
const (
	// ReasonMoved: a calendar (holiday roll, business hours) or a DST rule
	// moved the fire from its nominal time.
	ReasonMoved = "moved"
	// ReasonTakeover: another instance re-published the slot of a crashed
	// owner (the stream keeps one copy).
	ReasonTakeover = "takeover"
	// ReasonCatchup: a slot later than the misfire threshold, fired by
	// the fire_once or fire_all policy.
	ReasonCatchup = "catchup"
	// ReasonTrigger: an operator asked for an extra fire now.
	ReasonTrigger = "trigger"
	// ReasonBackfill: a past slot replayed by an operator's backfill.
	ReasonBackfill = "backfill"
)

// Meta is what a worker reads from a fire message's headers.
type Meta struct {
	SlotID       string
	ScheduleID   string
	Workflow     string
	ScheduledAt  time.Time
	DispatchedAt time.Time
	Reason       string
	Note         string
	NominalAt    time.Time
	Instance     string
}

// ParseMeta reads the headers of a fire message.
func ParseMeta(h nats.Header) (Meta, error) {
	m := Meta{
		SlotID:     h.Get(HeaderMsgID),
		ScheduleID: h.Get(HeaderScheduleID),
		Workflow:   h.Get(HeaderWorkflow),
		Reason:     h.Get(HeaderReason),
		Note:       h.Get(HeaderNote),
		Instance:   h.Get(HeaderInstance),
	}
	if m.SlotID == "" || m.ScheduleID == "" {
		return Meta{}, fmt.Errorf("fire: not a fire message: missing %s or %s header", HeaderMsgID, HeaderScheduleID)
	}
	var err error
	if m.ScheduledAt, err = time.Parse(time.RFC3339Nano, h.Get(HeaderScheduledAt)); err != nil {
		return Meta{}, fmt.Errorf("fire: header %s: %w", HeaderScheduledAt, err)
	}
	if v := h.Get(HeaderNominalAt); v != "" {
		if m.NominalAt, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return Meta{}, fmt.Errorf("fire: header %s: %w", HeaderNominalAt, err)
		}
	}
	if v := h.Get(HeaderDispatchedAt); v != "" {
		if m.DispatchedAt, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return Meta{}, fmt.Errorf("fire: header %s: %w", HeaderDispatchedAt, err)
		}
	}
	return m, nil
}
