package integration

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jetsched/jetsched/internal/daemon"
)

// TestBinaryLabelsExportCompletion runs the built scheduler binary, as an
// operator would: labels on add, a selector on ls, an export piped into
// the import of another system (a migration) that exports the same bytes,
// completion of schedule ids through the shell's __complete entry, man
// pages, and config validate.
func TestBinaryLabelsExportCompletion(t *testing.T) {
	t.Parallel()
	bin := schedulerBinary(t)
	from, to := startDaemon(t, daemon.Config{}), startDaemon(t, daemon.Config{})
	sched := func(d *daemon.Daemon, stdin []byte, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--nats-url", d.ClientURL()}, args...)...)
		cmd.Stdin = bytes.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("scheduler %s: %v: %s", strings.Join(args, " "), err, errOut.String())
		}
		return out.String()
	}
	sched(from, nil, "schedule", "add", "--id", "invoices", "--workflow", "billing", "--cron", "0 9 1 * *", "--tz", "Europe/Paris",
		"--label", "team=billing", "--input", `{"region":"eu"}`)
	sched(from, nil, "schedule", "add", "--id", "reindex", "--workflow", "search", "--every", "90m", "--label", "team=search")
	sched(from, nil, "schedule", "add", "--workflow", "cleanup", "--every", "1h")

	if out := sched(from, nil, "schedule", "ls", "-l", "team=billing", "--wide"); !strings.Contains(out, "invoices") ||
		strings.Contains(out, "reindex") || !strings.Contains(out, "team=billing") {
		t.Errorf("ls -l team=billing --wide:\n%s", out)
	}
	exported := sched(from, nil, "schedule", "export")
	if strings.Count(exported, "\n") != 3 {
		t.Fatalf("export:\n%s", exported)
	}
	sched(to, []byte(exported), "schedule", "import", "-")
	if again := sched(to, nil, "schedule", "export"); again != exported {
		t.Errorf("the migrated system exports\n%s\nnot\n%s", again, exported)
	}

	if out := sched(from, nil, "__complete", "schedule", "pause", "inv"); !strings.HasPrefix(out, "invoices\n") {
		t.Errorf("__complete schedule pause inv:\n%s", out)
	}
	man := filepath.Join(t.TempDir(), "man")
	sched(from, nil, "man", man)
	if _, err := os.Stat(filepath.Join(man, "scheduler-schedule-export.1")); err != nil {
		t.Error(err)
	}
	cfg := filepath.Join(t.TempDir(), "jetsched.yaml")
	if err := os.WriteFile(cfg, []byte("replicas: 9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "config", "validate", cfg).CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "--replicas 9: must be 1 to 5") {
		t.Errorf("config validate of a bad file: exit %d: %s", code, out)
	}
}

// exitCode is the exit status of a finished command's error (0 for nil).
func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
