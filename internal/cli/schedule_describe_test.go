package cli

import (
	"strings"
	"testing"
)

// TestDescribeWithoutAuditTrail: without an audit trail, describe shows
// the pause and its note from the state record, and says where the
// operators' actions come from.
func TestDescribeWithoutAuditTrail(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if code, _, errOut := e.run("schedule", "add", "--id", "p", "--workflow", "wf", "--every", "1h"); code != ExitOK {
		t.Fatal(errOut)
	}
	if code, _, errOut := e.run("schedule", "pause", "p", "--note", "vendor outage"); code != ExitOK {
		t.Fatal(errOut)
	}
	code, out, errOut := e.run("schedule", "describe", "p", "--next", "2")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"status:  paused", "no audit trail", "schedule.pause  vendor outage  (state record)", "WILL BE SKIPPED (paused"} {
		if !strings.Contains(out, want) {
			t.Fatalf("describe lacks %q:\n%s", want, out)
		}
	}
	if code, _, errOut := e.run("schedule", "describe", "p", "--actions", "101"); code != ExitInvalid || !strings.Contains(errOut, "--actions 101") {
		t.Fatalf("--actions 101: exit %d: %s", code, errOut)
	}
}
