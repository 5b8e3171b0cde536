package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/cli"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/testwait"
)

// TestScheduleDescribe: describe shows in one view a calendar's holiday
// and a DST move among the next fires, a pause with its note, and the
// trigger and pause among the last actions with their reasons and who
// asked (the audit trail); --json gives the owner and the settings.
func TestScheduleDescribe(t *testing.T) {
	const key = "a-secret-of-at-least-16-bytes"
	d := startDaemon(t, daemon.Config{AuditKey: []byte(key)})
	run := cliRunner(d)
	must := mustRun(t, run)

	// The next US spring-forward (second Sunday of March) after a year
	// from now: 02:30 does not exist that day; the day after is a holiday.
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	year := time.Now().In(ny).Year() + 1
	dst := time.Date(year, time.March, 1, 0, 0, 0, 0, ny)
	dst = dst.AddDate(0, 0, (7-int(dst.Weekday()))%7+7)
	cal := filepath.Join(t.TempDir(), "cal.json")
	body := fmt.Sprintf(`{"zone":"America/New_York","holidays":[{"name":"Test day","dates":["%s"]}]}`, dst.AddDate(0, 0, 1).Format(time.DateOnly))
	if err := os.WriteFile(cal, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	must("schedule", "add", "--id", "dst", "--workflow", "wf", "--cron", "30 2 * * *", "--tz", "America/New_York",
		"--calendar", cal, "--start", dst.AddDate(0, 0, -1).Format(time.RFC3339))
	out := must("schedule", "describe", "dst", "--next", "3")
	for _, want := range []string{"status:  planned", "Next fires (America/New_York)", "DST gap", "Test day", "skip  (default)", "catchup_window      24h  (default)", "Owner: shard"} {
		if !strings.Contains(out, want) {
			t.Fatalf("describe dst lacks %q:\n%s", want, out)
		}
	}

	must("schedule", "add", "--id", "ops", "--workflow", "wf", "--every", "1h")
	testwait.Eventually(t, 10*time.Second, "the trigger of ops accepted", func() bool {
		code, _, _ := run("schedule", "trigger", "ops", "--note", "first run")
		return code == cli.ExitOK // refused until a scheduler planned it
	})
	must("schedule", "pause", "ops", "--note", "db migration", "--for", "1h")
	testwait.Eventually(t, 10*time.Second, "describe shows the trigger's fire and the pause", func() bool {
		out = must("schedule", "describe", "ops")
		return strings.Contains(out, "dispatched slot ops.trigger-") && strings.Contains(out, "trigger: first run")
	})
	for _, want := range []string{"status:  paused", "paused:", "db migration", "schedule.pause", "schedule.trigger", "(as cli:", "WILL BE SKIPPED (paused"} {
		if !strings.Contains(out, want) {
			t.Fatalf("describe ops lacks %q:\n%s", want, out)
		}
	}
	var desc admin.Description
	if err := json.Unmarshal([]byte(must("schedule", "describe", "ops", "--json", "--next", "2")), &desc); err != nil {
		t.Fatal(err)
	}
	if desc.Owner.Instance == "" || desc.Status != admin.StatePaused || len(desc.Next) != 2 || desc.ActionsNote != "" || len(desc.Settings) == 0 {
		t.Fatalf("describe --json: %+v", desc)
	}
	if code, _, errOut := run("schedule", "describe", "ops", "--next", "0"); code != cli.ExitInvalid || !strings.Contains(errOut, "--next") {
		t.Fatalf("--next 0: exit %d: %s", code, errOut)
	}
	if code, _, errOut := run("schedule", "describe", "nope"); code != cli.ExitNotFound || !strings.Contains(errOut, "nope") {
		t.Fatalf("describe of an unknown schedule: exit %d: %s", code, errOut)
	}
}
