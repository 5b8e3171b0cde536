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
// previewCase is one run of scheduler preview and what it must print.
type previewCase struct {
	name   string
	args   []string
	code   int
	stdout string
	stderr string // substring
}

func TestPreviewContract(t *testing.T) {
	runPreviewCases(t, []previewCase{
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
		// The recurrence flags of schedule add (issue 13, item 5).
		{"every day from --from, on Paris time", []string{"--from", "2026-03-27T10:00:00+01:00", "-n", "3", "--every", "1 day", "--tz", "Europe/Paris"}, 0,
			"2026-03-28T10:00:00+01:00\n2026-03-29T10:00:00+02:00\n2026-03-30T10:00:00+02:00\n", ""},
		{"every 7d aligned to the epoch: Thursdays", []string{"--from", "2026-01-01T00:00:00Z", "-n", "2", "--every", "7d", "--anchor", "epoch", "--tz", "Europe/Paris"}, 0,
			"2026-01-08T00:00:00+01:00\n2026-01-15T00:00:00+01:00\n", ""},
		{"daily-at with explain", []string{"--from", "2026-03-07T12:00:00-05:00", "-n", "2", "--daily-at", "02:30", "--tz", "America/New_York", "--explain"}, 0,
			"2026-03-08T03:00:00-04:00  moved: 02:30 does not exist on 2026-03-08 (DST gap); fires when the gap ends\n2026-03-09T02:30:00-04:00\n", ""},
		{"business day without a calendar: Mon-Fri", []string{"--from", "2026-02-01T00:00:00Z", "-n", "2", "--business-day", "1", "--time", "09:00"}, 0,
			"2026-02-02T09:00:00Z\n2026-03-02T09:00:00Z\n", ""},
		{"at in the past prints nothing", []string{"--from", "2026-01-01T00:00:00Z", "--at", "2025-01-01T00:00:00Z"}, 0, "", ""},
		{"limit", []string{"--from", "2026-01-01T00:00:00Z", "--every", "1h", "--anchor", "epoch", "--start", "2026-01-01T00:30:00Z", "--limit", "2"}, 0,
			"2026-01-01T01:00:00Z\n2026-01-01T02:00:00Z\n", ""},
		{"expression and --cron", []string{"--cron", "* * * * *", "0 9 * * *"}, 2, "", "not both"},
		{"bad every", []string{"--every", "1 parsec"}, 2, "", `--every: invalid every "1 parsec"`},
		{"bad anchor", []string{"--every", "1h", "--anchor", "later"}, 2, "", "--anchor"},
		{"bad daily-at", []string{"--daily-at", "9h"}, 2, "", "--daily-at"},
		{"two recurrences", []string{"--every", "1h", "--daily-at", "09:00"}, 2, "", "exactly one of"},
		{"unknown flag", []string{"--frm", "x", "* * * * *"}, 2, "", "unknown flag"},
	})
}

// runPreviewCases runs each case and checks the preview contract: exactly
// the expected stdout; on failure, exit 2 and one line on stderr naming the
// problem; on success, nothing on stderr.
func runPreviewCases(t *testing.T, tests []previewCase) {
	t.Helper()
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

// TestPreviewPeerForms: every form migrating users bring (issue 15)
// previews, or is refused, through scheduler preview.
func TestPreviewPeerForms(t *testing.T) {
	from := []string{"--from", "2025-12-31T00:00:00Z", "-n"}
	args := func(n string, rest ...string) []string {
		return append(append(append([]string(nil), from...), n), rest...)
	}
	lines := func(ls ...string) string { return strings.Join(ls, "\n") + "\n" }
	runPreviewCases(t, []previewCase{
		// Names in full, any case.
		{"full day name", args("2", "0 0 * * friday"), 0, lines("2026-01-02T00:00:00Z", "2026-01-09T00:00:00Z"), ""},
		{"full month name", args("1", "0 0 1 January *"), 0, lines("2026-01-01T00:00:00Z"), ""},
		{"full names in a range", args("2", "0 0 * * Monday-FRIDAY"), 0, lines("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"), ""},
		// Wrap-around ranges.
		{"FRI-MON", args("4", "0 0 * * FRI-MON"), 0, lines("2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z", "2026-01-05T00:00:00Z"), ""},
		{"7-4", args("2", "0 0 * * 7-4"), 0, lines("2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z"), ""},
		{"NOV-FEB", []string{"--from", "2026-03-01T00:00:00Z", "-n", "3", "0 0 1 NOV-FEB *"}, 0, lines("2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z"), ""},
		{"22-2/2", []string{"--from", "2026-01-01T12:00:00Z", "-n", "3", "0 22-2/2 * * *"}, 0, lines("2026-01-01T22:00:00Z", "2026-01-02T00:00:00Z", "2026-01-02T02:00:00Z"), ""},
		// L, W and lists of them.
		{"29-L", []string{"--from", "2026-01-31T00:00:00Z", "-n", "3", "0 0 29-L * *"}, 0, lines("2026-03-29T00:00:00Z", "2026-03-30T00:00:00Z", "2026-03-31T00:00:00Z"), ""},
		{"1-L/8", []string{"--from", "2026-01-20T00:00:00Z", "-n", "3", "0 0 1-L/8 * *"}, 0, lines("2026-01-25T00:00:00Z", "2026-02-01T00:00:00Z", "2026-02-09T00:00:00Z"), ""},
		{"W15", args("3", "0 0 W15 * *"), 0, lines("2026-01-15T00:00:00Z", "2026-02-16T00:00:00Z", "2026-03-16T00:00:00Z"), ""},
		{"L-2W", args("3", "0 0 L-2W * *"), 0, lines("2026-01-29T00:00:00Z", "2026-02-26T00:00:00Z", "2026-03-30T00:00:00Z"), ""},
		{"2W,16", args("3", "0 0 2W,16 * *"), 0, lines("2026-01-02T00:00:00Z", "2026-01-16T00:00:00Z", "2026-02-02T00:00:00Z"), ""},
		{"L-1W,L-1", args("3", "0 0 L-1W,L-1 * *"), 0, lines("2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-30T00:00:00Z"), ""},
		// '*' in a list.
		{"2025,*", []string{"--from", "2030-06-01T00:00:00Z", "-n", "1", "0 0 0 1 1 * 2025,*"}, 0, lines("2031-01-01T00:00:00Z"), ""},
		// gronx aliases.
		{"@everyminute", args("2", "@everyminute"), 0, lines("2025-12-31T00:01:00Z", "2025-12-31T00:02:00Z"), ""},
		{"@always", args("1", "@always"), 0, lines("2025-12-31T00:01:00Z"), ""},
		{"@5minutes", args("2", "@5minutes"), 0, lines("2025-12-31T00:05:00Z", "2025-12-31T00:10:00Z"), ""},
		{"@10minutes", args("1", "@10minutes"), 0, lines("2025-12-31T00:10:00Z"), ""},
		{"@15minutes", args("1", "@15minutes"), 0, lines("2025-12-31T00:15:00Z"), ""},
		{"@30minutes", args("2", "@30minutes"), 0, lines("2025-12-31T00:30:00Z", "2025-12-31T01:00:00Z"), ""},
		// The day rule: one expression under each.
		{"dom-dow cronie", []string{"--dom-dow", "cronie", "--from", "2026-02-28T00:00:00Z", "-n", "3", "0 0 */10 * SUN"}, 0, lines("2026-03-01T00:00:00Z", "2026-05-31T00:00:00Z", "2026-06-21T00:00:00Z"), ""},
		{"dom-dow default", []string{"--from", "2026-02-28T00:00:00Z", "-n", "2", "0 0 */10 * SUN"}, 0, lines("2026-03-01T00:00:00Z", "2026-05-31T00:00:00Z"), ""},
		{"dom-dow posix", []string{"--dom-dow", "posix", "--from", "2026-02-28T00:00:00Z", "-n", "3", "0 0 */10 * SUN"}, 0, lines("2026-03-01T00:00:00Z", "2026-03-08T00:00:00Z", "2026-03-11T00:00:00Z"), ""},
		{"dom-dow and", []string{"--dom-dow", "and", "--from", "2026-01-01T00:00:00Z", "-n", "2", "0 0 13 * FRI"}, 0, lines("2026-02-13T00:00:00Z", "2026-03-13T00:00:00Z"), ""},
		{"bad dom-dow", []string{"--dom-dow", "or", "* * * * *"}, 2, "", "--dom-dow"},
		// DST overlap once, as cronie: Sao Paulo's DST ended at midnight.
		{"overlap once wildcard", []string{"--tz", "America/Sao_Paulo", "--dst-overlap", "once", "--from", "2019-02-16T22:50:00-02:00", "-n", "5", "*/30 * * * *"}, 0,
			lines("2019-02-16T23:00:00-02:00", "2019-02-16T23:30:00-02:00", "2019-02-16T23:00:00-03:00", "2019-02-16T23:30:00-03:00", "2019-02-17T00:00:00-03:00"), ""},
		{"overlap once fixed", []string{"--tz", "Europe/London", "--dst-overlap", "once", "--from", "2026-10-24T12:00:00+01:00", "-n", "2", "30 1 * * *"}, 0,
			lines("2026-10-25T01:30:00+01:00", "2026-10-26T01:30:00Z"), ""},
		// Refused: ambiguous, and a year range that cannot wrap.
		{"# in a list", []string{"0 0 * * 5,6#3"}, 2, "", "ambiguous"},
		{"lone L in a list", []string{"0 0 * * SAT,SUN,L"}, 2, "", "ambiguous"},
		{"quartz lone L in a list", []string{"--dialect", "quartz", "0 0 12 ? * SAT,SUN,L"}, 2, "", "ambiguous"},
		{"quartz # in a list", []string{"--dialect", "quartz", "0 0 12 ? * 6,7#3"}, 2, "", "ambiguous"},
		{"year range backwards", []string{"0 0 0 1 1 * 2031-2030"}, 2, "", "cannot wrap"},
	})
}
