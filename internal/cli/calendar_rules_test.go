package cli

import (
	"strings"
	"testing"
)

// TestCalendarCheckNewRules: check shows a cascading substitute with the
// day it stands for, a weekday-relative holiday and a half day; a rule
// that gives both "observed" and "substitute" exits 2 naming the field.
func TestCalendarCheckNewRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	file := writeFile(t, "england.json", `{"zone": "Europe/London", "weekend": ["sat", "sun"], "holidays": [
		{"name": "Christmas Eve", "date": "12-24", "hours": ["09:00-12:30"]},
		{"name": "Christmas Day", "date": "12-25", "substitute": "next_free_weekday"},
		{"name": "Boxing Day", "date": "12-26", "substitute": "next_free_weekday"},
		{"name": "Last Friday", "weekday": "fri", "on_or_before": "12-31"}
	]}`)
	code, out, errOut := e.run("calendar", "check", file, "--from", "2022-12-23", "--days", "8")
	want := "2022-12-24 Sat  no working hours on Saturday\n" +
		"2022-12-25 Sun  holiday \"Christmas Day\" (fixed 12-25, substitute next_free_weekday)\n" +
		"2022-12-26 Mon  holiday \"Boxing Day\" (fixed 12-26, substitute next_free_weekday)\n" +
		"2022-12-27 Tue  holiday \"Christmas Day\" (fixed 12-25, substitute next_free_weekday), substitute for Sunday 2022-12-25\n" +
		"2022-12-30 Fri  holiday \"Last Friday\" (Friday on or before 12-31)\n"
	if code != ExitOK || out != want {
		t.Fatalf("check: exit %d %s:\n%s\nwant:\n%s", code, errOut, out, want)
	}
	code, out, errOut = e.run("calendar", "check", file, "--from", "2026-12-23", "--days", "2")
	if want := "2026-12-24 Thu  half day \"Christmas Eve\" (fixed 12-24, half day 09:00-12:30)\n"; code != ExitOK || out != want {
		t.Fatalf("check of a half day: exit %d %s:\n%s\nwant:\n%s", code, errOut, out, want)
	}
	bad := writeFile(t, "bad.json", `{"zone": "UTC", "holidays": [{"name": "X", "date": "12-25", "observed": "monday", "substitute": "next_free_weekday"}]}`)
	if code, _, errOut := e.run("calendar", "put", "bad", bad); code != ExitInvalid || !strings.Contains(errOut, `holidays[0].substitute "next_free_weekday": give "observed" or "substitute", not both`) {
		t.Fatalf("put of observed+substitute: exit %d: %s", code, errOut)
	}
}
