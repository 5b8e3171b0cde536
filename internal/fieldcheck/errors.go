package fieldcheck

import (
	"errors"
	"fmt"

	"github.com/jetsched/jetsched/pkg/cronx"
)

// ErrInvalid is wrapped by every validation error (see *FieldError).
var ErrInvalid = errors.New("kvstore: invalid")

// FieldError reports a record field that fails validation. Field uses the
// JSON name of the field ("cron", "tz", "workflow", "id", "input", ...).
type FieldError struct {
	Field  string
	Value  string
	Reason string
	// Err is the underlying error, e.g. a *cronx.ParseError.
	Err error
}

func (e *FieldError) Error() string {
	msg := "invalid " + e.Field
	if e.Value != "" {
		msg += fmt.Sprintf(" %q", e.Value)
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	var pe *cronx.ParseError
	switch {
	case e.Err == nil:
	case e.Reason == "" && errors.As(e.Err, &pe) && pe.Pos == 0 && pe.Value == e.Value:
		msg += ": " + pe.Reason // the field and its value are said once
	default:
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap lets errors.Is match ErrInvalid and errors.As reach the cause.
func (e *FieldError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalid, e.Err}
	}
	return []error{ErrInvalid}
}

// New is a *FieldError naming field, its value and the reason.
func New(field, value, reason string) *FieldError {
	return &FieldError{Field: field, Value: value, Reason: reason}
}

// UserError is an error whose text is written for the people and programs
// that use jetsched: the record named as they named it, no package prefix
// (`not found: schedule "x"`). Kind is the sentinel errors.Is matches
// (kvstore.ErrNotFound, ErrConflict, ErrExists, ErrStatic, ErrInvalid,
// jsstore.ErrInUse). Internal wrapping may add context around
// it; usererr.Message finds it again. Err, when set, is the cause the
// message already tells (a *FieldError with the context of where it was
// found, say): errors.As reaches it.
type UserError struct {
	Kind error
	Msg  string
	Err  error
}

func (e *UserError) Error() string { return e.Msg }

// Unwrap lets errors.Is match Kind and errors.As reach Err.
func (e *UserError) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

// Userf makes a *UserError of kind with a formatted message.
func Userf(kind error, format string, args ...any) error {
	return &UserError{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}
