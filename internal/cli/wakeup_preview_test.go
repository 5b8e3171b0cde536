package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jetsched/jetsched/internal/testcal"
)

// runPreview runs wakeup preview with a local calendar file under ctx.
func runPreview(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "minute.json")
	if err := os.WriteFile(file, []byte(testcal.MinuteAWeek), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code = Main(ctx, append([]string{"wakeup", "preview", "--calendar", file, "--from", "2026-01-05T00:00:00Z"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestWakeupPreviewLongCounts: a count the calendar cannot reach by the end
// of year 9999 is bad input (exit 2, naming --when and the year) rather
// than a walk through millions of days; a reachable one thousands of years
// away is computed; --explain, which lists every day, refuses past its
// budget; and a cancelled context (SIGINT, SIGTERM) stops the count.
func TestWakeupPreviewLongCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, when := range []string{"30000 whours", "876000 whours"} {
		code, out, errOut := runPreview(t, ctx, "--when", when)
		if code != ExitInvalid || out != "" || !strings.Contains(errOut, "--when") || !strings.Contains(errOut, "9999") {
			t.Errorf("--when %q: exit %d, stdout %q, stderr %q; want exit 2 naming --when and 9999", when, code, out, errOut)
		}
	}
	code, out, errOut := runPreview(t, ctx, "--when-expr", `addWorking(now, "876000h")`)
	if code != ExitInvalid || !strings.Contains(errOut, "--when-expr") || !strings.Contains(errOut, "9999") {
		t.Errorf("addWorking(now, 876000h): exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// 100 whours = 6,000 working Mondays, about 121 years with the holidays
	// (the Monday-by-Monday count of the admin test agrees).
	if code, out, errOut := runPreview(t, ctx, "--when", "100 whours"); code != ExitOK || out != "2146-11-21T09:01:00-05:00\n" {
		t.Errorf("100 whours: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, errOut := runPreview(t, ctx, "--when", "6000 whours", "--explain"); code != ExitInvalid || !strings.Contains(errOut, "budget") {
		t.Errorf("6000 whours --explain: exit %d, stderr %q; want exit 2 over budget", code, errOut)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, args := range [][]string{{"--when", "6000 whours"}, {"--when-expr", `addWorking(now, "6000h")`}, {"--when", "600 whours", "--explain"}} {
		if code, out, errOut := runPreview(t, cancelled, args...); code == ExitOK || code == ExitInvalid || !strings.Contains(errOut, "context canceled") {
			t.Errorf("%v with a cancelled context: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}
