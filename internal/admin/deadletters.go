package admin

import (
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// DeadLetterListRequest pages through dead letters (deadletter.list),
// newest first: Cursor is a previous page's next_cursor (the sequence the
// next page is older than), Limit the page size (default DefaultLimit, at
// most MaxLimit), Workflow filters.
type DeadLetterListRequest struct {
	Workflow string `json:"workflow,omitempty"`
	Cursor   string `json:"cursor,omitempty"`
	Limit    int    `json:"limit,omitempty"`
}

// DeadLetterRequest names one dead letter by its sequence in the event
// stream (deadletter.get).
type DeadLetterRequest struct {
	Seq uint64 `json:"seq"`
}

// DeadLetterActionRequest names the dead letters deadletter.retry and
// deadletter.purge act on: one by Seq, or, with All, every one (of
// Workflow when given). Before (purge only) keeps those stored at or
// after it.
type DeadLetterActionRequest struct {
	Seq      uint64    `json:"seq,omitempty"`
	Workflow string    `json:"workflow,omitempty"`
	All      bool      `json:"all,omitempty"`
	Before   time.Time `json:"before,omitzero"`
}

// DeadLetter is one dead letter: a copy of a fire or wakeup a worker gave
// up on, as the worker's headers describe it.
type DeadLetter struct {
	// Seq is its sequence in the event stream, At when it was stored.
	Seq uint64    `json:"seq"`
	At  time.Time `json:"at"`
	// Kind is "fire" or "wakeup".
	Kind     string `json:"kind"`
	Workflow string `json:"workflow"`
	// Schedule is a fire's schedule id; Run and Step a wakeup's timer.
	Schedule string `json:"schedule,omitempty"`
	Run      string `json:"run,omitempty"`
	Step     string `json:"step,omitempty"`
	// ID is the original message's id: the slot id of a fire, the wakeup
	// id of a wakeup.
	ID string `json:"id"`
	// Slot is the time the message was due (Sched-Scheduled-At or
	// Sched-Due-At).
	Slot time.Time `json:"slot,omitzero"`
	// Deliveries is how often it was delivered; Reason the last error.
	Deliveries int    `json:"deliveries"`
	Reason     string `json:"reason"`
	// Subject is the original message's subject.
	Subject string `json:"subject"`
	// RetryOf is the sequence of the dead letter this message was itself
	// retried from (0: an original message).
	RetryOf uint64 `json:"retry_of,omitempty"`
}

// DeadLetterDetail is deadletter.get's reply: the dead letter, every
// header, the body, and the slot's ledger entry when one is found.
type DeadLetterDetail struct {
	DeadLetter
	Headers map[string][]string `json:"headers"`
	Body    []byte              `json:"body"`
	Ledger  *kvstore.Tick       `json:"ledger,omitempty"`
}

// DeadLetterRetried is one dead letter published again: on Subject with
// MsgID; Duplicate when it had been retried before (nothing was
// published again).
type DeadLetterRetried struct {
	Seq       uint64 `json:"seq"`
	Subject   string `json:"subject"`
	MsgID     string `json:"msg_id"`
	Duplicate bool   `json:"duplicate,omitempty"`
}

// DeadLetterRetryReply is deadletter.retry's reply.
type DeadLetterRetryReply struct {
	Retried []DeadLetterRetried `json:"retried"`
}

// DeadLetterPurgeReply is deadletter.purge's reply: the sequences deleted
// and, when More, that others matched beyond MaxDeadLetterPurge (ask
// again).
type DeadLetterPurgeReply struct {
	Purged []uint64 `json:"purged"`
	More   bool     `json:"more,omitempty"`
}

// MaxDeadLetterPurge is the most dead letters one deadletter.purge
// deletes; one retry request retries as many.
const MaxDeadLetterPurge = 1000
