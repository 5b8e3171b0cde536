package adminapi

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
)

// The catalogue remembers which ended list last named each schedule, in
// whatever order its watches deliver the spec, the state record and the
// list, and forgets a list once it is deleted: a page names, for each of
// its schedules, the one list to read (or none).
func TestCatalogRemembersEachSchedulesList(t *testing.T) {
	srv := natstest.Start(t)
	js, store := srv.Store(t)
	ctx := context.Background()
	c := newCatalog(store, slog.New(slog.DiscardHandler))
	c.start(ctx)
	defer func() { c.Stop() }()
	testwait.Done(t, 10*time.Second, "the catalogue's load", c.ready)

	bucket := func(name string) jetstream.KeyValue {
		kv, err := js.KeyValue(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return kv
	}
	specs, states := bucket(store.Layout().SpecsBucket), bucket(store.Layout().StateBucket)
	put := func(kv jetstream.KeyValue, id, value string) {
		t.Helper()
		if _, err := kv.PutString(ctx, id, value); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	spec := func(id string, at time.Time, cron string) {
		t.Helper()
		put(specs, id, fmt.Sprintf(`{"workflow":"wf","at":%q,"cron":%q}`, at.Format(time.RFC3339), cron))
	}
	list := func(shard int, token, id string) (string, uint64) {
		t.Helper()
		l := jsstore.Ended{Shard: shard, Owner: "s1", At: time.Now().UTC(),
			Slots: []jsstore.EndedSlot{{Schedule: id, Slot: at, Seq: 1, Window: "0/1"}}}
		rev, err := store.PutEnded(ctx, l, token)
		if err != nil {
			t.Fatal(err)
		}
		return jsstore.EndedKey(shard, token), rev
	}
	pageLists := func(q query) map[string]string {
		q.limit = 10
		return c.find(false, q).lists
	}
	stateOf := func(id string) string {
		c.mu.RLock()
		defer c.mu.RUnlock()
		if r, ok := c.schedules.get(id); ok {
			return r.State()
		}
		return ""
	}
	until := func(what string, check func() error) {
		t.Helper()
		if err := testwait.Until(10*time.Second, what, check); err != nil {
			t.Fatal(err)
		}
	}
	listsAre := func(what string, q query, want map[string]string) {
		t.Helper()
		until(what, func() error {
			if got := pageLists(q); !maps.Equal(got, want) {
				return fmt.Errorf("page lists %v, want %v", got, want)
			}
			return nil
		})
	}

	// a: spec first, then its list. b: list first (kept aside), then a
	// state record that is deleted again, then its spec. c: no list.
	spec("a", at, "")
	l1, _ := list(1, "t1", "a")
	l2, rev2 := list(2, "t2", "b")
	put(states, "b", `{"plan":"p"}`)
	if err := states.Delete(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	spec("b", at, "")
	spec("c", at, "")
	spec("a", at, "not a cron") // an edit (invalid) keeps the list
	until("a invalid, b ended, c planned", func() error {
		if s := stateOf("a"); s != admin.StateInvalid || stateOf("b") != admin.StateEnded || stateOf("c") != admin.StatePlanned {
			return fmt.Errorf("a %q b %q c %q", s, stateOf("b"), stateOf("c"))
		}
		return nil
	})
	listsAre("the lists of a and b", query{}, map[string]string{"a": l1, "b": l2})
	if s := stateOf("b"); s != admin.StateEnded {
		t.Errorf("b, listed, its record deleted: %s, want ended", s)
	}
	if got := pageLists(query{state: admin.StateEnded}); len(got) != 1 || got["b"] != l2 {
		t.Errorf("ended page lists %v, want b's", got)
	}
	if c.listOf("a") != l1 || c.listOf("c") != "" || c.listOf("nope") != "" {
		t.Errorf("listOf: a %q c %q nope %q", c.listOf("a"), c.listOf("c"), c.listOf("nope"))
	}
	// b's spec moved to another time: planned anew, no longer ended (its
	// list is still the one to read); moved back, ended again.
	for _, tc := range []struct {
		at   time.Time
		want string
	}{{at.Add(time.Second), admin.StatePlanned}, {at, admin.StateEnded}} {
		spec("b", tc.at, "")
		until("b at "+tc.at.String(), func() error {
			if got := c.find(false, query{state: admin.StateEnded, limit: 10}).total; stateOf("b") != tc.want || got != btoi(tc.want == admin.StateEnded) {
				return fmt.Errorf("b: %s (%d ended), want %s", stateOf("b"), got, tc.want)
			}
			return nil
		})
	}
	l3, _ := list(1, "t3", "a") // a later list names a again
	if err := store.DeleteEnded(ctx, l2, rev2); err != nil {
		t.Fatal(err)
	}
	listsAre("after a later list and a delete", query{}, map[string]string{"a": l3})

	// A reload reads the lists there are: the deleted one is forgotten.
	c.Stop()
	c.start(ctx)
	c.mu.RLock()
	ready := c.ready
	c.mu.RUnlock()
	testwait.Done(t, 10*time.Second, "the catalogue's reload", ready)
	listsAre("after a reload", query{}, map[string]string{"a": l3})
	if c.listOf("b") != "" {
		t.Errorf("after a reload, b names list %q", c.listOf("b"))
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
