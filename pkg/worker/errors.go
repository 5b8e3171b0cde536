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
//	a panic              as any other error (a *PanicError, stack logged)
//
// On the last allowed delivery (Config.MaxDeliver) a failure dead-letters
// the message (a copy on sched.event.dead_letter.<workflow>.<id>) and reports it
// "failed", so the ledger says so.
//
// Two endings are not failures. A handler whose context a scheduler's
// cancel request ended (overlap policy cancel_other; context.Cause is
// ErrCancelRequested) and that returns an error has its fire terminated
// and reported "cancelled". A handler whose context ended because the
// worker stops (StopAndCancel, or Start's context ending; the cause is
// ErrStopped or that context's) and that returns an error has its message
// nak'ed for another instance to take (redelivered half a second later),
// and not reported, unless
// that was the last allowed delivery: then it is dead-lettered as a
// failure, since nothing would redeliver it. A handler whose Timeout ran
// out (cause ErrTimeout) failed.

// Sentinel causes of a handler context's end (context.Cause).
var (
	// ErrCancelRequested: a scheduler asked to cancel the running slot
	// (overlap policy cancel_other). The cause wraps it with the slot that
	// replaces this one.
	ErrCancelRequested = errors.New("worker: cancel requested by the scheduler")
	// ErrStopped: StopAndCancel cancelled the running handlers.
	ErrStopped = errors.New("worker: stopped")
	// ErrTimeout: the handler ran longer than its Timeout.
	ErrTimeout = errors.New("worker: handler timeout")
)

// Lifecycle errors.
var (
	// ErrStarted is returned by Start on a running worker, and by Handle
	// and HandleWakeup once it runs.
	ErrStarted = errors.New("worker: already started")
	// ErrStopping is returned by Start while a Stop that gave up waiting
	// still has handlers running: call Stop again.
	ErrStopping = errors.New("worker: still stopping")
)

// RetryError asks for the message again after a delay. Return one with
// Retry; recognise one with errors.As.
type RetryError struct {
	Err   error
	After time.Duration
}

func (e *RetryError) Error() string { return fmt.Sprintf("retry in %s: %v", e.After, e.Err) }

// Unwrap returns the error that caused the retry.
func (e *RetryError) Unwrap() error { return e.Err }

// Retry asks for the message again after the given delay.
func Retry(err error, after time.Duration) error {
	if err == nil {
		err = errors.New("not ready")
	}
	return &RetryError{Err: err, After: after}
}

// PermanentError gives up on a message: it is terminated, not
// redelivered, and reported failed. Return one with Permanent; recognise
// one with errors.As.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return "permanent: " + e.Err.Error() }

// Unwrap returns the error that made the failure permanent.
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent gives up on the message: it is terminated, not redelivered,
// and reported as failed.
func Permanent(err error) error {
	if err == nil {
		err = errors.New("permanent failure")
	}
	return &PermanentError{Err: err}
}

// PanicError is a handler's panic, recovered: the delivery failed as if
// the handler had returned it, so it is retried with the backoff and
// dead-lettered at the last delivery. Stack is the panicking goroutine's
// stack, also logged.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("handler panicked: %v", e.Value) }

// Unwrap returns the panic's value when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// SettleError is a failure to tell the server or the schedulers how a
// delivery went. Op is "ack", "nak", "term", "in_progress", "report" (the
// completion report), "dead_letter" or "fetch". Each one is logged, counted
// (jetsched_worker_settle_errors_total) and passed to Config.ErrorHandler.
type SettleError struct {
	Op  string
	Err error
}

func (e *SettleError) Error() string { return "worker: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the NATS error.
func (e *SettleError) Unwrap() error { return e.Err }
