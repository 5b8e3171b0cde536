package kvstore

import (
	"errors"
	"fmt"
)

var (
	// ErrNotFound is returned when a record does not exist (or was deleted).
	ErrNotFound = errors.New("kvstore: not found")
	// ErrConflict is returned when a compare-and-swap lost: the record
	// changed since it was read. Re-read and re-decide.
	ErrConflict = errors.New("kvstore: revision conflict")
	// ErrExists is returned when creating a record whose key is taken. It
	// wraps ErrConflict.
	ErrExists = fmt.Errorf("%w: already exists", ErrConflict)
	// ErrInvalid is wrapped by every validation error (see *FieldError).
	ErrInvalid = errors.New("kvstore: invalid")
)

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
	if e.Err != nil {
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

func fieldErr(field, value, reason string) *FieldError {
	return &FieldError{Field: field, Value: value, Reason: reason}
}
