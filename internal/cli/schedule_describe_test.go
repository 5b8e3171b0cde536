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
	e.must("schedule", "add", "--id", "p", "--workflow", "wf", "--every", "1h")
	e.must("schedule", "pause", "p", "--note", "vendor outage")
	out, _ := e.must("schedule", "describe", "p", "--next", "2")
	for _, want := range []string{"status:  paused", "no audit trail", "schedule.pause  vendor outage  (state record)", "WILL BE SKIPPED (paused"} {
		if !strings.Contains(out, want) {
			t.Fatalf("describe lacks %q:\n%s", want, out)
		}
	}
	e.refused(ExitInvalid, "--actions 101", "schedule", "describe", "p", "--actions", "101")
}
