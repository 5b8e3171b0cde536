package kvstore

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// ValidateTimer checks a timer record stored under key: the checks the
// admin API and pkg/client's Wakeup make on what they write, made again
// by the scheduler on every record it reads, so that a record written
// straight into sched_wakeups is held to the same rules. It returns a
// *FieldError naming the first bad field: run and step (see
// ValidateTimerID), key (it must be TimerKey(run, step), so a record
// cannot fire as another run), workflow (one subject token), due (set),
// expires_at (not before due), rearms, payload (CheckJSON), the text that
// becomes headers (condition, when, zone, calendar, when_expr: CheckText),
// and condition_key (its form, and a condition to compare with). Which
// buckets a condition key may name is the scheduler's configuration
// (scheduler run --condition-buckets), which the scheduler checks.
func ValidateTimer(key string, t Timer) error {
	for _, id := range [...]struct{ field, v string }{{"run", t.Run}, {"step", t.Step}} {
		if err := ValidateTimerID(id.field, id.v); err != nil {
			return &FieldError{Field: id.field, Err: err}
		}
	}
	if want := TimerKey(t.Run, t.Step); key != want {
		return fieldErr("key", key, fmt.Sprintf("does not match the record's run and step, whose key is %q", want))
	}
	if err := ValidateWorkflow(t.Workflow); err != nil {
		return err
	}
	switch {
	case t.Due.IsZero():
		return fieldErr("due", "", "missing")
	case !t.ExpiresAt.IsZero() && t.ExpiresAt.Before(t.Due):
		return fieldErr("expires_at", t.ExpiresAt.Format(time.RFC3339Nano), "before the due time "+t.Due.Format(time.RFC3339Nano))
	case t.Rearms < 0:
		return fieldErr("rearms", fmt.Sprint(t.Rearms), "must not be negative")
	}
	if err := CheckJSON("payload", t.Payload); err != nil {
		return err
	}
	for _, f := range [...]struct {
		name, value string
		max         int
	}{
		{"condition", t.Condition, MaxNoteBytes}, {"when", t.When, MaxFieldBytes}, {"zone", t.Zone, MaxFieldBytes},
		{"when_expr", t.WhenExpr, MaxNoteBytes},
	} {
		if err := CheckText(f.name, f.value, f.max); err != nil {
			return err
		}
	}
	if t.Calendar != "" {
		if err := ValidateCalendarName(t.Calendar); err != nil {
			return err
		}
	}
	if t.ConditionKey != "" {
		if _, _, err := ParseConditionKey(t.ConditionKey); err != nil {
			return &FieldError{Field: "condition_key", Value: t.ConditionKey, Err: err}
		}
		if t.Condition == "" {
			return fieldErr("condition", "", "a condition key needs the value it must hold (condition)")
		}
	}
	return nil
}

// ValidateConditionBuckets checks the configured condition buckets: KV
// bucket names, each given once, none of them the scheduler's own (a name
// starting "sched_", or the layout's prefix and '_', as sched_wakeups and
// sched_audit_head do). Errors name the flag, condition-buckets.
func ValidateConditionBuckets(names []string, l Layout) error {
	own := []string{"sched_", l.WithDefaults().Prefix + "_"}
	for i, b := range names {
		switch {
		case b == "" || !kvName(b, ""):
			return fieldErr("condition-buckets", b, "a KV bucket name has letters, digits, '-' and '_' only")
		case slices.Contains(names[:i], b):
			return fieldErr("condition-buckets", b, "given twice")
		case strings.HasPrefix(b, own[0]) || strings.HasPrefix(b, own[1]):
			return fieldErr("condition-buckets", b, "is the scheduler's own bucket (its records, ledger or audit trail), never a condition bucket")
		}
	}
	return nil
}
