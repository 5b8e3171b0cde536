package usererr_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func TestMessage(t *testing.T) {
	t.Parallel()
	field := &kvstore.FieldError{Field: "cron", Value: "* *", Reason: "want 5 fields"}
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{usererr.NotFound("schedule", "x"), `not found: schedule "x"`},
		{fmt.Errorf("kvstore: save x: %w", field), `invalid cron "* *": want 5 fields`},
		{fmt.Errorf("admin: put: %w", &fieldcheck.UserError{Kind: kvstore.ErrConflict, Msg: "conflict: kvstore: moved", Err: field}), "conflict: moved"},
		{errors.Join(errors.New("other"), fmt.Errorf("wrapped: %w", field)), `invalid cron "* *": want 5 fields`},
		{fmt.Errorf("kvstore: read: %w", errors.New("fire: nats: timeout")), "read: nats: timeout"},
	} {
		if got := usererr.Message(c.err); got != c.want {
			t.Errorf("Message(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	if !errors.Is(usererr.NotFound("timer", "a.b"), kvstore.ErrNotFound) {
		t.Error("NotFound does not match kvstore.ErrNotFound")
	}
}
