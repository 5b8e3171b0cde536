package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/cli"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/demoworker"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestWakeupCLIAndApprovalFlow registers timers with the CLI against a
// running daemon: the unapproved order escalates, the approved one is
// cancelled, and a stale wakeup is dropped by the worker's condition check.
func TestWakeupCLIAndApprovalFlow(t *testing.T) {
	ctx := context.Background()
	d := startDaemon(t, daemon.Config{ConditionBuckets: []string{demoworker.RunsBucket}})
	run := cliRunner(d)
	state := map[string]string{"order 1": "awaiting", "order 2": "awaiting", "order 3": "approved"}
	handled := make(chan [2]string, 8)
	w, err := demoworker.NewWakeups(demoworker.WakeupConfig{JetStream: d.JetStream(),
		Holds: func(run, cond string) bool { return state[run] == cond },
		OnWakeup: func(m wakeups.Meta, acted bool) {
			verdict := "dropped"
			if acted {
				verdict = "acted"
			}
			handled <- [2]string{m.Run, verdict}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.StopAndCancel(context.Background()) }()

	for _, order := range []string{"order 1", "order 2", "order 3"} {
		if code, _, errOut := run("wakeup", "add", "--run", order, "--step", "escalate", "--workflow", "approvals",
			"--when", "2s", "--condition", "awaiting", "--payload", `{"action":"escalate"}`); code != cli.ExitOK {
			t.Fatalf("add %s: %s", order, errOut)
		}
	}
	code, out, _ := run("wakeup", "ls", "--workflow", "approvals")
	if code != cli.ExitOK || strings.Count(out, "escalate") != 3 || !strings.Contains(out, "order 2") {
		t.Fatalf("ls: exit %d\n%s", code, out)
	}
	// Order 2 is approved: its timer is cancelled.
	if code, out, errOut := run("wakeup", "cancel", "--run", "order 2"); code != cli.ExitOK || !strings.Contains(out, "1 timer(s)") {
		t.Fatalf("cancel: exit %d: %s %s", code, out, errOut)
	}
	got := map[string]string{}
	for range 2 {
		select {
		case h := <-handled:
			got[h[0]] = h[1]
		case <-time.After(10 * time.Second):
			t.Fatalf("wakeups handled so far: %v", got)
		}
	}
	if got["order 1"] != "acted" || got["order 3"] != "dropped" || got["order 2"] != "" {
		t.Fatalf("handled %v: want order 1 escalated, order 3 dropped as stale, order 2 cancelled", got)
	}
	if code, _, errOut := run("wakeup", "add", "--run", "x", "--step", "y", "--workflow", "wf", "--when", "25:00"); code != cli.ExitInvalid || !strings.Contains(errOut, "--when") {
		t.Fatalf("bad --when: exit %d: %s", code, errOut)
	}

	// A scheduler-checked condition: order-4 is approved (its key says so)
	// but its cancel never comes; the scheduler drops the wakeup as stale
	// and the worker never sees it, while order-5's fires.
	runs, err := demoworker.OpenRuns(ctx, d.JetStream())
	if err != nil {
		t.Fatal(err)
	}
	var staleID string
	for _, order := range []string{"order-4", "order-5"} {
		state[order] = "awaiting" // the worker's own check would pass: only the scheduler's can drop it
		if err := runs.Set(ctx, order, "awaiting"); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := run("wakeup", "add", "--json", "--run", order, "--step", "escalate", "--workflow", "approvals",
			"--when", "2s", "--condition", "awaiting", "--condition-key", runs.ConditionKey(order))
		var added struct {
			Key   string        `json:"key"`
			Timer kvstore.Timer `json:"timer"`
		}
		if code != cli.ExitOK || json.Unmarshal([]byte(out), &added) != nil {
			t.Fatalf("add %s: %s %s", order, out, errOut)
		}
		if order == "order-4" {
			staleID = kvstore.WakeupID(added.Key, added.Timer.Due)
		}
	}
	if err := runs.Set(ctx, "order-4", "approved"); err != nil {
		t.Fatal(err)
	}
	select {
	case h := <-handled:
		if h != [2]string{"order-5", "acted"} {
			t.Fatalf("handled %v, want order-5 acted", h)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("order-5's wakeup not handled")
	}
	testwait.Eventually(t, 10*time.Second, "the stale tick", func() bool {
		tick, err := d.Store().GetTick(ctx, staleID)
		return err == nil && tick.Status == kvstore.TickStale
	})
	select {
	case h := <-handled:
		t.Fatalf("handled %v after order-4 was dropped as stale", h)
	default:
	}
}
