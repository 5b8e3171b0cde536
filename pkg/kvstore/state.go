package kvstore

import (
	"encoding/json"
	"fmt"
	"time"
)

// State is the scheduler's record of one schedule: the value of key <id> in
// sched_state. Only schedulers write it, and only by compare-and-swap on its
// revision. Times are UTC on the wire.
//
// One CAS both claims the due slot and advances Next, so a fire costs one
// CAS, one publish and one ledger write. The Claim stays in the record until
// the next claim replaces it; it is settled once sched_ticks holds its slot.
// A claim is only ever replaced after it is settled, so at most one slot per
// schedule is ever in doubt (see docs/protocol.md).
type State struct {
	// Next is the next slot to fire; zero when the recurrence has ended.
	Next time.Time `json:"next,omitzero"`
	// NextNominal is the recurrence's occurrence Next came from, when a
	// calendar or a DST rule moved it; NextReason says why.
	NextNominal time.Time `json:"next_nominal,omitzero"`
	NextReason  string    `json:"next_reason,omitempty"`
	// Plan is the compiled plan (compile.Compiled.Plan, the spec's recurrence
	// and calendar fingerprinted) Next was computed from.
	Plan string `json:"plan"`
	// Claim is the claim on the most recent slot.
	Claim *Claim `json:"claim,omitempty"`
	// Fires counts slots claimed for publishing.
	Fires uint64 `json:"fires"`
	// Missed counts slots the misfire policy did not fire (recorded
	// missed), whatever the policy. MissedAtLeast is set once a count
	// added to it was a lower bound (too many slots to walk).
	Missed        uint64 `json:"missed,omitempty"`
	MissedAtLeast bool   `json:"missed_at_least,omitempty"`
	// Skipped counts slots not fired because of a pause, an overlap
	// policy, an operator's skip or a calendar (recorded skipped).
	Skipped uint64 `json:"skipped,omitempty"`
	// Ended is set when the recurrence has no further fire time (a one-shot
	// that fired).
	Ended bool `json:"ended,omitempty"`
	// UpdatedAt is when a scheduler last wrote the record.
	UpdatedAt time.Time `json:"updated_at,omitzero"`

	// Paused stops regular slots until resumed (or until Paused.Until).
	Paused *Pause `json:"paused,omitempty"`
	// ResumedAt is when the last pause ended: slots that fell due before
	// it are skipped as "paused", not fired.
	ResumedAt time.Time `json:"resumed_at,omitzero"`
	// SkipNext is how many coming regular slots to skip.
	SkipNext int `json:"skip_next,omitempty"`
	// Triggers are operator-requested extra fires, oldest first.
	Triggers []Trigger `json:"triggers,omitempty"`
	// Backfill replays a past range at a bounded rate.
	Backfill *Backfill `json:"backfill,omitempty"`
	// Running is the last fire awaiting its completion report, tracked
	// for overlap policies other than allow.
	Running *Running `json:"running,omitempty"`
	// LastDone is when Running last completed (or timed out).
	LastDone time.Time `json:"last_done,omitzero"`
	// Owner is the instance that last wrote the record.
	Owner string `json:"owner,omitempty"`
}

// Pause is an operator's pause.
type Pause struct {
	Note  string    `json:"note,omitempty"`
	At    time.Time `json:"at"`
	Until time.Time `json:"until,omitzero"`
}

// Trigger is an extra fire an operator asked for.
type Trigger struct {
	// At is when it was requested: its slot time.
	At   time.Time `json:"at"`
	Note string    `json:"note,omitempty"`
	// Trace is the trace context of the span that asked for it: the
	// parent of the triggered fire's dispatch span. Optional.
	Trace *TraceContext `json:"trace,omitempty"`
}

// Backfill replays the recurrence's slots in [From, To].
type Backfill struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Cursor is the last slot replayed (zero: none yet).
	Cursor time.Time `json:"cursor,omitzero"`
	// Rate is fires per second.
	Rate float64 `json:"rate"`
	// NotBefore is the earliest time of the next replayed fire.
	NotBefore time.Time `json:"not_before,omitzero"`
	Note      string    `json:"note,omitempty"`
	// Total is how many slots the range holds, counted when the backfill
	// was requested; Done how many have been replayed.
	Total int `json:"total,omitempty"`
	Done  int `json:"done,omitempty"`
}

// Running is a dispatched slot whose worker has not reported completion.
type Running struct {
	SlotID   string    `json:"slot_id"`
	Slot     time.Time `json:"slot"`
	Since    time.Time `json:"since"`
	Deadline time.Time `json:"deadline"`
}

// Claim is an instance's right to publish one slot. Its owner publishes
// only before Expires; after Expires any instance may take the slot over,
// and the fire stream's duplicate window plus the ledger make the second
// publish harmless.
type Claim struct {
	// Slot is the scheduled time being fired.
	Slot time.Time `json:"slot"`
	// Token is unique per claim.
	Token string `json:"token"`
	// Owner is the instance id of the claimer.
	Owner string `json:"owner"`
	// At is when the claim was made.
	At time.Time `json:"at"`
	// Expires is when others may take the claim over. Schedulers believe
	// it at most 10 minutes (and at most half the stream's duplicate
	// window) after At, so that no record, forged or written with a clock
	// far ahead, holds a slot or a timer for ever.
	Expires time.Time `json:"expires"`
	// Reason says why a policy produced this fire ("moved", "takeover",
	// later "catchup", "trigger"...); empty for a regular slot.
	Reason string `json:"reason,omitempty"`
	// Note explains Reason, e.g. the calendar rule that moved the slot.
	Note string `json:"note,omitempty"`
	// Nominal is the recurrence's occurrence a moved slot came from.
	Nominal time.Time `json:"nominal,omitzero"`
	// SlotID names an extra slot (a trigger or a backfill); empty for a
	// regular slot, whose id is SlotID(schedule, Slot).
	SlotID string `json:"slot_id,omitempty"`
	// Cancel is the slot id of a running fire that this one cancels
	// (overlap policy cancel_other).
	Cancel string `json:"cancel,omitempty"`
	// Seq is the fire's sequence in the fire stream. It is set only on a
	// claim written after the stream acknowledged the publish (a window
	// claim's slot, see Window): such a claim is settled by its record.
	Seq uint64 `json:"seq,omitempty"`
	// Window names the window claim the slot was published under
	// ("<shard>/<seq>", see Window).
	Window string `json:"window,omitempty"`
	// Trace is a trigger's Trace, carried by the claim of the triggered
	// fire so that whichever instance publishes it parents its dispatch
	// span on the trigger's span. Optional.
	Trace *TraceContext `json:"trace,omitempty"`
}

// ClaimFromStream is Claim.Window on a claim a scheduler took from the
// fire stream: the record was behind the stream (its next slot, or a
// later one, already published), and the claim, settled, stands for the
// schedule's last fire there, so that the recurrence moves past it
// without firing it again (see docs/records.md, "Behind the stream").
const ClaimFromStream = "stream"

// Settled reports whether the record itself shows the claim settled: it
// was written after the publish was acknowledged (Seq is set).
func (c Claim) Settled() bool { return c.Seq > 0 }

// ID is the claim's slot id.
func (c Claim) ID(schedule string) string {
	if c.SlotID != "" {
		return c.SlotID
	}
	return SlotID(schedule, c.Slot)
}

// DecodeState parses a sched_state value. The common form (what a fire
// writes) is read without reflection; anything else by encoding/json,
// with the same result.
func DecodeState(data []byte) (State, error) {
	if s, ok := decodeStateFast(data); ok {
		return s, nil
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return State{}, fmt.Errorf("%w: state record: %v", ErrInvalid, err)
	}
	return s, nil
}

// Encode returns the record's JSON, as AppendJSON writes it into a new
// buffer.
func (s State) Encode() ([]byte, error) {
	return s.appendJSON(make([]byte, 0, s.sizeHint()))
}

// TickStatus is the status of a slot in the ledger.
type TickStatus string

// Tick statuses. A slot moves claimed -> dispatched -> (started) ->
// completed | failed | cancelled (a worker stopped it on a cancel_other
// request), or is recorded as skipped or missed with a reason.
const (
	TickClaimed    TickStatus = "claimed"
	TickDispatched TickStatus = "dispatched"
	TickStarted    TickStatus = "started"
	TickCompleted  TickStatus = "completed"
	TickFailed     TickStatus = "failed"
	TickSkipped    TickStatus = "skipped"
	TickMissed     TickStatus = "missed"
	// Wakeup statuses (and TickCancelled for a fire a worker cancelled).
	TickFired     TickStatus = "fired"
	TickCancelled TickStatus = "cancelled"
	TickExpired   TickStatus = "expired"
	// TickStale: the timer's condition key did not hold its value when it
	// fell due (the run moved on); it was dropped unpublished. Reason
	// names the value found.
	TickStale TickStatus = "stale"
)

// Tick is one slot's ledger entry: key "<id>.<unix ms>" in sched_ticks
// (see SlotID). The bucket's TTL bounds how long ticks are kept.
type Tick struct {
	Schedule string    `json:"schedule"`
	Workflow string    `json:"workflow,omitempty"`
	Slot     time.Time `json:"slot"`
	// SlotID is set for extra slots (triggers, backfills).
	SlotID string     `json:"slot_id,omitempty"`
	Status TickStatus `json:"status"`
	// Reason explains a policy decision (e.g. "misfire: 3m late, threshold 1m").
	Reason string `json:"reason,omitempty"`
	// Owner is the instance that wrote the tick.
	Owner string `json:"owner,omitempty"`
	// Stream and Seq locate the fire message.
	Stream string `json:"stream,omitempty"`
	Seq    uint64 `json:"seq,omitempty"`
	// Duplicate is true when the publish was a duplicate of an earlier one
	// (a takeover that re-published inside the duplicate window).
	Duplicate bool `json:"duplicate,omitempty"`
	// At is when the tick was written.
	At time.Time `json:"at"`
	// Outcome is the worker's report with a completed or failed status.
	Outcome string `json:"outcome,omitempty"`
	// DoneAt is when the worker reported completion.
	DoneAt time.Time `json:"done_at,omitzero"`
	// Through, when set, makes the entry stand for every slot of the
	// schedule from Slot through it that went the same way: the rest of a
	// long misfire beyond the first 1,000 entries, a holiday's every
	// occurrence, a run of occurrences merged into one fire.
	Through time.Time `json:"through,omitzero"`
}

// Key is the tick's key in sched_ticks: its slot id.
func (t Tick) Key() string {
	if t.SlotID != "" {
		return t.SlotID
	}
	return SlotID(t.Schedule, t.Slot)
}

// DecodeTick parses a sched_ticks value.
func DecodeTick(data []byte) (Tick, error) {
	var t Tick
	if err := json.Unmarshal(data, &t); err != nil {
		return Tick{}, fmt.Errorf("%w: tick record: %v", ErrInvalid, err)
	}
	return t, nil
}

// Encode returns the record's JSON.
func (t Tick) Encode() ([]byte, error) { return json.Marshal(t) }

// EventKind is the second token of an event subject.
type EventKind string

// Event kinds published on sched.event.<kind>.<schedule id>.
const (
	EventFired   EventKind = "fired"
	EventMissed  EventKind = "missed"
	EventSkipped EventKind = "skipped"
	EventInvalid EventKind = "invalid"
	EventMoved   EventKind = "moved"
	// EventStalled: a schedule's steps failed several times in a row (the
	// reason is the last error); it keeps being retried.
	EventStalled EventKind = "stalled"
	// EventReplanned: a state record that could not have come from its
	// spec (forged, or written with a bad clock) was re-planned.
	EventReplanned EventKind = "replanned"
	// EventFailed: a claimed slot could not be published for a permanent
	// reason (too large for the server or the stream); its tick says why.
	EventFailed EventKind = "failed"
	// Lease events use "shard-<n>" in place of the schedule id.
	EventLeaseGained EventKind = "lease_gained"
	// EventLeaseLost: an instance no longer holds a lease. Reason says
	// why: "expired" (its key was gone when a renewal came: expired on
	// the server or deleted; Silence says how long the renewals had been
	// silent), "taken over" (another instance's value is there: Holder
	// names it), "conflict" (the renewal failed and the key could not be
	// read), "rebalance" or "stopping" (handed back).
	EventLeaseLost EventKind = "lease_lost"
	// EventGuardClosed: a held lease went without a successful renewal
	// for 90% of its TTL (Silence: how long), so its instance stopped
	// dispatching the shard's schedules and timers; EventGuardOpened: a
	// renewal then succeeded (Silence: how long there had been none) and
	// the shard is dispatched again. A lease whose guard closed and that
	// did not come back is a lease_lost instead.
	EventGuardClosed EventKind = "guard_closed"
	EventGuardOpened EventKind = "guard_opened"
	// EventLeaseIgnored: a record in the leases bucket (Key) is not
	// believed, so it blocks no shard and counts as no member: Reason
	// says why ("unknown key", "not a lease record", "implausible
	// renewed time", "stale": not rewritten within its TTL by the
	// server's clock, "holder not a member"); Holder is the owner it
	// names, Silence its age by the server's clock. One event per key per
	// minute while it stays.
	EventLeaseIgnored EventKind = "lease_ignored"
	EventRecovered    EventKind = "recovered"
	// EventDeadLetter carries a copy of a fire or wakeup a worker gave up on.
	EventDeadLetter EventKind = "dead_letter"
	// Wakeup events use the timer's key in place of the schedule id.
	EventWakeupExpired EventKind = "wakeup_expired"
	// EventAuditRollback: the audit trail no longer extends a head it had
	// (deleted and recreated, cut back, or an anchored head forged); it
	// uses the trail's stream name in place of the schedule id.
	EventAuditRollback EventKind = "audit_rollback"
	// EventAuditUnavailable: the audit trail did not take an append, so
	// the change it was for was refused (nothing changed), or an intent
	// was left without its abandoned record; it uses the trail's stream
	// name in place of the schedule id, and Reason names the action, its
	// target and the error.
	EventAuditUnavailable EventKind = "audit_unavailable"
	// EventStale: a timer dropped unpublished because its condition key
	// no longer held its value; published on sched.event.stale.<run> (the
	// escaped run), with Run and Step in the body.
	EventStale EventKind = "stale"
	// EventStreamFull, EventAccountLimit, EventUnacknowledged: a stream
	// stopped taking an instance's publishes (one event per episode, on
	// sched.event.<kind>.<instance>, with Instance, Stream, the first
	// SlotID held back, or the schedule or shard-<n> whose claim or lease
	// write was refused first, and Reason the error): at its
	// max_msgs/max_bytes with discard new, the account at its JetStream
	// limits, or writes unanswered (a fire for a whole claim, a claim, a
	// lease renewal: a store that cannot write, a full disk). The fires are retried, never recorded as failed; they
	// land once room returns.
	EventStreamFull     EventKind = "stream_full"
	EventAccountLimit   EventKind = "account_limit"
	EventUnacknowledged EventKind = "unacknowledged"
	// EventUndeliverable: a fire (or wakeup) was delivered to a consumer
	// MaxDeliver times without an ack, and the server stopped delivering
	// it (advisory CONSUMER.MAX_DELIVERIES): Schedule, Slot, SlotID,
	// Stream, Seq, Count (deliveries) and Reason (naming the consumer).
	// The scheduler does not publish it again.
	EventUndeliverable EventKind = "undeliverable"
	// EventOverloaded: an instance's due work waits for its workers: the
	// oldest due schedule not yet taken up is more than a second late
	// (one event per episode, on sched.event.overloaded.<instance>, with
	// Count the schedules waiting and Reason how late the oldest is).
	// Each takes its turn under its misfire policy: a slot past its
	// threshold is recorded missed (or merged), not fired late.
	// EventCaughtUp ends the episode: none waits any more; Count is the
	// slots recorded missed meanwhile, Reason how long it lasted and its
	// peak.
	EventOverloaded EventKind = "overloaded"
	EventCaughtUp   EventKind = "caught_up"
)

// Event is the body of an observer event.
type Event struct {
	Kind     EventKind `json:"kind"`
	Schedule string    `json:"schedule,omitempty"`
	Slot     time.Time `json:"slot,omitzero"`
	// Field and Reason describe an invalid spec or a policy decision.
	Field  string `json:"field,omitempty"`
	Reason string `json:"reason,omitempty"`
	Count  uint64 `json:"count,omitempty"`
	// CountAtLeast: Count is a lower bound (too many slots to count).
	CountAtLeast bool      `json:"count_at_least,omitempty"`
	Owner        string    `json:"owner,omitempty"`
	At           time.Time `json:"at"`
	// Instance is the instance an instance event is about (recovered);
	// Shard the shard a lease event is about. Schedule is empty then.
	Instance string `json:"instance,omitempty"`
	Shard    *int   `json:"shard,omitempty"`
	// Holder is the instance that holds a lease this one lost (lease_lost
	// taken over); Silence how long a lease went without a successful
	// renewal (guard_closed, guard_opened, lease_lost), as a Go duration.
	Holder  string `json:"holder,omitempty"`
	Silence string `json:"silence,omitempty"`
	// Key is the leases bucket's key a lease_ignored event is about.
	Key string `json:"key,omitempty"`
	// Run and Step identify the timer of a stale event (unescaped).
	Run  string `json:"run,omitempty"`
	Step string `json:"step,omitempty"`
	// A fired event tells the fire: its slot id (the message's
	// Nats-Msg-Id), workflow, scheduled time in the schedule's zone
	// (Sched-Scheduled-At), when it was published (Sched-Dispatched-At),
	// and the stream and sequence the stream acknowledged it with. Reason
	// is its Sched-Reason ("" for a regular slot).
	SlotID       string    `json:"slot_id,omitempty"`
	Workflow     string    `json:"workflow,omitempty"`
	ScheduledAt  time.Time `json:"scheduled_at,omitzero"`
	DispatchedAt time.Time `json:"dispatched_at,omitzero"`
	Stream       string    `json:"stream,omitempty"`
	Seq          uint64    `json:"seq,omitempty"`
}
