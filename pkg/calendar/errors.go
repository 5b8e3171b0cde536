package calendar

import (
	"errors"
	"fmt"
)

// ErrNoWorkingTime is returned (wrapped) when a query finds no working time,
// or no business day, within 10 years.
var ErrNoWorkingTime = errors.New("calendar: no working time within 10 years")

// Error reports an invalid calendar or option.
//
// Field is the JSON path of the offending value, such as "zone",
// "hours.mon-fri[1]" or "holidays[2].weekday"; it is "" when the input is
// not well-formed JSON (Reason is then the decoder's message). Value is the
// offending text ("" when a value is missing) and Reason a human-readable
// explanation, never empty. Err is the underlying error, if any (for an
// unknown zone, the *cronx.ParseError; for malformed JSON, the decoder's
// error).
type Error struct {
	Field  string
	Value  string
	Reason string
	Err    error
}

// Error formats the error, for example
//
//	calendar: holidays[2].weekday "mnday": unknown day
//	calendar: zone: required
func (e *Error) Error() string {
	switch {
	case e.Field == "":
		return "calendar: " + e.Reason
	case e.Value == "":
		return fmt.Sprintf("calendar: %s: %s", e.Field, e.Reason)
	default:
		return fmt.Sprintf("calendar: %s %q: %s", e.Field, e.Value, e.Reason)
	}
}

// Unwrap returns the underlying error, or nil.
func (e *Error) Unwrap() error { return e.Err }

// fieldError builds an *Error.
func fieldError(field, value, reason string) *Error {
	return &Error{Field: field, Value: value, Reason: reason}
}

// ErrOutOfRange is returned (wrapped) when working-time arithmetic would
// end after year 9999 ([MaxYear]), the last a record can hold (a calendar
// open so little that the count is not reached by then), or, counting
// backwards, before year 1.
var ErrOutOfRange = errors.New("calendar: result outside years 1-9999")

// ErrOverBudget is returned (wrapped) when a computation needs more steps
// than its budget: an explanation walking more than [MaxExplainDays] days,
// or a count over a calendar so heavy with holiday rules that summing its
// years would take seconds (see [Calendar.AddWorkingContext]).
var ErrOverBudget = errors.New("calendar: over the computation budget")
