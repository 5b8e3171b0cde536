package console

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// A one-shot that fired in a window and has an ended list for its record
// (the default, --ended-lists) is ended in the console as in the admin
// API: listed under "ended", without a next fire, and never overdue,
// whether the list came before the console loaded or while it runs. A
// spec moved to another time is planned anew (the list no longer stands
// for it).
func TestListedOneShotsAreEnded(t *testing.T) {
	srv := natstest.Start(t)
	_, store := srv.Store(t)
	ctx := context.Background()
	shards, err := store.Shards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	for _, id := range []string{"early", "live", "other"} {
		if _, err := store.PutSpec(ctx, id, kvstore.Spec{Workflow: "wf", At: &at}); err != nil {
			t.Fatal(err)
		}
	}
	list := func(id, token string) {
		t.Helper()
		l := jsstore.Ended{Shard: kvstore.ShardOf(id, shards), Owner: "s1", At: time.Now().UTC(),
			Slots: []jsstore.EndedSlot{{Schedule: id, Slot: at, Seq: 1, Window: "0/1"}}}
		if _, err := store.PutEnded(ctx, l, token); err != nil {
			t.Fatal(err)
		}
	}
	list("early", "t1") // before the console loads
	ix := newIndex(store, shards, slog.New(slog.DiscardHandler), func(string) {})
	ix.start(ctx)
	defer ix.Stop()
	testwait.Done(t, 10*time.Second, "the console's index", ix.ready)
	list("live", "t2") // while it runs

	state := func(id string) (string, int64) {
		ix.mu.RLock()
		defer ix.mu.RUnlock()
		r := ix.rows[id]
		if r == nil {
			return "", 0
		}
		return r.State(), r.NextAt()
	}
	err = testwait.Until(10*time.Second, "both listed one-shots ended", func() error {
		for _, id := range []string{"early", "live"} {
			if s, next := state(id); s != admin.StateEnded || next != 0 {
				return fmt.Errorf("%s: %s, next %d", id, s, next)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if s, next := state("other"); s != admin.StatePlanned || next != at.UnixNano() {
		t.Errorf("other, not listed: %s next %d, want planned at its time", s, next)
	}
	res := ix.list(listQuery{State: admin.StateEnded, Limit: 10})
	if res.Total != 2 {
		t.Errorf("ended: %d rows %+v, want the two listed", res.Total, res.Rows)
	}
	rows, n := ix.overdue(at.Add(time.Hour), time.Minute, 10)
	if n != 1 || rows[0].ID != "other" {
		t.Errorf("overdue an hour after the slot: %+v, want other alone", rows)
	}

	moved := at.Add(24 * time.Hour)
	if _, err := store.PutSpec(ctx, "live", kvstore.Spec{Workflow: "wf", At: &moved}); err != nil {
		t.Fatal(err)
	}
	err = testwait.Until(10*time.Second, "the moved one-shot planned anew", func() error {
		if s, next := state("live"); s != admin.StatePlanned || next != moved.UnixNano() {
			return fmt.Errorf("live: %s, next %d", s, next)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
