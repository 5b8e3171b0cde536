// Package systemd holds the scheduler's systemd unit; its tests check the
// unit with systemd-analyze.
package systemd

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const (
	unitFile = "jetsched.service"
	binary   = "/usr/local/bin/scheduler"
)

// analyze returns the systemd-analyze binary, skipping the test when the
// machine has none.
func analyze(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (apt-get install systemd): the unit is not verified")
	}
	return p
}

// placed writes the unit into a temporary directory with ExecStart
// pointing at an executable that exists here (verify checks it does),
// after edit, and returns its path.
func placed(t *testing.T, edit func(string) string) string {
	t.Helper()
	b, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	unit := string(b)
	if !strings.Contains(unit, "ExecStart="+binary+" run --config /etc/jetsched/jetsched.yaml\n") {
		t.Fatalf("%s: ExecStart is not %s run --config /etc/jetsched/jetsched.yaml", unitFile, binary)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	unit = edit(strings.ReplaceAll(unit, binary, exe))
	p := filepath.Join(t.TempDir(), unitFile)
	if err := os.WriteFile(p, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// verify runs systemd-analyze verify on the unit and returns what it
// printed about it.
func verify(t *testing.T, unit string) string {
	t.Helper()
	out, err := exec.Command(analyze(t), "verify", "--man=no", unit).CombinedOutput()
	var lines []string
	for l := range strings.SplitSeq(string(out), "\n") {
		if strings.Contains(l, unitFile) {
			lines = append(lines, l)
		}
	}
	if err != nil && len(lines) == 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	return strings.Join(lines, "\n")
}

// TestUnitVerifies: systemd-analyze verify prints no warning about the
// unit.
func TestUnitVerifies(t *testing.T) {
	t.Parallel()
	if got := verify(t, placed(t, func(s string) string { return s })); got != "" {
		t.Errorf("systemd-analyze verify warns about the unit:\n%s", got)
	}
}

// TestVerifyCatchesMistakes: a misspelt directive and a missing binary
// are reported, so that TestUnitVerifies can fail.
func TestVerifyCatchesMistakes(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		edit func(string) string
		want string
	}{
		"unknown directive": {func(s string) string { return strings.Replace(s, "NoNewPrivileges=", "NoNewPrivilege=", 1) }, "NoNewPrivilege"},
		"missing binary": {func(s string) string {
			return regexp.MustCompile(`(?m)^ExecStart=\S+`).ReplaceAllString(s, "ExecStart=/nonexistent/scheduler")
		}, "/nonexistent/scheduler"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := verify(t, placed(t, tc.edit)); !strings.Contains(got, tc.want) {
				t.Errorf("verify said %q; want a warning naming %s", got, tc.want)
			}
		})
	}
}

// TestUnitHardened: the unit's exposure, as systemd-analyze security
// scores it offline, stays at or below 2.0 ("OK"), and the directives
// the deployment relies on are there.
func TestUnitHardened(t *testing.T) {
	t.Parallel()
	unit := placed(t, func(s string) string { return s })
	b, _ := os.ReadFile(unit)
	for _, d := range []string{"Type=exec", "Restart=on-failure", "KillSignal=SIGTERM", "StateDirectory=jetsched", "CapabilityBoundingSet=\n",
		"ProtectSystem=strict", "SystemCallFilter=@system-service", "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX", "MemoryDenyWriteExecute=yes", "LimitNOFILE="} {
		if !strings.Contains(string(b), d) {
			t.Errorf("the unit lacks %s", strings.TrimSpace(d))
		}
	}
	out, err := exec.Command(analyze(t), "security", "--offline=yes", "--no-pager", unit).CombinedOutput()
	if err != nil && strings.Contains(string(out), "offline") {
		t.Skipf("systemd-analyze security --offline is not supported here (systemd < 250): %s", out)
	}
	m := regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("systemd-analyze security printed no exposure level (%v):\n%s", err, out)
	}
	if level, _ := strconv.ParseFloat(string(m[1]), 64); level > 2.0 {
		t.Errorf("exposure level %.1f, want at most 2.0:\n%s", level, out)
	}
}
