package cli

import (
	"strings"
	"testing"
)

// TestDidYouMeanCalendarsAndWorkflows: a calendar name that is not
// stored, given to --calendar or to a calendar command, is refused with
// the nearest stored name; a listing filtered by a workflow no schedule
// has says which one was probably meant (exit 0, on stderr). A name far
// from every other gets no suggestion.
func TestDidYouMeanCalendarsAndWorkflows(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must("calendar", "put", "us-banks", "../../examples/calendars/us.json")
	e.must("schedule", "add", "--id", "a", "--workflow", "invoices", "--every", "1h")
	for _, c := range []struct {
		code int
		args []string
	}{
		{ExitInvalid, []string{"schedule", "add", "--id", "b", "--workflow", "invoices", "--cron", "0 9 * * *", "--calendar", "us-bank"}},
		{ExitInvalid, []string{"wakeup", "add", "--run", "r", "--step", "s", "--workflow", "invoices", "--when", "2 whours", "--calendar", "US-banks"}},
		{ExitNotFound, []string{"calendar", "get", "us-bnks"}},
		{ExitNotFound, []string{"calendar", "rm", "us-bank"}},
	} {
		e.refused(c.code, `did you mean "us-banks"?`, c.args...)
	}
	if code, _, errOut := e.run("calendar", "get", "fr-holidays"); code != ExitNotFound || strings.Contains(errOut, "did you mean") {
		t.Errorf("calendar get fr-holidays: exit %d: %s; want not found without a suggestion", code, errOut)
	}

	for _, args := range [][]string{
		{"schedule", "ls", "--workflow", "invoice"},
		{"status", "--workflow", "invoces"},
		{"wakeup", "ls", "--workflow", "Invoices"},
		{"deadletter", "ls", "--workflow", "invoicse"},
	} {
		code, _, errOut := e.run(args...)
		if code != ExitOK || !strings.Contains(errOut, `did you mean "invoices"?`) {
			t.Errorf("%v: exit %d: %q; want exit 0 suggesting invoices", args, code, errOut)
		}
	}
	for _, args := range [][]string{
		{"schedule", "ls", "--workflow", "payroll"}, // far from invoices
		{"wakeup", "ls", "--workflow", "invoices"},  // a workflow of the schedules, without timers
		{"schedule", "ls", "--workflow", "invoice", "--json"},
	} {
		if code, _, errOut := e.run(args...); code != ExitOK || errOut != "" {
			t.Errorf("%v: exit %d: %q; want exit 0 and nothing on stderr", args, code, errOut)
		}
	}
}
