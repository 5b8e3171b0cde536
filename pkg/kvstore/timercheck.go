package kvstore

import (
	"fmt"
	"time"

	"github.com/jetsched/jetsched/internal/fieldcheck"
)

// ValidateTimer checks a timer record stored under key: the checks the
// admin API and pkg/client's Wakeup make on what they write, made again
// by the scheduler on every record it reads, so that a record written
// straight into sched_wakeups is held to the same rules. It returns a
// *FieldError naming the first bad field: run and step (see
// fieldcheck.TimerID), key (it must be TimerKey(run, step), so a record
// cannot fire as another run), workflow (one subject token), due (set),
// expires_at (not before due), rearms, payload (fieldcheck.JSON), the text that
// becomes headers (condition, when, zone, calendar, when_expr: fieldcheck.Text),
// labels (fieldcheck.Labels) and condition_key (its form, and a condition to compare with). Which
// buckets a condition key may name is the scheduler's configuration
// (scheduler run --condition-buckets), which the scheduler checks.
func ValidateTimer(key string, t Timer) error {
	for _, id := range [...]struct{ field, v string }{{"run", t.Run}, {"step", t.Step}} {
		if err := fieldcheck.TimerID(id.field, id.v); err != nil {
			return &FieldError{Field: id.field, Err: err}
		}
	}
	if want := TimerKey(t.Run, t.Step); key != want {
		return fieldcheck.New("key", key, fmt.Sprintf("does not match the record's run and step, whose key is %q", want))
	}
	if err := ValidateWorkflow(t.Workflow); err != nil {
		return err
	}
	switch {
	case t.Due.IsZero():
		return fieldcheck.New("due", "", "missing")
	case !t.ExpiresAt.IsZero() && t.ExpiresAt.Before(t.Due):
		return fieldcheck.New("expires_at", t.ExpiresAt.Format(time.RFC3339Nano), "before the due time "+t.Due.Format(time.RFC3339Nano))
	case t.Rearms < 0:
		return fieldcheck.New("rearms", fmt.Sprint(t.Rearms), "must not be negative")
	}
	if err := fieldcheck.JSON("payload", t.Payload); err != nil {
		return err
	}
	for _, f := range [...]struct {
		name, value string
		max         int
	}{
		{"condition", t.Condition, MaxNoteBytes}, {"when", t.When, MaxFieldBytes}, {"zone", t.Zone, MaxFieldBytes},
		{"when_expr", t.WhenExpr, MaxNoteBytes},
	} {
		if err := fieldcheck.Text(f.name, f.value, f.max); err != nil {
			return err
		}
	}
	if err := fieldcheck.Labels(t.Labels); err != nil {
		return err
	}
	if t.Calendar != "" {
		if err := fieldcheck.CalendarRef("calendar", t.Calendar); err != nil {
			return err
		}
	}
	if t.ConditionKey != "" {
		if _, _, err := fieldcheck.ConditionKey(t.ConditionKey); err != nil {
			return &FieldError{Field: "condition_key", Value: t.ConditionKey, Err: err}
		}
		if t.Condition == "" {
			return fieldcheck.New("condition", "", "a condition key needs the value it must hold (condition)")
		}
	}
	return nil
}
