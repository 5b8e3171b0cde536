package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCalendarCount: calendar count through the real entry, on a file
// (no server needed) and on a stored calendar; both units, both
// directions, JSON, and bad flags refused with exit 2 before anything
// is read.
func TestCalendarCount(t *testing.T) {
	t.Parallel()
	weekend := writeFile(t, "us-weekend.json", strings.Replace(usCalendar, `"holidays"`, `"weekend": ["sat", "sun"], "holidays"`, 1))
	from, to := "2026-12-01T00:00:00-05:00", "2027-01-01T00:00:00-05:00"
	for _, c := range []struct {
		args []string
		want string
	}{
		// December 2026: 23 weekdays less Christmas; 9 hours each.
		{[]string{"--from", from, "--to", to}, "22 working days in [2026-12-01T00:00:00-05:00, 2027-01-01T00:00:00-05:00)\n"},
		{[]string{"--from", to, "--to", from}, "-22 working days, counted back in [2026-12-01T00:00:00-05:00, 2027-01-01T00:00:00-05:00)\n"},
		{[]string{"--from", from, "--to", to, "--unit", "whours"}, "198 working hours (198h0m0s) in [2026-12-01T00:00:00-05:00, 2027-01-01T00:00:00-05:00)\n"},
		// Half-open, in the calendar's zone: Friday 16:30 to Monday 10:00
		// is Friday's 1.5 hours and 1 working day (Friday's date).
		{[]string{"--from", "2026-12-04T21:30:00Z", "--to", "2026-12-07T15:00:00Z", "--unit", "whours"},
			"2.5 working hours (2h30m0s) in [2026-12-04T16:30:00-05:00, 2026-12-07T10:00:00-05:00)\n"},
		{[]string{"--from", "2026-12-04T21:30:00Z", "--to", "2026-12-07T15:00:00Z"},
			"1 working day in [2026-12-04T16:30:00-05:00, 2026-12-07T10:00:00-05:00)\n"},
	} {
		code, out, errOut := runCLI(append([]string{"calendar", "count", weekend}, c.args...)...)
		if code != ExitOK || out != c.want {
			t.Errorf("count %v: exit %d %s\n%s\nwant\n%s", c.args, code, errOut, out, c.want)
		}
	}
	code, out, errOut := runCLI("calendar", "count", weekend, "--from", to, "--to", from, "--unit", "whours", "--json")
	var res struct {
		Zone         string  `json:"zone"`
		Unit         string  `json:"unit"`
		Count        float64 `json:"count"`
		WorkingDays  int     `json:"working_days"`
		WorkingTime  string  `json:"working_time"`
		WorkingHours float64 `json:"working_hours"`
	}
	if err := json.Unmarshal([]byte(out), &res); code != ExitOK || err != nil || res.Unit != "whours" || res.Count != -198 ||
		res.WorkingDays != -22 || res.WorkingTime != "-198h0m0s" || res.Zone != "America/New_York" {
		t.Errorf("--json: exit %d %s %v\n%s", code, errOut, err, out)
	}
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--from", "yesterday", "--to", to}, `--from "yesterday"`},
		{[]string{"--from", from, "--to", "now+3"}, `--to "now+3": a bare number needs a unit`},
		{[]string{"--from", from, "--to", to, "--unit", "hours"}, `--unit "hours": want wdays`},
		{[]string{"--to", to}, `--from: required`},
		{[]string{"--from", "0001-01-01T00:00:00Z", "--to", "9999-01-01T00:00:00Z", "--unit", "whours"}, "longer than 292 years"},
	} {
		code, _, errOut := runCLI(append([]string{"calendar", "count", weekend}, c.args...)...)
		if code != ExitInvalid || !strings.Contains(errOut, c.says) {
			t.Errorf("count %v: exit %d, %q; want exit %d saying %q", c.args, code, errOut, ExitInvalid, c.says)
		}
	}

	// A stored calendar, through the API's calendar.get.
	e := newEnv(t)
	if code, _, errOut := e.run("calendar", "put", "usw", weekend); code != ExitOK {
		t.Fatalf("put: exit %d %s", code, errOut)
	}
	code, out, errOut = e.run("calendar", "count", "usw", "--from", from, "--to", to, "--json")
	if err := json.Unmarshal([]byte(out), &res); code != ExitOK || err != nil || res.Count != 22 || !strings.Contains(out, `"name": "usw"`) {
		t.Errorf("stored: exit %d %s %v\n%s", code, errOut, err, out)
	}
	if code, _, errOut := e.run("calendar", "count", "nosuch", "--from", from, "--to", to); code != ExitInvalid || !strings.Contains(errOut, "nosuch") {
		t.Errorf("missing calendar: exit %d %s", code, errOut)
	}
}

// TestWakeupPreviewBothWays: through the real entry, a when_expr counts
// back from a date, a zero working form rolls only, and a negative form is
// refused with exit 2 pointing at when_expr.
func TestWakeupPreviewBothWays(t *testing.T) {
	t.Parallel()
	weekend := writeFile(t, "us-weekend.json", strings.Replace(usCalendar, `"holidays"`, `"weekend": ["sat", "sun"], "holidays"`, 1))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--from", "2026-12-01T00:00:00Z", "--zone", "America/New_York", "--when-expr", `addWorking(date("2026-12-21 11:00"), "-48h")`},
			"2026-12-11T17:00:00-05:00\n"},
		{[]string{"--from", "2026-12-01T00:00:00Z", "--zone", "America/New_York", "--when-expr", `addWorkingDays(date("2026-12-28 09:00"), -3)`},
			"2026-12-22T09:00:00-05:00\n"}, // Christmas (Friday) not counted
		{[]string{"--from", "2026-12-05T15:00:00Z", "--when", "0 wdays"}, "2026-12-07T10:00:00-05:00\n"}, // Saturday 10:00: Monday
		{[]string{"--from", "2026-12-05T15:00:00Z", "--when", "0 whours"}, "2026-12-07T09:00:00-05:00\n"},
	} {
		code, out, errOut := runCLI(append([]string{"wakeup", "preview", "--calendar", weekend}, c.args...)...)
		if code != ExitOK || out != c.want {
			t.Errorf("preview %v: exit %d %s\n%s\nwant %s", c.args, code, errOut, out, c.want)
		}
	}
	code, _, errOut := runCLI("wakeup", "preview", "--calendar", weekend, "--from", "2026-12-05T15:00:00Z", "--when", "-3 wdays")
	if code != ExitInvalid || !strings.Contains(errOut, "--when") || !strings.Contains(errOut, "when_expr such as addWorkingDays") {
		t.Errorf("--when -3 wdays: exit %d %s", code, errOut)
	}
}
