package kvstore

import (
	"errors"
	"fmt"

	"github.com/jetsched/jetsched/internal/fieldcheck"
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
	ErrInvalid = fieldcheck.ErrInvalid
	// ErrStatic is returned when a write or a removal names a static
	// schedule (Spec.Static) that the caller does not own: it is declared
	// in a file of `scheduler run --schedules` or by client.Static, and
	// changes there.
	ErrStatic = errors.New("kvstore: static schedule")
)

// FieldError reports a record field that fails validation: Field uses the
// JSON name of the field ("cron", "tz", "workflow", "id", "input", ...),
// Value the value (cut when long), Reason why, Err the underlying error
// (a *cronx.ParseError, say). Its Unwrap lets errors.Is match ErrInvalid
// and errors.As reach Err. Every validation error of this package is one.
type FieldError = fieldcheck.FieldError
