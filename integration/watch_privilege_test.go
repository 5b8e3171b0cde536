package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/cli"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/daemon/daemontest"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/testlog"
	"github.com/jetsched/jetsched/internal/testwait"
)

// TestWatchAsOperator: with natsconf/'s shipped accounts, the operator
// (account OPS, which has no JetStream and creates no consumer) runs
// `schedule ls`, `status` and `wakeup ls` with --watch, and each shows a
// change made after it started: the writes of the watched buckets reach
// OPS through its stream imports. The operator may follow no other
// bucket, and a worker none at all.
func TestWatchAsOperator(t *testing.T) {
	url := startNatsconfServer(t)
	d, err := daemon.Start(context.Background(), daemon.Config{
		Conn:     natsconn.Options{URL: url, User: "scheduler", Password: "scheduler-secret"},
		AuditKey: []byte(testAuditKey),
	})
	if err != nil {
		t.Fatalf("the scheduler cannot run with its permissions: %v", err)
	}
	defer daemontest.Stop(t, d)
	asOperator := []string{"--nats-url", url, "--user", "operator", "--password", "operator-secret"}
	run := func(args ...string) {
		t.Helper()
		var out, errOut testlog.Buffer
		if code := cli.Main(context.Background(), append(args, asOperator...), &out, &errOut); code != cli.ExitOK {
			t.Fatalf("%v as the operator: exit %d: %s", args, code, errOut.String())
		}
	}
	run("schedule", "add", "--id", "a", "--workflow", "invoices", "--every", "1h")

	ls := watchAs(t, asOperator, "schedule", "ls", "--watch")
	status := watchAs(t, asOperator, "status", "--watch")
	timers := watchAs(t, asOperator, "wakeup", "ls", "--watch", "--json")
	ls.waitLine(t, "schedule ls --watch: a listed", "a", "planned")
	status.waitLine(t, "status --watch: a listed", "a", "planned")

	run("schedule", "add", "--id", "b", "--workflow", "invoices", "--cron", "0 3 * * *")
	ls.waitLine(t, "schedule ls --watch: b added while watching", "b", "cron 0 3 * * *")
	status.waitLine(t, "status --watch: b added while watching", "b", "planned")
	run("schedule", "pause", "a")
	ls.waitLine(t, "schedule ls --watch: a paused while watching", "a", "paused")
	run("wakeup", "add", "--run", "r1", "--step", "s1", "--workflow", "invoices", "--when", "2h")
	timers.waitLine(t, "wakeup ls --watch: a timer added while watching", `"run":"r1"`, `"step":"s1"`)
	for _, w := range []*watcher{ls, status, timers} {
		w.stop(t)
	}

	op := connectAs(t, url, "operator", "operator-secret")
	for _, s := range []string{"$KV.sched_ticks.>", "$KV.sched_leases.>", "$KV.sched_calendars.>", "$KV.>", "sched.fire.>"} {
		op.refuseSubscribe(t, "operator subscribes to "+s+" (not a watched bucket)", s)
	}
	billing := connectAs(t, url, "billing-worker", "worker-secret")
	for _, s := range []string{"$KV.sched_specs.>", "$KV.sched_wakeups.>"} {
		billing.refuseSubscribe(t, "worker subscribes to "+s, s)
	}
}

// watcher is a --watch command running in process until stopped.
type watcher struct {
	args   []string
	out    *testlog.Buffer
	errOut *testlog.Buffer
	cancel context.CancelFunc
	done   chan int
}

// watchAs starts `scheduler <args> <conn...>`.
func watchAs(t *testing.T, conn []string, args ...string) *watcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{args: args, out: &testlog.Buffer{}, errOut: &testlog.Buffer{}, cancel: cancel, done: make(chan int, 1)}
	go func() { w.done <- cli.Main(ctx, append(append([]string{}, args...), conn...), w.out, w.errOut) }()
	t.Cleanup(cancel)
	return w
}

// waitLine waits until the output has a line holding all of want; it
// fails at once if the command ended.
func (w *watcher) waitLine(t *testing.T, what string, want ...string) {
	t.Helper()
	testwait.Eventually(t, 15*time.Second, what, func() bool {
		select {
		case code := <-w.done:
			t.Fatalf("%v ended with exit %d: %s", w.args, code, w.errOut.String())
		default:
		}
		for line := range strings.SplitSeq(w.out.String(), "\n") {
			ok := true
			for _, s := range want {
				ok = ok && strings.Contains(line, s)
			}
			if ok {
				return true
			}
		}
		return false
	})
}

// stop ends the command and checks that it exited 0.
func (w *watcher) stop(t *testing.T) {
	t.Helper()
	w.cancel()
	select {
	case code := <-w.done:
		if code != cli.ExitOK {
			t.Fatalf("%v: exit %d: %s", w.args, code, w.errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%v did not end with its context", w.args)
	}
}
