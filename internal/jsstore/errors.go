package jsstore

import (
	"fmt"

	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// userErrorf makes a *fieldcheck.UserError of kind with a formatted message.
func userErrorf(kind error, format string, args ...any) error {
	return &fieldcheck.UserError{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// fieldErr is the *kvstore.FieldError for field's value and why it is refused.
func fieldErr(field, value, reason string) *kvstore.FieldError {
	return &kvstore.FieldError{Field: field, Value: value, Reason: reason}
}
