package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestExportImportRoundTrip: export writes what import reads back
// exactly. Schedules with every kind of field (labels, an input, a named
// and an inline calendar, anchors, bounds, policies) are exported, every
// schedule removed, the file imported and exported again: the two files
// are the same byte for byte. Static and invalid schedules are left out,
// each named on stderr, and -l selects.
func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must("calendar", "put", "us", writeFile(t, "us.json", usCalendar))
	inline := writeFile(t, "fr.json", `{"zone":"Europe/Paris","holidays":[{"name":"Noël","date":"12-25"}]}`)
	future := time.Now().Add(72 * time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	start := time.Now().Add(-time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	end := time.Now().Add(400 * 24 * time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	for _, args := range [][]string{
		{"--id", "cron-all", "--workflow", "report", "--cron", "30 2 * * 1-5", "--tz", "Europe/Paris", "--dialect", "standard", "--dom-dow", "and",
			"--dst-gap", "shift", "--dst-overlap", "once", "--input", `{"full":true,"n":[1,2.5,"x"]}`, "--description", "nightly report",
			"--label", "team=billing", "--label", "tier=gold", "--misfire", "fire_once", "--catchup-window", "2h", "--misfire-threshold", "30s",
			"--overlap", "skip", "--completion-timeout", "20m"},
		{"--id", "every-anchored", "--workflow", "ping", "--every", "90m", "--label", "team=ops"},
		{"--id", "every-fixed", "--workflow", "ping", "--every", "1 day", "--anchor", "2026-01-05T08:00:00+01:00", "--tz", "Europe/Paris"},
		{"--id", "every-epoch", "--workflow", "ping", "--every", "30m", "--anchor", "epoch+15m"},
		{"--id", "one-shot", "--workflow", "launch", "--at", future, "--input", `"go"`},
		{"--id", "bounded", "--workflow", "ping", "--every", "1h", "--start", start, "--end", end, "--limit", "100"},
		{"--id", "payroll", "--workflow", "pay", "--cron", "0 9 15 * *", "--tz", "America/New_York", "--calendar", "us", "--holiday-roll", "previous_business_day"},
		{"--id", "standup", "--workflow", "remind", "--daily-at", "09:30", "--tz", "Europe/Paris", "--calendar", inline, "--business-hours-only"},
		{"--id", "month-end", "--workflow", "close", "--business-day", "-1", "--time", "17:00", "--calendar", "us"},
		{"--workflow", "hashed", "--every", "2h", "--input", `{"a":1}`},
	} {
		e.must(append([]string{"schedule", "add"}, args...)...)
	}
	// A static schedule and one written straight into the bucket that
	// does not validate: both left out.
	ctx := context.Background()
	if _, err := e.store.ApplyStatic(ctx, jsstore.StaticSet{Source: "schedules.yaml",
		Schedules: []jsstore.StaticSchedule{{ID: "from-file", Spec: kvstore.Spec{Workflow: "w", Every: "1h"}}}}); err != nil {
		t.Fatal(err)
	}
	kv, err := e.store.JetStream().KeyValue(ctx, "sched_specs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "broken", []byte(`{"workflow":"w","cron":"not a cron"}`)); err != nil {
		t.Fatal(err)
	}

	first, stderr := e.must("schedule", "export")
	if n := strings.Count(first, "\n"); n != 10 {
		t.Fatalf("export wrote %d lines, want 10:\n%s", n, first)
	}
	if !strings.Contains(stderr, "schedule from-file left out: static") || !strings.Contains(stderr, "schedule broken left out") ||
		!strings.Contains(stderr, "10 schedule(s) exported") {
		t.Errorf("export's stderr: %s", stderr)
	}
	for _, want := range []string{`"labels":{"team":"billing","tier":"gold"}`, `"calendar_inline":{`, `"anchor":"`, `"id":"hashed-`} {
		if !strings.Contains(first, want) {
			t.Errorf("the export lacks %s:\n%s", want, first)
		}
	}
	if strings.Contains(first, `"trace"`) || strings.Contains(first, `"spec":{"id"`) {
		t.Errorf("the export carries ids or traces in its specs:\n%s", first)
	}
	file := filepath.Join(t.TempDir(), "schedules.jsonl")
	if err := os.WriteFile(file, []byte(first), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(first), "\n") {
		id := strings.TrimPrefix(line, `{"id":"`)
		e.must("schedule", "rm", id[:strings.IndexByte(id, '"')])
	}
	e.must("schedule", "import", file)
	second, _ := e.must("schedule", "export")
	if second != first {
		t.Fatalf("export, import, export differs:\nfirst:\n%s\nsecond:\n%s", first, second)
	}
	// The same file imported again changes nothing.
	if out, _ := e.must("schedule", "import", file); !strings.Contains(out, "0 written, 10 unchanged") {
		t.Errorf("re-import: %s", out)
	}

	billing, _ := e.must("schedule", "export", "-l", "team=billing")
	if strings.Count(billing, "\n") != 1 || !strings.HasPrefix(billing, `{"id":"cron-all",`) {
		t.Errorf("export -l team=billing:\n%s", billing)
	}
	e.refused(ExitInvalid, "--selector: invalid selector", "schedule", "export", "-l", "team billing")
}
