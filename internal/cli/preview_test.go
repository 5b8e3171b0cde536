package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestPreviewContract pins the output scripts depend on: one RFC 3339 time
// per line and nothing else on stdout; exit 2 and one stderr line for bad
// input; nothing and exit 0 when there is no further fire time.
func TestPreviewContract(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string // substring
	}{
		{"new york gap, natural", []string{"--tz", "America/New_York", "--from", "2026-03-07T12:00:00-05:00", "-n", "3", "30 2 * * *"}, 0,
			"2026-03-08T03:00:00-04:00\n2026-03-09T02:30:00-04:00\n2026-03-10T02:30:00-04:00\n", ""},
		{"shift with explain", []string{"--tz", "America/New_York", "--from", "2026-03-07T12:00:00-05:00", "-n", "2", "--dst-gap", "shift", "--explain", "30 2 * * *"}, 0,
			"2026-03-08T03:30:00-04:00  shifted: 02:30 does not exist on 2026-03-08 (DST gap); fires one gap later\n2026-03-09T02:30:00-04:00\n", ""},
		{"skip", []string{"--tz", "America/New_York", "--from", "2026-03-07T12:00:00-05:00", "-n", "1", "--dst-gap", "skip", "30 2 * * *"}, 0,
			"2026-03-09T02:30:00-04:00\n", ""},
		{"overlap twice", []string{"--tz", "America/New_York", "--from", "2026-10-31T12:00:00-04:00", "-n", "2", "--dst-overlap", "twice", "30 1 * * *"}, 0,
			"2026-11-01T01:30:00-04:00\n2026-11-01T01:30:00-05:00\n", ""},
		{"expression as several arguments after --", []string{"--from", "2026-01-01T00:00:00Z", "-n", "2", "--", "0", "9", "*", "*", "MON-FRI"}, 0,
			"2026-01-01T09:00:00Z\n2026-01-02T09:00:00Z\n", ""},
		{"default count is 5", []string{"--from", "2026-01-01T00:00:00Z", "@daily"}, 0,
			"2026-01-02T00:00:00Z\n2026-01-03T00:00:00Z\n2026-01-04T00:00:00Z\n2026-01-05T00:00:00Z\n2026-01-06T00:00:00Z\n", ""},
		{"strictly after from", []string{"--from", "2026-01-01T09:00:00Z", "-n", "1", "0 9 * * *"}, 0, "2026-01-02T09:00:00Z\n", ""},
		{"quartz", []string{"--dialect", "quartz", "--from", "2026-01-01T00:00:00Z", "-n", "2", "0 0 12 ? * 6#3"}, 0,
			"2026-01-16T12:00:00Z\n2026-02-20T12:00:00Z\n", ""},
		{"every", []string{"--from", "2026-01-01T00:00:00Z", "-n", "2", "@every 90m"}, 0, "2026-01-01T01:30:00Z\n2026-01-01T03:00:00Z\n", ""},
		{"cron_tz prefix sets the output zone", []string{"--from", "2026-01-01T00:00:00Z", "-n", "1", "CRON_TZ=Asia/Tokyo 0 9 * * *"}, 0, "2026-01-02T09:00:00+09:00\n", ""},
		{"no further fire time", []string{"--from", "2026-01-01T00:00:00Z", "0 0 0 1 1 * 2020"}, 0, "", ""},
		{"count zero", []string{"-n", "0", "* * * * *"}, 0, "", ""},
		{"malformed", []string{"* * *"}, 2, "", "got 3 fields"},
		{"never fires", []string{"0 0 30 2 *"}, 2, "", "never fires"},
		{"bad zone", []string{"--tz", "Mars/Base", "* * * * *"}, 2, "", "--tz"},
		{"bad from", []string{"--from", "yesterday", "* * * * *"}, 2, "", "--from"},
		{"bad gap policy", []string{"--dst-gap", "jump", "* * * * *"}, 2, "", "--dst-gap"},
		{"bad overlap policy", []string{"--dst-overlap", "thrice", "* * * * *"}, 2, "", "--dst-overlap"},
		{"bad dialect", []string{"--dialect", "unix", "* * * * *"}, 2, "", "--dialect"},
		{"negative count", []string{"-n", "-1", "* * * * *"}, 2, "", "-n"},
		{"missing expression", nil, 2, "", "missing EXPR"},
		{"unknown flag", []string{"--frm", "x", "* * * * *"}, 2, "", "unknown flag"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Main(context.Background(), append([]string{"preview"}, tc.args...), &out, &errOut)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, errOut.String())
			}
			if out.String() != tc.stdout {
				t.Fatalf("stdout:\n%s\nwant:\n%s", out.String(), tc.stdout)
			}
			if tc.code != 0 {
				if lines := strings.Count(errOut.String(), "\n"); lines != 1 {
					t.Fatalf("stderr has %d lines, want 1: %q", lines, errOut.String())
				}
				if !strings.Contains(errOut.String(), tc.stderr) {
					t.Fatalf("stderr %q does not mention %q", errOut.String(), tc.stderr)
				}
			} else if errOut.Len() != 0 {
				t.Fatalf("stderr %q, want nothing", errOut.String())
			}
		})
	}
}
