package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const usCalendar = `{
  "zone": "America/New_York",
  "holidays": [
    {"name": "New Year's Day", "date": "01-01", "observed": "nearest"},
    {"name": "Independence Day", "date": "07-04", "observed": "nearest"},
    {"name": "Thanksgiving", "month": 11, "weekday": "thu", "nth": 4},
    {"name": "Christmas Day", "date": "12-25", "observed": "nearest"}
  ]
}`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCalendarLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	file := writeFile(t, "us.json", usCalendar)

	if code, out, errOut := e.run("calendar", "put", "us", file); code != ExitOK || !strings.Contains(out, "calendar us saved") {
		t.Fatalf("put: exit %d: %s %s", code, out, errOut)
	}
	bad := writeFile(t, "bad.json", `{"zone":"America/New_York","holidays":[{"name":"x","weekday":"mnday","month":1,"nth":1}]}`)
	if code, _, errOut := e.run("calendar", "put", "broken", bad); code != ExitInvalid || !strings.Contains(errOut, "holidays[0].weekday") {
		t.Fatalf("put of a bad calendar: exit %d: %s", code, errOut)
	}
	if code, out, _ := e.run("calendar", "get", "us"); code != ExitOK || !strings.Contains(out, "Thanksgiving") {
		t.Fatalf("get: exit %d: %s", code, out)
	}
	if code, out, _ := e.run("calendar", "ls"); code != ExitOK || !strings.Contains(out, "America/New_York") || strings.Contains(out, "broken") {
		t.Fatalf("ls: exit %d:\n%s", code, out)
	}

	// check prints the non-business days with their rule: a calendar of
	// holidays only has no weekend, one with a weekend has.
	code, out, _ := e.run("calendar", "check", "us", "--from", "2026-12-23", "--days", "5")
	want := "2026-12-25 Fri  holiday \"Christmas Day\" (fixed 12-25, observed nearest)\n"
	if code != ExitOK || out != want {
		t.Fatalf("check: exit %d:\n%s\nwant:\n%s", code, out, want)
	}
	weekend := writeFile(t, "us-weekend.json", strings.Replace(usCalendar, `"holidays"`, `"weekend": ["sat", "sun"], "holidays"`, 1))
	code, out, _ = e.run("calendar", "check", weekend, "--from", "2026-12-23", "--days", "5")
	want += "2026-12-26 Sat  no working hours on Saturday\n" +
		"2026-12-27 Sun  no working hours on Sunday\n"
	if code != ExitOK || out != want {
		t.Fatalf("check with a weekend: exit %d:\n%s\nwant:\n%s", code, out, want)
	}
	code, out, _ = e.run("calendar", "check", weekend, "--from", "2027-07-01", "--days", "7", "--json")
	var rows []map[string]string
	if code != ExitOK || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 3 || !strings.Contains(rows[2]["reason"], "observed for Sunday 2027-07-04") {
		t.Fatalf("check --json from a file: exit %d:\n%s", code, out)
	}

	// A schedule may only name a calendar that exists.
	code, _, errOut := e.run("schedule", "add", "--id", "payroll", "--workflow", "pay", "--cron", "0 9 15 * *",
		"--tz", "America/New_York", "--calendar", "nyse", "--holiday-roll", "previous_business_day")
	if code != ExitInvalid || !strings.Contains(errOut, "--calendar") || e.specCount() != 0 {
		t.Fatalf("add with an unknown calendar: exit %d: %s", code, errOut)
	}
	if code, _, errOut = e.run("schedule", "add", "--id", "payroll", "--workflow", "pay", "--cron", "0 9 15 * *",
		"--tz", "America/New_York", "--calendar", "us", "--holiday-roll", "previous_business_day"); code != ExitOK {
		t.Fatalf("add: exit %d: %s", code, errOut)
	}
	if code, _, errOut = e.run("schedule", "add", "--id", "second-bd", "--workflow", "report", "--business-day", "2",
		"--time", "10:00", "--calendar", "us"); code != ExitOK {
		t.Fatalf("add business day: exit %d: %s", code, errOut)
	}

	// In use: rm refuses, --force removes.
	if code, _, errOut = e.run("calendar", "rm", "us"); code != ExitFailure || !strings.Contains(errOut, "payroll") || !strings.Contains(errOut, "--force") {
		t.Fatalf("rm of a calendar in use: exit %d: %s", code, errOut)
	}
	if code, _, errOut = e.run("calendar", "rm", "us", "--force"); code != ExitOK {
		t.Fatalf("rm --force: exit %d: %s", code, errOut)
	}
	if code, _, errOut = e.run("calendar", "get", "us"); code != ExitNotFound || !strings.Contains(errOut, `not found: calendar "us"`) {
		t.Fatalf("get after rm: exit %d: %s", code, errOut)
	}
}

func TestPreviewWithCalendar(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	file := writeFile(t, "us.json", usCalendar)
	if code, _, errOut := e.run("calendar", "put", "us", file); code != ExitOK {
		t.Fatalf("put: %s", errOut)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"holiday skipped (named calendar)", []string{"--calendar", "us", "--tz", "America/New_York", "--from", "2026-12-23T12:00:00-05:00", "-n", "2", "--explain", "0 9 * * 1-5"},
			"2026-12-24T09:00:00-05:00\n" +
				"2026-12-28T09:00:00-05:00  skipped 2026-12-25 09:00: holiday \"Christmas Day\" (fixed 12-25, observed nearest)\n"},
		{"previous business day (file)", []string{"--calendar", file, "--tz", "America/New_York", "--holiday-roll", "previous_business_day", "--from", "2026-12-01T00:00:00-05:00", "-n", "1", "--explain", "0 9 25 12 *"},
			"2026-12-24T09:00:00-05:00  moved from 2026-12-25 09:00: rolled to the previous business day: holiday \"Christmas Day\" (fixed 12-25, observed nearest)\n"},
		{"business hours", []string{"--calendar", "us", "--tz", "America/New_York", "--business-hours-only", "--from", "2026-12-01T00:00:00-05:00", "-n", "2", "0 2 * * 6"},
			"2026-12-07T09:00:00-05:00\n2026-12-14T09:00:00-05:00\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append([]string{"preview", "--nats-url", e.url}, tc.args...)
			if code := Main(context.Background(), args, &out, &errOut); code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			if out.String() != tc.want {
				t.Fatalf("stdout:\n%s\nwant:\n%s", out.String(), tc.want)
			}
		})
	}
	// Issue 51: an occurrence moved past a later one. Thursday 17:30 moves
	// to Tuesday 09:00 (Good Friday and Easter Monday are holidays), and
	// Good Friday's, rolled to Tuesday 17:30, moves to Wednesday 09:00: it
	// is listed and explained, where it used to be left out.
	easter := writeFile(t, "easter.json", `{"zone": "America/New_York", "hours": {"mon-fri": ["09:00-17:30"]},
	  "holidays": [{"name": "Good Friday", "easter": -2}, {"name": "Easter Monday", "easter": 1}]}`)
	var eo, ee bytes.Buffer
	if code := Main(context.Background(), []string{"preview", "--calendar", easter, "--tz", "America/New_York", "--holiday-roll", "next_business_day",
		"--business-hours-only", "--from", "2026-04-01T00:00:00-04:00", "-n", "3", "--explain", "30 17 * * 4,5"}, &eo, &ee); code != ExitOK {
		t.Fatalf("preview: exit %d: %s", code, ee.String())
	}
	wantEaster := "2026-04-07T09:00:00-04:00  moved from 2026-04-02 17:30: outside working hours: moved to the next working start\n" +
		"2026-04-08T09:00:00-04:00  moved from 2026-04-03 17:30: rolled to the next business day: holiday \"Good Friday\" (Easter Sunday -2 days); outside working hours: moved to the next working start\n" +
		"2026-04-10T09:00:00-04:00  moved from 2026-04-09 17:30: outside working hours: moved to the next working start\n"
	if eo.String() != wantEaster {
		t.Fatalf("preview of an occurrence moved past another:\n%s\nwant:\n%s", eo.String(), wantEaster)
	}
	// Without --calendar, as schedule add: Monday to Friday, 09:00-18:00
	// in --tz.
	var out, errOut bytes.Buffer
	if code := Main(context.Background(), []string{"preview", "--business-hours-only", "--tz", "Europe/Paris", "--from", "2026-12-04T12:00:00+01:00", "-n", "2", "0 2 * * *"},
		&out, &errOut); code != ExitOK || out.String() != "2026-12-07T09:00:00+01:00\n2026-12-08T09:00:00+01:00\n" {
		t.Fatalf("--business-hours-only without --calendar: exit %d: %s%s", code, out.String(), errOut.String())
	}
}

// TestSampleCalendars: the calendars under examples/calendars, which the
// docs' examples name (us.json, fr-holidays.json), load with calendar put
// and say what the docs say of them.
func TestSampleCalendars(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct {
		name, file, from string
		want             []string
	}{
		{"us", "us.json", "2026-11-20", []string{"2026-11-26", "Thanksgiving", "2026-12-25", "Christmas Day", "Sat"}},
		{"fr", "fr-holidays.json", "2026-05-01", []string{"2026-05-01", "Fête du Travail", "2026-05-08", "Victoire 1945", "2026-05-14", "Ascension", "2026-05-25", "Lundi de Pentecôte"}},
	} {
		path := filepath.Join("..", "..", "examples", "calendars", c.file)
		e.must("calendar", "put", c.name, path)
		out, _ := e.must("calendar", "check", c.name, "--from", c.from, "--days", "40")
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("calendar check %s from %s: no %q in\n%s", c.file, c.from, w, out)
			}
		}
	}
	// A calendar of holidays only: a Saturday is a business day.
	out, _ := e.must("calendar", "check", "fr", "--from", "2026-05-01", "--days", "3")
	if strings.Contains(out, "Sat") {
		t.Errorf("fr-holidays.json has a weekend:\n%s", out)
	}
}
