package control_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/control"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestControlWritesAndRefuses: each action is a write of the state record
// (created when the schedule has none yet); what makes no sense is
// refused, naming the request field, before anything is written.
func TestControlWritesAndRefuses(t *testing.T) {
	_, store := natstest.Start(t).Store(t)
	ctx := context.Background()
	if _, err := store.PutSpec(ctx, "op", kvstore.Spec{Workflow: "w", Every: "1m"}); err != nil {
		t.Fatal(err)
	}
	c := control.Control{Store: store}
	if _, err := c.Resume(ctx, "op"); !errors.Is(err, kvstore.ErrInvalid) {
		t.Fatalf("resume of a schedule not paused: %v, want ErrInvalid", err)
	}
	if _, err := c.Pause(ctx, "op", "maintenance", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if st, _, err := store.GetState(ctx, "op"); err != nil || st.Paused == nil || st.Paused.Note != "maintenance" {
		t.Fatalf("state after pause: %+v, %v", st, err)
	}
	if _, err := c.Resume(ctx, "op"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Skip(ctx, "op", 2); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, tc := range []struct {
		field string
		err   error
	}{
		{"until", func() error { _, err := c.Pause(ctx, "op", "", now.Add(-time.Minute)); return err }()},
		{"count", func() error { _, err := c.Skip(ctx, "op", control.MaxSkip+1); return err }()},
		{"to", func() error {
			_, err := c.Backfill(ctx, "op", now.Add(-time.Hour), now.Add(time.Hour), 10, "")
			return err
		}()},
		{"rate", func() error {
			_, err := c.Backfill(ctx, "op", now.Add(-time.Hour), now.Add(-time.Minute), 0, "")
			return err
		}()},
	} {
		var fe *kvstore.FieldError
		if !errors.As(tc.err, &fe) || fe.Field != tc.field {
			t.Errorf("refusal of field %s: %v", tc.field, tc.err)
		}
	}
	st, _, err := store.GetState(ctx, "op")
	if err != nil || st.Paused != nil || st.SkipNext != 2 || st.Backfill != nil {
		t.Fatalf("state after the refusals: %+v, %v; want resumed, 2 to skip, no backfill", st, err)
	}
}
