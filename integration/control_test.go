package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/cli"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/testwait"
)

// TestOperatorCLI drives the operator commands against a running daemon:
// trigger, pause and resume, skip, history and status.
func TestOperatorCLI(t *testing.T) {
	d := startDaemon(t, daemon.Config{})
	run := cliRunner(d)
	must := func(args ...string) string {
		t.Helper()
		code, out, errOut := run(args...)
		if code != cli.ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	must("schedule", "add", "--id", "ops", "--workflow", "wf", "--every", "1s", "--overlap", "allow", "--misfire", "fire_once")
	testwait.Eventually(t, 10*time.Second, "the trigger of ops accepted", func() bool {
		code, _, _ := run("schedule", "trigger", "ops", "--note", "first")
		return code == cli.ExitOK // refused until a scheduler planned it
	})
	must("schedule", "pause", "ops", "--note", "deploy", "--for", "1h")
	out := must("status")
	if !strings.Contains(out, "ops") || !strings.Contains(out, "yes: deploy") {
		t.Fatalf("status does not show the pause:\n%s", out)
	}
	var st admin.StatusPage
	if err := json.Unmarshal([]byte(must("status", "--json")), &st); err != nil || len(st.Items) != 1 || st.Items[0].Owner == "" || st.Summary.Paused != 1 {
		t.Fatalf("status --json: %+v %v", st, err)
	}
	must("schedule", "resume", "ops")
	// A second resume is no error (scripts may repeat it); --strict keeps
	// the old refusal.
	if code, out, errOut := run("schedule", "resume", "ops"); code != cli.ExitOK || !strings.Contains(out+errOut, "not paused") {
		t.Fatalf("second resume: exit %d: %s%s", code, out, errOut)
	}
	if code, _, errOut := run("schedule", "resume", "ops", "--strict"); code != cli.ExitInvalid || !strings.Contains(errOut, "not paused") {
		t.Fatalf("second resume --strict: exit %d: %s", code, errOut)
	}
	must("schedule", "skip", "ops", "-n", "1")
	testwait.Eventually(t, 10*time.Second, "the trigger and skip-next in the history of ops", func() bool {
		h := must("schedule", "history", "ops", "--all")
		return strings.Contains(h, "trigger-") && strings.Contains(h, "skip-next") && strings.Contains(h, "dispatched")
	})
	if code, _, errOut := run("schedule", "backfill", "ops", "--from", "2030-01-01T00:00:00Z", "--to", "2030-01-01T00:00:10Z"); code != cli.ExitInvalid || !strings.Contains(errOut, "future") {
		t.Fatalf("backfill into the future: exit %d: %s", code, errOut)
	}
	from := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	code, _, errOut := run("schedule", "backfill", "ops", "--from", from.Format(time.RFC3339), "--to", from.Add(4*time.Second).Format(time.RFC3339), "--rate", "20", "--wait")
	if code != cli.ExitOK || !strings.Contains(errOut, "done") {
		t.Fatalf("backfill --wait: exit %d: %s", code, errOut)
	}
	if code, _, errOut := run("schedule", "pause", "nope"); code != cli.ExitNotFound || !strings.Contains(errOut, "nope") {
		t.Fatalf("pause of an unknown schedule: exit %d: %s", code, errOut)
	}
}
