package cli

import (
	"context"
	"fmt"
	"regexp"
	"slices"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/suggest"
)

// missingCalendar finds the name in an admin API error about a calendar
// that does not exist: `not found: calendar "us-bank"`, or `invalid
// calendar "us-bank": no such calendar in sched_calendars`.
var missingCalendar = regexp.MustCompile(`calendar "([^"]+)"(: no such calendar|$)`)

// calendarHint is "; did you mean "us-banks"?" when e says a calendar does
// not exist and a stored one's name is close to it (asked of the API on
// nc), else "".
func (a *app) calendarHint(ctx context.Context, nc *nats.Conn, e admin.Error) string {
	if e.Code != admin.CodeNotFound && (e.Code != admin.CodeInvalid || e.Field != "calendar") {
		return ""
	}
	m := missingCalendar.FindStringSubmatch(e.Message)
	if m == nil {
		return ""
	}
	var pg admin.Page[admin.CalendarRow]
	if a.request(ctx, nc, "calendar.list", []byte(fmt.Sprintf(`{"limit":%d}`, admin.MaxLimit)), &pg) != nil {
		return ""
	}
	names := make([]string, len(pg.Items))
	for i, c := range pg.Items {
		names[i] = c.Name
	}
	return didYouMean(m[1], names)
}

// workflowHint says on stderr, after a listing filtered by workflow wf
// found nothing, which workflow of the schedules wf is probably a typo of
// ("no schedules of workflow "invoice"; did you mean "invoices"?"):
// nothing when wf is one of them or none is close.
func (a *app) workflowHint(ctx context.Context, what, wf string) {
	if wf == "" || a.jsonOut {
		return
	}
	known := a.workflows(ctx, "")
	if slices.Contains(known, wf) {
		return
	}
	if hint := didYouMean(wf, known); hint != "" {
		fmt.Fprintf(a.stderr, "scheduler: no %s of workflow %q%s\n", what, wf, hint)
	}
}

// didYouMean is "; did you mean "<name>"?" for the name of names nearest
// to s (within a third of its length in edits, at least two), or "".
func didYouMean(s string, names []string) string {
	if near := suggest.Nearest(s, names, max(2, len(s)/3)); near != "" && near != s {
		return fmt.Sprintf("; did you mean %q?", near)
	}
	return ""
}
