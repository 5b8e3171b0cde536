package cronx

import "fmt"

// ParseError reports invalid recurrence input.
//
// Field names the part that is wrong: "second", "minute", "hour",
// "day-of-month", "month" and "day-of-week" for a cron field; "cron" for a
// cron expression as a whole (wrong field count, unknown alias, never fires,
// empty); "tz" for a time zone; "every" for an interval; "at" for a one-shot
// time.
//
// Pos is the 1-based index of the offending cron field within the expression
// as written (so the hour is field 2 of a 5-field expression and field 3 of a
// 6-field one), or 0 when the error is not about a single cron field.
// Value is the offending text and Reason a human-readable explanation; it is
// never empty for errors returned by this package.
type ParseError struct {
	Field  string
	Pos    int
	Value  string
	Reason string
}

// Error formats the error, for example
//
//	cronx: cron field 2 (hour) "25": value 25 out of range 0-23
//	cronx: tz "Mars/Olympus": unknown time zone
func (e *ParseError) Error() string {
	if e.Pos > 0 {
		return fmt.Sprintf("cronx: cron field %d (%s) %q: %s", e.Pos, e.Field, e.Value, e.Reason)
	}
	return fmt.Sprintf("cronx: %s %q: %s", e.Field, e.Value, e.Reason)
}
