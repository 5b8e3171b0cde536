package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/calendars"
)

// completions runs cobra's __complete entry, as the shells' scripts do,
// and returns the candidates (the lines before ":<directive>").
func (e *env) completions(args ...string) []string {
	e.t.Helper()
	// The word being completed comes last: the server's URL goes first.
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), append([]string{"__complete", "--nats-url", e.url}, args...), &stdout, &stderr)
	out, errOut := stdout.String(), stderr.String()
	if code != ExitOK {
		e.t.Fatalf("__complete %q: exit %d: %s", args, code, errOut)
	}
	return candidates(out)
}

func candidates(out string) []string {
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, ":") {
			break
		}
		name, _, _ := strings.Cut(line, "\t") // a description may follow
		got = append(got, name)
	}
	return got
}

// TestCompletion: the completion functions called through cobra's
// __complete entry return schedule ids and calendar names (from the admin
// API), workflows, IANA zones and the enum values; a scheduler that does
// not answer completes nothing, quickly.
func TestCompletion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must("calendar", "put", "us", writeFile(t, "us.json", usCalendar))
	e.must("schedule", "add", "--id", "nightly-report", "--workflow", "report", "--cron", "0 2 * * *")
	e.must("schedule", "add", "--id", "nightly-backup", "--workflow", "backup", "--cron", "0 3 * * *")
	e.must("schedule", "add", "--id", "heartbeat", "--workflow", "ping", "--every", "30s")

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"schedule", "get", "night"}, []string{"nightly-backup", "nightly-report"}},
		{[]string{"schedule", "pause", ""}, []string{"heartbeat", "nightly-backup", "nightly-report"}},
		{[]string{"schedule", "rm", "h"}, []string{"heartbeat"}},
		{[]string{"schedule", "get", "heartbeat", ""}, nil}, // one argument only
		{[]string{"calendar", "get", ""}, append([]string{"us"}, calendars.Names()...)},
		{[]string{"calendar", "rm", ""}, []string{"us"}}, // the shipped ones are read-only
		{[]string{"calendar", "check", "builtin:uk-"}, []string{"builtin:uk-england", "builtin:uk-scotland"}},
		{[]string{"schedule", "add", "--calendar", "u"}, []string{"us"}},
		{[]string{"schedule", "ls", "--workflow", ""}, []string{"backup", "ping", "report"}},
		{[]string{"schedule", "add", "--workflow", "re"}, []string{"report"}},
		{[]string{"schedule", "add", "--tz", "Europe/Par"}, []string{"Europe/Paris"}},
		{[]string{"wakeup", "add", "--zone", "america/new_y"}, []string{"America/New_York"}},
		{[]string{"preview", "--tz", "Australia/Lord"}, []string{"Australia/Lord_Howe"}},
		{[]string{"schedule", "add", "--misfire", ""}, []string{"skip", "fire_once", "fire_all"}},
		{[]string{"schedule", "add", "--overlap", ""}, []string{"allow", "skip", "buffer_one", "buffer_all", "cancel_other"}},
		{[]string{"schedule", "add", "--holiday-roll", ""}, []string{"skip", "next_business_day", "previous_business_day", "modified_following", "modified_preceding"}},
		{[]string{"schedule", "add", "--dialect", ""}, []string{"standard", "quartz"}},
		{[]string{"schedule", "add", "--dom-dow", ""}, []string{"cronie", "posix", "and"}},
		{[]string{"schedule", "add", "--dst-gap", ""}, []string{"natural", "skip", "shift"}},
		{[]string{"schedule", "add", "--dst-overlap", ""}, []string{"natural", "once", "twice"}},
		{[]string{"status", "--state", ""}, []string{"active", "paused", "ended", "invalid", "planned"}},
	} {
		got := e.completions(tc.args...)
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tc.want))
		if !slices.Equal(got, want) {
			t.Errorf("__complete %q = %q, want %q", tc.args, got, want)
		}
	}

	// No scheduler answers: nothing, not an error.
	code, out, errOut := runCLI("__complete", "--nats-url", "nats://127.0.0.1:1", "schedule", "get", "")
	if code != ExitOK || len(candidates(out)) != 0 {
		t.Errorf("unreachable: exit %d, %q %s", code, out, errOut)
	}
}

// TestZoneNames: the zone list has UTC first and the zones the docs use,
// and no file of the zoneinfo directory that is not a zone.
func TestZoneNames(t *testing.T) {
	t.Parallel()
	zones := zoneNames()
	if len(zones) < 300 || zones[0] != "UTC" {
		t.Fatalf("%d zones, first %q", len(zones), zones[0])
	}
	for _, z := range []string{"Europe/Paris", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata"} {
		if !slices.Contains(zones, z) {
			t.Errorf("%s missing", z)
		}
	}
	for _, z := range zones {
		if strings.HasPrefix(z, "posix/") || strings.HasPrefix(z, "right/") || strings.Contains(z, ".") {
			t.Errorf("not a zone: %q", z)
		}
	}
}

// TestManPages: scheduler man DIR writes a page per command, with the
// command's help text.
func TestManPages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man1")
	t.Setenv("SOURCE_DATE_EPOCH", "1796000000")
	code, _, errOut := runCLI("man", dir)
	if code != ExitOK {
		t.Fatalf("man: exit %d: %s", code, errOut)
	}
	for _, page := range []string{"scheduler.1", "scheduler-run.1", "scheduler-schedule-add.1", "scheduler-schedule-export.1",
		"scheduler-config-validate.1", "scheduler-wakeup-ls.1", "scheduler-completion-bash.1"} {
		data, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil {
			t.Errorf("%s: %v", page, err)
			continue
		}
		if !strings.Contains(string(data), `.TH "SCHEDULER" "1" "Nov 2026" "jetsched" "jetsched manual"`) {
			t.Errorf("%s: header %q", page, strings.SplitN(string(data), "\n", 3)[:2])
		}
	}
	add, _ := os.ReadFile(filepath.Join(dir, "scheduler-schedule-add.1"))
	if !strings.Contains(string(add), `\fB--label\fP`) || !strings.Contains(string(add), "content hash, <workflow>-<12 hex digits>") {
		t.Errorf("schedule add's page lacks its flags or text")
	}
	// One page per available command, as --help lists them.
	root := (&app{}).rootCommand()
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var count func(c *cobra.Command) int
	count = func(c *cobra.Command) int {
		n := 1
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() {
				n += count(sub)
			}
		}
		return n
	}
	if entries, _ := os.ReadDir(dir); len(entries) != count(root) {
		t.Errorf("%d pages for %d commands", len(entries), count(root))
	}
}
