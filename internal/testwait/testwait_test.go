package testwait_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/testwait"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeT records the first fatal failure and ends its goroutine, as
// testing.T does.
type fakeT struct {
	testing.TB
	failure string
}

func (f *fakeT) Helper() {}

func (f *fakeT) Fatal(args ...any) {
	f.failure = fmt.Sprint(args...)
	runtime.Goexit()
}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.failure = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// failure runs fn with a fakeT on its own goroutine and returns the
// failure it reported ("" for none).
func failure(fn func(t testing.TB)) string {
	f := &fakeT{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f.failure
}

// TestUntilBacksOff: checks come after pauses of 1, 2, 4, ... ms capped at
// 100 ms, and Until returns at the first success.
func TestUntilBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var at []time.Duration
		err := testwait.Until(time.Minute, "the tenth check", func() error {
			at = append(at, time.Since(start))
			if len(at) < 10 {
				return errors.New("not yet")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		ms := time.Millisecond
		want := []time.Duration{0, 1 * ms, 3 * ms, 7 * ms, 15 * ms, 31 * ms, 63 * ms, 127 * ms, 227 * ms, 327 * ms}
		if fmt.Sprint(at) != fmt.Sprint(want) {
			t.Fatalf("checks at %v, want %v", at, want)
		}
	})
}

// TestUntilTimesOut: the error names what was awaited, the timeout and the
// last check's error, which it wraps; the last check is at the deadline.
func TestUntilTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		seen := errors.New("seen revision 3")
		var last time.Duration
		err := testwait.Until(time.Second, "revision 4", func() error {
			last = time.Since(start)
			return seen
		})
		var te *testwait.TimeoutError
		if !errors.As(err, &te) || !errors.Is(err, seen) {
			t.Fatalf("error %v (%T), want a TimeoutError wrapping the last check's", err, err)
		}
		if te.What != "revision 4" || te.Timeout != time.Second || te.Elapsed != time.Second || last != time.Second {
			t.Fatalf("%+v, last check at %v", te, last)
		}
		if msg := err.Error(); msg != "testwait: revision 4: not within 1s (waited 1s): seen revision 3" {
			t.Fatalf("message %q", msg)
		}
	})
}

// TestUntilChecksOnceWithoutTime: a zero timeout still checks once.
func TestUntilChecksOnceWithoutTime(t *testing.T) {
	calls := 0
	if err := testwait.Until(0, "first check", func() error { calls++; return nil }); err != nil || calls != 1 {
		t.Fatalf("Until(0) = %v after %d checks", err, calls)
	}
}

func TestEventually(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := 0
		if got := failure(func(ft testing.TB) {
			testwait.Eventually(ft, time.Second, "three checks", func() bool { n++; return n == 3 })
		}); got != "" || n != 3 {
			t.Fatalf("failed with %q after %d checks", got, n)
		}
		got := failure(func(ft testing.TB) {
			testwait.Eventually(ft, 2*time.Second, "the slot after the pause", func() bool { return false })
		})
		if want := "testwait: the slot after the pause: not within 2s (waited 2s): condition still false"; got != want {
			t.Fatalf("failure %q, want %q", got, want)
		}
	})
}

func TestReceive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ch := make(chan int, 1)
		time.AfterFunc(time.Second, func() { ch <- 7 }) // a late sender, in the bubble's time
		var v int
		if got := failure(func(ft testing.TB) { v = testwait.Receive(ft, 2*time.Second, "a seven", ch) }); got != "" || v != 7 {
			t.Fatalf("Receive = %d, failure %q", v, got)
		}
		if got := failure(func(ft testing.TB) { testwait.Receive(ft, time.Second, "an eight", ch) }); got != "testwait: an eight: nothing within 1s" {
			t.Fatalf("failure %q", got)
		}
		close(ch)
		if got := failure(func(ft testing.TB) { testwait.Receive(ft, time.Second, "a nine", ch) }); got != "testwait: a nine: channel closed" {
			t.Fatalf("failure %q", got)
		}
	})
}

func TestDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ready := make(chan struct{})
		if got := failure(func(ft testing.TB) { testwait.Done(ft, time.Second, "ready", ready) }); !strings.Contains(got, "ready: not within 1s") {
			t.Fatalf("failure %q", got)
		}
		close(ready)
		if got := failure(func(ft testing.TB) { testwait.Done(ft, time.Second, "ready", ready) }); got != "" {
			t.Fatalf("closed channel: failure %q", got)
		}
		values := make(chan error, 1)
		values <- nil
		if got := failure(func(ft testing.TB) { testwait.Done(ft, time.Second, "a result", values) }); got != "" {
			t.Fatalf("value: failure %q", got)
		}
	})
}
