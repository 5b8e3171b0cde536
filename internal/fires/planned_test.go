package fires_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/control"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestPlannedInMemoryUntilTheFirstFire: a schedule whose first slot is far
// off gets no state record (the scheduler plans it in memory, and readers
// see that plan); a schedule that fires creates its record with the claim.
// A pause before the first fire creates the record with an empty plan; the
// scheduler plans it and keeps the pause.
func TestPlannedInMemoryUntilTheFirstFire(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	h.engine(fires.Config{})
	h.put("later", kvstore.Spec{Workflow: "wf", Cron: "0 0 1 1 *"})
	h.put("soon", kvstore.Spec{Workflow: "wf", Every: "1s"})
	h.waitFires("soon", 10*time.Second, atLeast(2))

	if st, _, err := h.store.GetState(ctx, "soon"); err != nil || st.Fires == 0 || st.Claim == nil {
		t.Fatalf("state of a firing schedule: %+v (%v)", st, err)
	}
	if _, _, err := h.store.GetState(ctx, "later"); !errors.Is(err, kvstore.ErrNotFound) {
		t.Fatalf("a schedule that has not fired has a state record (err %v); want none until its first claim", err)
	}
	e, err := h.store.GetSpec(ctx, "later")
	if err != nil {
		t.Fatal(err)
	}
	st, planned, err := (readmodel.Model{Store: h.store, Planner: fires.Planner{}}).StoredState(ctx, e, time.Now())
	want := time.Date(time.Now().UTC().Year()+1, 1, 1, 0, 0, 0, 0, time.UTC)
	if err != nil || !planned || !st.Next.Equal(want) {
		t.Fatalf("planned state %+v planned=%v (%v); want next %v", st, planned, err, want)
	}

	c := control.Control{Store: h.store}
	if _, err := c.Pause(ctx, "later", "freeze", time.Time{}); err != nil {
		t.Fatalf("pause before the first fire: %v", err)
	}
	testwait.Eventually(t, 10*time.Second, "the pause of later recorded, its first slot planned", func() bool {
		st, _, err := h.store.GetState(ctx, "later")
		return err == nil && st.Plan != "" && st.Paused != nil && st.Paused.Note == "freeze" && st.Next.Equal(want)
	})
}
