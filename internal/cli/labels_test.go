package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jetsched/jetsched/internal/admin"
)

// TestLabels: --label on schedule add and wakeup add, -l/--selector on
// schedule ls, status and wakeup ls, the LABELS column of ls --wide, and
// bad labels and selectors refused with exit 2 naming the flag.
func TestLabels(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must("schedule", "add", "--id", "inv", "--workflow", "billing", "--every", "1h", "--label", "team=billing", "--label", "tier=gold")
	e.must("schedule", "add", "--id", "rep", "--workflow", "billing", "--every", "1h", "--label", "team=billing", "--label", "tier=silver")
	e.must("schedule", "add", "--id", "idx", "--workflow", "search", "--every", "1h", "--label", "team=search")
	e.must("schedule", "add", "--id", "bare", "--workflow", "search", "--every", "1h")
	e.must("wakeup", "add", "--run", "o1", "--step", "s", "--workflow", "approvals", "--when", "1h", "--label", "team=billing")
	e.must("wakeup", "add", "--run", "o2", "--step", "s", "--workflow", "approvals", "--when", "1h")

	ids := func(out string) []string {
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			got = append(got, strings.Fields(line)[0])
		}
		return got
	}
	for sel, want := range map[string]string{
		"team=billing":            "inv rep",
		"team=billing,tier!=gold": "rep",
		"team in (search)":        "idx",
		"!team":                   "bare",
	} {
		out, _ := e.must("schedule", "ls", "-l", sel)
		if got := strings.Join(ids(out), " "); got != want {
			t.Errorf("schedule ls -l %q: %s, want %s", sel, got, want)
		}
	}
	out, _ := e.must("schedule", "ls", "--selector", "team=billing", "--wide")
	if lines := strings.Split(out, "\n"); !strings.HasSuffix(strings.TrimSpace(lines[0]), "LABELS") ||
		!strings.HasSuffix(strings.TrimSpace(lines[1]), "team=billing,tier=gold") {
		t.Errorf("ls --wide:\n%s", out)
	}
	if out, _ := e.must("schedule", "ls"); strings.Contains(out, "LABELS") || strings.Contains(out, "tier=gold") {
		t.Errorf("ls without --wide shows labels:\n%s", out)
	}
	out, _ = e.must("schedule", "ls", "-l", "tier=gold", "--json")
	var pg admin.Page[admin.ScheduleInfo]
	if err := json.Unmarshal([]byte(out), &pg); err != nil || pg.Total != 1 || pg.Items[0].Spec.Labels["tier"] != "gold" {
		t.Errorf("ls --json: %v %s", err, out)
	}
	out, _ = e.must("schedule", "get", "inv")
	if !strings.Contains(out, "team=billing,tier=gold") {
		t.Errorf("schedule get shows no labels:\n%s", out)
	}
	out, _ = e.must("status", "-l", "team=search")
	if !strings.Contains(out, "\nidx ") || strings.Contains(out, "\ninv ") || strings.Contains(out, "\nbare ") {
		t.Errorf("status -l team=search:\n%s", out)
	}
	out, _ = e.must("wakeup", "ls", "-l", "team=billing")
	if got := ids(out); len(got) != 1 || got[0] != "o1" {
		t.Errorf("wakeup ls -l team=billing:\n%s", out)
	}
	// Relabelling updates in place: the same id, a new revision, the
	// other fields kept.
	out, _ = e.must("schedule", "update", "bare", "--label", "team=search")
	if !strings.Contains(out, "bare saved") || !strings.Contains(out, `labels: (none) -> {"team":"search"}`) {
		t.Errorf("relabelling: %s", out)
	}

	e.refused(ExitInvalid, "--label: invalid labels.team", "schedule", "add", "--workflow", "w", "--every", "1h", "--label", "team=a b")
	e.refused(ExitInvalid, "--label: invalid labels \"team\": want KEY=VALUE", "schedule", "add", "--workflow", "w", "--every", "1h", "--label", "team")
	e.refused(ExitInvalid, "--label: invalid labels.team", "wakeup", "add", "--run", "o3", "--step", "s", "--workflow", "w", "--when", "1h", "--label", "team=-x")
	e.refused(ExitInvalid, "--selector: invalid selector", "schedule", "ls", "-l", "team billing")
	e.refused(ExitInvalid, "--selector: invalid selector", "status", "--selector", "team in billing")
	e.refused(ExitInvalid, "--selector: invalid selector", "wakeup", "ls", "-l", "=x")
}
