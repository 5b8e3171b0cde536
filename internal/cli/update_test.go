package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/compile"
)

// TestScheduleUpdateChangesOnlyTheGivenFields: update keeps the zone and
// the input an add would drop, prints the changes, and --dry-run,
// --if-revision and bad input write nothing.
func TestScheduleUpdateChangesOnlyTheGivenFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must("schedule", "add", "--id", "nightly", "--workflow", "report", "--cron", "0 2 * * *", "--tz", "Europe/Paris",
		"--input", `{"full":true}`, "--description", "the nightly report", "--dst-gap", "skip")
	stored := func() (rev uint64, spec map[string]any) {
		t.Helper()
		got, err := e.store.GetSpec(t.Context(), "nightly")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := got.Spec.Encode()
		_ = json.Unmarshal(raw, &spec)
		return got.Revision, spec
	}
	rev, _ := stored()

	out, _ := e.must("schedule", "update", "nightly", "--cron", "0 3 * * *", "--dry-run")
	if !strings.Contains(out, "would change (dry run: nothing written)") || !strings.Contains(out, `cron: "0 2 * * *" -> "0 3 * * *"`) {
		t.Fatalf("--dry-run output:\n%s", out)
	}
	if now, _ := stored(); now != rev {
		t.Fatalf("--dry-run wrote revision %d", now)
	}

	out, _ = e.must("schedule", "update", "nightly", "--cron", "0 3 * * *", "--description", "")
	if !strings.Contains(out, "saved (revision 2)") || !strings.Contains(out, `cron: "0 2 * * *" -> "0 3 * * *"`) ||
		!strings.Contains(out, `description: "the nightly report" -> (none)`) || strings.Contains(out, "tz:") {
		t.Fatalf("update output:\n%s", out)
	}
	rev, spec := stored()
	if spec["cron"] != "0 3 * * *" || spec["tz"] != "Europe/Paris" || spec["dst_gap"] != "skip" || spec["description"] != nil ||
		spec["input"].(map[string]any)["full"] != true {
		t.Fatalf("after update: %v", spec)
	}

	// A new recurrence drops the old one and its cron-only options.
	e.must("schedule", "update", "nightly", "--every", "2h")
	if _, spec = stored(); spec["cron"] != nil || spec["dst_gap"] != nil || spec["every"] != "2h" || spec["tz"] != "Europe/Paris" {
		t.Fatalf("cron -> every: %v", spec)
	}

	e.refused(ExitConflict, "not 1", "schedule", "update", "nightly", "--every", "3h", "--if-revision", "1")
	e.refused(ExitInvalid, "nothing to update", "schedule", "update", "nightly")
	e.refused(ExitInvalid, "--every", "schedule", "update", "nightly", "--every", "nonsense")
	e.refused(ExitNotFound, `not found: schedule "nope"`, "schedule", "update", "nope", "--every", "1h")
	if now, spec := stored(); now != rev+1 || spec["every"] != "2h" {
		t.Fatalf("refused updates wrote: revision %d (want %d), %v", now, rev+1, spec)
	}
}

// TestAddSaysTheCalendarZone: a cron with a calendar and no --tz is read
// in the calendar's zone, and add says so.
func TestAddSaysTheCalendarZone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	file := filepath.Join(t.TempDir(), "us.json")
	if err := os.WriteFile(file, []byte(`{"zone":"America/New_York","holidays":[{"name":"Independence Day","date":"07-04"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ := e.must("schedule", "add", "--id", "payroll", "--workflow", "pay", "--cron", "0 9 15 * *", "--calendar", file)
	if !strings.Contains(out, "zone America/New_York: the calendar's") || !strings.Contains(out, "(America/New_York)") {
		t.Fatalf("add output:\n%s", out)
	}
	got, err := e.store.GetSpec(t.Context(), "payroll")
	if err != nil || got.Spec.TZ != "America/New_York" {
		t.Fatalf("stored tz %q, %v", got.Spec.TZ, err)
	}
	// The same add again is unchanged, with or without the zone spelt out.
	for _, extra := range [][]string{nil, {"--tz", "America/New_York"}} {
		args := append([]string{"schedule", "add", "--id", "payroll", "--workflow", "pay", "--cron", "0 9 15 * *", "--calendar", file}, extra...)
		if out, _ := e.must(args...); !strings.Contains(out, "unchanged") {
			t.Fatalf("%v again:\n%s", extra, out)
		}
	}
}

// TestJitterFlags: --jitter is stored, shown by preview with each fire's
// offset (the one the scheduler uses), changed by update, and refused
// naming the flag when it is no duration.
func TestJitterFlags(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must("schedule", "add", "--id", "spread", "--workflow", "w", "--every", "1h", "--jitter", "5 minutes")
	got, err := e.store.GetSpec(t.Context(), "spread")
	if err != nil || got.Spec.Jitter != "5 minutes" {
		t.Fatalf("stored jitter %q, %v", got.Spec.Jitter, err)
	}
	from := "2026-12-07T00:00:00Z"
	out, _ := e.must("preview", "--every", "1h", "--jitter", "5m", "--key", "spread", "--from", from, "-n", "2")
	slot := time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)
	off := compile.JitterOffset("spread", slot, 5*time.Minute)
	want := fmt.Sprintf("2026-12-07T01:00:00Z  +%s jitter: fires %s", off, slot.Add(off).Format(time.RFC3339Nano))
	if !strings.Contains(out, want) {
		t.Fatalf("preview:\n%s\nwant a line %q", out, want)
	}
	if out, _ := e.must("schedule", "update", "spread", "--jitter", ""); !strings.Contains(out, `jitter: "5 minutes" -> (none)`) {
		t.Fatalf("update --jitter '':\n%s", out)
	}
	e.refused(ExitInvalid, "--jitter", "schedule", "add", "--id", "bad", "--workflow", "w", "--every", "1h", "--jitter", "soon")
}

// TestRelativeTimeFlags: --at, --start, --end and --anchor take now+DUR
// as every time flag does (the one grammar of docs/cli.md).
func TestRelativeTimeFlags(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	before := time.Now()
	e.must("schedule", "add", "--id", "soon", "--workflow", "w", "--at", "now+2h")
	e.must("schedule", "add", "--id", "bounded", "--workflow", "w", "--every", "1h", "--start", "now+1h", "--end", "now+30d", "--anchor", "now+5m")
	after := time.Now()
	within := func(t0 *time.Time, d time.Duration) bool {
		return t0 != nil && !t0.Before(before.Add(d).Add(-time.Second)) && !t0.After(after.Add(d).Add(time.Second))
	}
	soon, err := e.store.GetSpec(t.Context(), "soon")
	if err != nil || !within(soon.Spec.At, 2*time.Hour) {
		t.Fatalf("--at now+2h stored %v (%v)", soon.Spec.At, err)
	}
	b, err := e.store.GetSpec(t.Context(), "bounded")
	if err != nil || !within(b.Spec.Start, time.Hour) || !within(b.Spec.End, 30*24*time.Hour) || !within(b.Spec.Anchor, 5*time.Minute) {
		t.Fatalf("--start/--end/--anchor now+DUR stored %+v (%v)", b.Spec, err)
	}
	e.refused(ExitInvalid, "--end", "schedule", "add", "--id", "x", "--workflow", "w", "--every", "1h", "--end", "now+forever")
}
