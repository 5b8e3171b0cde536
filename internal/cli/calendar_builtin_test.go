package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestBuiltinCalendars: the shipped calendars are read from the binary
// wherever a calendar name is accepted, listed with the stored ones, and
// their namespace cannot be written.
func TestBuiltinCalendars(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	code, out, errOut := e.run("calendar", "check", "builtin:us-federal", "--year", "2022", "--json")
	var rows []map[string]string
	if code != ExitOK || json.Unmarshal([]byte(out), &rows) != nil {
		t.Fatalf("check --year: exit %d: %s %s", code, out, errOut)
	}
	var holidays []string
	for _, r := range rows {
		if strings.HasPrefix(r["reason"], "holiday") {
			holidays = append(holidays, r["date"])
		}
	}
	if len(holidays) != 13 || holidays[0] != "2022-01-01" || holidays[12] != "2022-12-26" {
		t.Errorf("check builtin:us-federal --year 2022: holidays %v", holidays)
	}
	code, out, _ = e.run("calendar", "check", "builtin:uk-england", "--year", "2022")
	if want := "2022-12-27 Tue  holiday \"Christmas Day\" (fixed 12-25, substitute next_free_weekday), substitute for Sunday 2022-12-25\n"; code != ExitOK || !strings.Contains(out, want) {
		t.Errorf("check builtin:uk-england --year 2022: exit %d:\n%s\nwant a line %s", code, out, want)
	}
	if code, _, errOut := e.run("calendar", "check", "builtin:us-federl", "--year", "2022"); code != ExitInvalid || !strings.Contains(errOut, "did you mean builtin:us-federal?") {
		t.Errorf("check of a misspelt builtin: exit %d: %s", code, errOut)
	}
	if code, _, errOut := e.run("calendar", "check", "builtin:us-federal", "--year", "2022", "--days", "3"); code != ExitInvalid || !strings.Contains(errOut, "--year") {
		t.Errorf("check --year with --days: exit %d: %s", code, errOut)
	}
	if code, out, _ := e.run("calendar", "get", "builtin:fr"); code != ExitOK || !strings.Contains(out, "Europe/Paris") || strings.Contains(out, "about") {
		t.Errorf("get builtin:fr: exit %d: %s", code, out)
	}

	// The namespace is read-only: put and rm refuse it, saying why.
	file := writeFile(t, "us.json", usCalendar)
	for _, args := range [][]string{{"calendar", "put", "builtin:us-federal", file}, {"calendar", "rm", "builtin:us-federal"}} {
		if code, _, errOut := e.run(args...); code != ExitInvalid || !strings.Contains(errOut, "shipped calendars") {
			t.Errorf("%s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
	}

	// ls lists the stored calendars and the shipped ones in name order,
	// a page at a time.
	if code, _, errOut := e.run("calendar", "put", "acme", file); code != ExitOK {
		t.Fatalf("put: exit %d: %s", code, errOut)
	}
	code, out, errOut = e.run("calendar", "ls", "--all")
	if code != ExitOK || !strings.Contains(out, "acme") || !strings.Contains(out, "builtin:uk-england") && !strings.Contains(out, "builtin:us-federal") ||
		!strings.Contains(out, "shipped") || strings.Index(out, "acme") > strings.Index(out, "builtin:") {
		t.Fatalf("ls --all: exit %d:\n%s%s", code, out, errOut)
	}
	var seen []string
	cursor := ""
	for range 20 {
		args := []string{"calendar", "ls", "--limit", "7", "--json"}
		if cursor != "" {
			args = append(args, "--cursor", cursor)
		}
		code, out, errOut := e.run(args...)
		var page struct {
			Items []struct {
				Name    string `json:"name"`
				Builtin bool   `json:"builtin"`
			} `json:"items"`
			Next string `json:"next_cursor"`
		}
		if code != ExitOK || json.Unmarshal([]byte(out), &page) != nil {
			t.Fatalf("ls page: exit %d: %s %s", code, out, errOut)
		}
		for _, it := range page.Items {
			if it.Builtin != strings.HasPrefix(it.Name, "builtin:") {
				t.Errorf("ls: %s builtin %v", it.Name, it.Builtin)
			}
			seen = append(seen, it.Name)
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	if len(seen) < 2 || seen[0] != "acme" || !strings.HasPrefix(seen[1], "builtin:") {
		t.Errorf("ls pages: %v", seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] <= seen[i-1] {
			t.Errorf("ls pages out of order or repeated at %d: %v", i, seen)
		}
	}

	// A schedule names one like a stored calendar; an unknown one is
	// refused before anything is written.
	if code, _, errOut := e.run("schedule", "add", "--id", "payroll", "--workflow", "pay", "--cron", "0 9 15 * *",
		"--calendar", "builtin:us-federl", "--holiday-roll", "previous_business_day"); code != ExitInvalid || !strings.Contains(errOut, "did you mean builtin:us-federal?") || e.specCount() != 0 {
		t.Fatalf("add with an unknown builtin: exit %d: %s", code, errOut)
	}
	if code, _, errOut := e.run("schedule", "add", "--id", "payroll", "--workflow", "pay", "--cron", "0 9 * * *",
		"--calendar", "builtin:us-federal", "--holiday-roll", "next_business_day"); code != ExitOK {
		t.Fatalf("add on builtin:us-federal: exit %d: %s", code, errOut)
	}
	code, out, errOut = e.run("preview", "--calendar", "builtin:us-federal", "--holiday-roll", "skip", "--from", "2022-12-23T00:00:00Z", "-n", "2", "0 9 * * *")
	if code != ExitOK || !strings.Contains(out, "2022-12-27") || strings.Contains(out, "2022-12-26") {
		t.Errorf("preview on builtin:us-federal: exit %d:\n%s%s", code, out, errOut)
	}
	if code, out, errOut := e.run("wakeup", "add", "--run", "r", "--step", "s", "--workflow", "wf", "--when", "2 wdays", "--calendar", "builtin:us-federal"); code != ExitOK {
		t.Errorf("wakeup add on builtin:us-federal: exit %d: %s %s", code, out, errOut)
	}
	if code, _, errOut := e.run("wakeup", "add", "--run", "r", "--step", "t", "--workflow", "wf", "--when", "2 wdays", "--calendar", "builtin:nope"); code != ExitInvalid || !strings.Contains(errOut, "no such shipped calendar") {
		t.Errorf("wakeup add on an unknown builtin: exit %d: %s", code, errOut)
	}
}
