package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/testlog"
	"github.com/jetsched/jetsched/internal/testwait"
)

// watching runs a --watch command line against the env's server until
// the test stops it; stop cancels its context and checks that it ended
// with exit status 0.
func (e *env) watching(args ...string) (out *testlog.Buffer, stop func()) {
	e.t.Helper()
	out = &testlog.Buffer{}
	var errOut testlog.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- Main(ctx, append(args, "--nats-url", e.url), out, &errOut) }()
	return out, func() {
		e.t.Helper()
		cancel()
		select {
		case code := <-done:
			if code != ExitOK {
				e.t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
			}
		case <-time.After(10 * time.Second):
			e.t.Fatalf("%v did not end with its context", args)
		}
	}
}

// waitFor waits until out has a line containing every one of want.
func waitFor(t *testing.T, out *testlog.Buffer, what string, want ...string) {
	t.Helper()
	testwait.Eventually(t, 10*time.Second, what, func() bool {
		for line := range strings.SplitSeq(out.String(), "\n") {
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(line, w)
			}
			if ok {
				return true
			}
		}
		return false
	})
}

// TestListingsWatch: schedule ls, status and wakeup ls with --watch
// print, when stdout is not a terminal, the page and then each row that
// a change (add, pause, remove; a timer added and cancelled) touches,
// until their context ends.
func TestListingsWatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must("schedule", "add", "--id", "a", "--workflow", "wf", "--every", "1h")
	ls, stopLs := e.watching("schedule", "ls", "--watch")
	status, stopStatus := e.watching("status", "--watch")
	waitFor(t, ls, "the page with its header", "ID", "STATE", "LEFT", "PASSED")
	waitFor(t, ls, "a listed", "a", "every 1h", "planned")
	waitFor(t, status, "the summary", "1 schedules")

	e.must("schedule", "add", "--id", "b", "--workflow", "wf", "--cron", "0 3 * * *")
	waitFor(t, ls, "b added", "b", "cron 0 3 * * *", "planned")
	waitFor(t, status, "b added to status", "b", "planned")
	e.must("schedule", "pause", "a", "--note", "on hold")
	waitFor(t, ls, "a paused", "a", "every 1h", "paused")
	waitFor(t, status, "a paused in status", "a", "paused", "yes: on hold")
	e.must("schedule", "rm", "b")
	waitFor(t, ls, "b removed", "b", "removed")
	stopLs()
	stopStatus()
	if n := strings.Count(ls.String(), "ID  "); n != 1 {
		t.Fatalf("the header printed %d times, want once:\n%s", n, ls.String())
	}

	timers, stopTimers := e.watching("wakeup", "ls", "--watch", "--json")
	e.must("wakeup", "add", "--run", "r1", "--step", "s1", "--workflow", "wf", "--when", "2h")
	waitFor(t, timers, "the timer added", `"run":"r1"`, `"step":"s1"`)
	e.must("wakeup", "cancel", "--run", "r1", "--step", "s1")
	waitFor(t, timers, "the timer cancelled", `{"removed":`)
	stopTimers()

	e.refused(ExitInvalid, "--all", "schedule", "ls", "--watch", "--all")
}

func TestRelDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0: "0s", 45 * time.Second: "45s", 4*time.Minute + 12*time.Second: "4m 12s",
		3*time.Hour + 5*time.Minute + 59*time.Second: "3h 05m", 7*24*time.Hour - time.Second: "6d 23h",
		-time.Second: "0s",
	} {
		if got := relDuration(d); got != want {
			t.Errorf("relDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
