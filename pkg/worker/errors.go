package worker

import (
	"errors"
	"fmt"
	"time"
)

// What a handler returns steers the delivery:
//
//	nil                  ack; a completion report "completed"
//	Retry(err, after)    nak: redelivered after `after`
//	Permanent(err)       term: never redelivered; reported "failed"
//	any other error      nak with the worker's backoff for that delivery
//
// On the last allowed delivery (Config.MaxDeliver) a failure dead-letters
// the message (a copy on sched.event.dead_letter.<workflow>.<id>) and reports it
// "failed", so the ledger says so.

type retryError struct {
	err   error
	after time.Duration
}

func (e *retryError) Error() string { return fmt.Sprintf("retry in %s: %v", e.after, e.err) }
func (e *retryError) Unwrap() error { return e.err }

// Retry asks for the message again after the given delay.
func Retry(err error, after time.Duration) error {
	if err == nil {
		err = errors.New("not ready")
	}
	return &retryError{err: err, after: after}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return "permanent: " + e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent gives up on the message: it is terminated, not redelivered,
// and reported as failed.
func Permanent(err error) error {
	if err == nil {
		err = errors.New("permanent failure")
	}
	return &permanentError{err: err}
}
