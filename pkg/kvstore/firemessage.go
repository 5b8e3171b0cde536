package kvstore

import (
	"fmt"
	"strconv"
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
	// HeaderJitter is set on a regular fire of a schedule with a jitter:
	// how long after Sched-Scheduled-At it was due (a Go duration, e.g.
	// "3m12.345s"), the offset its slot id fixes (Spec.Jitter).
	HeaderJitter = "Sched-Jitter"
	// HeaderRetryOf is set on a fire or wakeup an operator published
	// again from a dead letter (`scheduler deadletter retry`): the
	// original Nats-Msg-Id (slot id or wakeup id), which workers take as
	// the message's id. The retry's own Nats-Msg-Id is
	// "<original>.retry-<dead letter seq>", so that the stream keeps one
	// retry of each dead letter.
	HeaderRetryOf = "Sched-Retry-Of"
	// HeaderDeadLetterSeq is set with HeaderRetryOf: the sequence of the
	// retried dead letter in the event stream.
	HeaderDeadLetterSeq = "Sched-Dead-Letter-Seq"
)

// Headers of a wakeup message on sched.wakeup.<workflow> besides
// Nats-Msg-Id ("wakeup.<key>.<due unix ms>"), Sched-Workflow,
// Sched-Dispatched-At and Sched-Reason (see above). The body is the
// timer's payload, unchanged.
const (
	HeaderRun       = "Sched-Run"
	HeaderStep      = "Sched-Step"
	HeaderDueAt     = "Sched-Due-At" // RFC 3339 with nanoseconds, in the timer's zone
	HeaderCondition = "Sched-Condition"
	// HeaderConditionKey is the timer's condition key "BUCKET/KEY", which
	// the scheduler checked held Sched-Condition before publishing.
	HeaderConditionKey = "Sched-Condition-Key"
	HeaderWhen         = "Sched-When" // the form it was registered with
	HeaderRearms       = "Sched-Rearms"
	// HeaderLabels are the timer's labels as "k=v,k2=v2" in key order
	// (absent without labels), so that a re-arm keeps them.
	HeaderLabels = "Sched-Labels"
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

// FireMeta is what a worker reads from a fire message's headers.
type FireMeta struct {
	SlotID       string
	ScheduleID   string
	Workflow     string
	ScheduledAt  time.Time
	DispatchedAt time.Time
	Reason       string
	Note         string
	NominalAt    time.Time
	Instance     string
	// Jitter is how long after ScheduledAt a jittered fire was due
	// (HeaderJitter); 0 without one.
	Jitter time.Duration
	// DeadLetterSeq is set on a fire an operator retried from a dead
	// letter: the dead letter's sequence in the event stream (SlotID is
	// then the original slot's, from HeaderRetryOf). 0 otherwise.
	DeadLetterSeq uint64
}

// ParseFireMeta reads the headers of a fire message.
func ParseFireMeta(h nats.Header) (FireMeta, error) {
	m := FireMeta{
		SlotID:     h.Get(HeaderMsgID),
		ScheduleID: h.Get(HeaderScheduleID),
		Workflow:   h.Get(HeaderWorkflow),
		Reason:     h.Get(HeaderReason),
		Note:       h.Get(HeaderNote),
		Instance:   h.Get(HeaderInstance),
	}
	if m.SlotID == "" || m.ScheduleID == "" {
		return FireMeta{}, fmt.Errorf("kvstore: not a fire message: missing %s or %s header", HeaderMsgID, HeaderScheduleID)
	}
	var err error
	if of := h.Get(HeaderRetryOf); of != "" {
		if m.DeadLetterSeq, err = strconv.ParseUint(h.Get(HeaderDeadLetterSeq), 10, 64); err != nil {
			return FireMeta{}, fmt.Errorf("kvstore: fire header %s: %w", HeaderDeadLetterSeq, err)
		}
		m.SlotID = of
	}
	if m.ScheduledAt, err = time.Parse(time.RFC3339Nano, h.Get(HeaderScheduledAt)); err != nil {
		return FireMeta{}, fmt.Errorf("kvstore: fire header %s: %w", HeaderScheduledAt, err)
	}
	if v := h.Get(HeaderNominalAt); v != "" {
		if m.NominalAt, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return FireMeta{}, fmt.Errorf("kvstore: fire header %s: %w", HeaderNominalAt, err)
		}
	}
	if v := h.Get(HeaderDispatchedAt); v != "" {
		if m.DispatchedAt, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return FireMeta{}, fmt.Errorf("kvstore: fire header %s: %w", HeaderDispatchedAt, err)
		}
	}
	if v := h.Get(HeaderJitter); v != "" {
		if m.Jitter, err = time.ParseDuration(v); err != nil {
			return FireMeta{}, fmt.Errorf("kvstore: fire header %s: %w", HeaderJitter, err)
		}
	}
	return m, nil
}

// Outcomes a worker reports on sched.done.<workflow>.<schedule id>.
const (
	OutcomeCompleted = "completed"
	OutcomeFailed    = "failed"
	OutcomeStarted   = "started"
	// OutcomeCancelled: the worker stopped the fire on the scheduler's
	// cancel request (overlap policy cancel_other); the tick is recorded
	// cancelled.
	OutcomeCancelled = "cancelled"
)

// DoneReport is the body a worker publishes on
// sched.done.<workflow>.<schedule id> (Layout.DoneSubject) when it
// finished a fire (the worker SDK does it for you). The scheduler records
// it only when the subject's workflow is the one the slot was fired for
// and the slot belongs to the subject's schedule.
type DoneReport struct {
	// SlotID is the fire's Nats-Msg-Id.
	SlotID string `json:"slot_id"`
	// Outcome is "completed", "failed" (given up: no more redeliveries),
	// "cancelled" (stopped on a cancel request) or "started".
	Outcome string `json:"outcome"`
	// Error says why a fire failed.
	Error string `json:"error,omitempty"`
	// Worker names the worker, for the ledger.
	Worker string `json:"worker,omitempty"`
}

// CancelRequest is the body of a message on
// sched.cancel.<workflow>.<schedule id>.
type CancelRequest struct {
	Schedule string    `json:"schedule"`
	SlotID   string    `json:"slot_id"` // the running slot to cancel
	By       string    `json:"by"`      // the slot that replaces it
	At       time.Time `json:"at"`
}
