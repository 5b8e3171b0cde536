// Package testwait waits, in tests, for a positive sign with a deadline:
// a condition that becomes true, a check that succeeds, a value on a
// channel. A test never sleeps and then asserts that nothing happened; it
// waits here for something that shows the window passed (a later slot
// fired, a revision observed, an event seen).
//
// Every wait takes a timeout and, when it passes, fails with what was
// awaited and how long it waited. Eventually, Receive and Done call
// t.Fatalf, so they belong on the test's own goroutine; Until returns an
// error for code that has no test at hand (examples, helpers that return
// errors, other goroutines).
package testwait

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// The pause between two checks starts at firstPause and doubles up to
// maxPause: a condition that holds soon is seen soon, one that takes
// seconds is not asked hundreds of times a second.
const (
	firstPause = time.Millisecond
	maxPause   = 100 * time.Millisecond
)

// errFalse is the last error of a condition that returned false.
var errFalse = errors.New("condition still false")

// TimeoutError is Until's error when the timeout passes first.
type TimeoutError struct {
	// What is what was awaited.
	What string
	// Timeout is the wait's timeout, Elapsed the time actually waited
	// (the last check may run past the timeout).
	Timeout, Elapsed time.Duration
	// Last is the last check's error.
	Last error
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("testwait: %s: not within %s (waited %s): %v",
		e.What, e.Timeout, e.Elapsed.Round(time.Millisecond), e.Last)
}

// Unwrap returns the last check's error.
func (e *TimeoutError) Unwrap() error { return e.Last }

// Until calls check until it returns nil, pausing a little longer after
// each failed check, and returns nil then. When timeout has passed after a
// failed check it returns a *TimeoutError naming what, the time waited and
// check's last error (which should say what was seen instead). check runs
// at least once; a check that blocks delays the verdict by as much.
func Until(timeout time.Duration, what string, check func() error) error {
	start := time.Now()
	pause := firstPause
	for {
		err := check()
		if err == nil {
			return nil
		}
		elapsed := time.Since(start)
		if elapsed >= timeout {
			return &TimeoutError{What: what, Timeout: timeout, Elapsed: elapsed, Last: err}
		}
		// The poll interval, bounded by the deadline: this is the one
		// place where tests wait by the clock.
		time.Sleep(min(pause, timeout-elapsed))
		pause = min(2*pause, maxPause)
	}
}

// Eventually calls cond until it returns true, as Until does, and fails
// the test (t.Fatalf) naming what and the time waited when timeout passes
// first. Call it from the test's goroutine.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	err := Until(timeout, what, func() error {
		if cond() {
			return nil
		}
		return errFalse
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Receive waits for a value on ch and returns it. It fails the test when
// timeout passes first or when ch is closed. Call it from the test's
// goroutine.
func Receive[T any](t testing.TB, timeout time.Duration, what string, ch <-chan T) T {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case v, ok := <-ch:
		if !ok {
			t.Fatalf("testwait: %s: channel closed", what)
		}
		return v
	case <-timer.C:
		t.Fatalf("testwait: %s: nothing within %s", what, timeout)
	}
	var zero T
	return zero
}

// Done waits until ch yields a value or is closed (a done or ready
// channel), and fails the test when timeout passes first. Call it from the
// test's goroutine.
func Done[T any](t testing.TB, timeout time.Duration, what string, ch <-chan T) {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-ch:
	case <-timer.C:
		t.Fatalf("testwait: %s: not within %s", what, timeout)
	}
}
