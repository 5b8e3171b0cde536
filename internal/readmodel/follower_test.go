package readmodel_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// table is a listing's rows as a map, with the workflow a listing keeps.
type table struct {
	rows map[string]*tableRow
}

type tableRow struct {
	readmodel.Row
	workflow string
}

func (t *table) Row(id string) *readmodel.Row {
	if r := t.rows[id]; r != nil {
		return &r.Row
	}
	return nil
}

func (t *table) Put(id string, spec kvstore.Spec, r readmodel.Row) {
	t.rows[id] = &tableRow{Row: r, workflow: spec.Workflow}
}

func (t *table) Remove(id string) { delete(t.rows, id) }
func (t *table) Reset()           { t.rows = map[string]*tableRow{} }

// planner plans a schedule's next slot an hour after its spec was
// written, or at its one-shot time.
type planner struct{}

func (planner) Planned(_ string, spec kvstore.Spec, written, _ time.Time, _ compile.CalendarSource) (kvstore.State, error) {
	if spec.At != nil {
		return kvstore.State{Next: *spec.At}, nil
	}
	return kvstore.State{Next: written.Add(time.Hour)}, nil
}

func (planner) Replan(compile.Compiled, *kvstore.State, time.Time) {}

// TestFollowerAppliesRecordsInAnyOrder: the follower keeps one row a
// schedule from the specs, state records and ended lists of a real
// server, whatever order they come in: a state record before its spec, a
// spec removed with its state record left, an ended list for a one-shot
// (before or after its spec, the spec then moved), and records that do
// not decode.
func TestFollowerAppliesRecordsInAnyOrder(t *testing.T) {
	srv := natstest.Start(t)
	js, store := srv.Store(t)
	ctx := context.Background()
	layout := store.Layout()
	bucket := func(name string) jetstream.KeyValue {
		kv, err := js.KeyValue(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return kv
	}
	specs, states := bucket(layout.SpecsBucket), bucket(layout.StateBucket)
	put := func(kv jetstream.KeyValue, id, value string) {
		t.Helper()
		if _, err := kv.PutString(ctx, id, value); err != nil {
			t.Fatal(err)
		}
	}
	del := func(kv jetstream.KeyValue, id string) {
		t.Helper()
		if err := kv.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	next := at.Add(time.Minute)
	oneShot := func(at time.Time) string { return fmt.Sprintf(`{"workflow":"wf","at":%q}`, at.Format(time.RFC3339)) }
	record := fmt.Sprintf(`{"plan":"p","next":%q}`, next.Format(time.RFC3339))
	list := func(token string, ids ...string) string {
		t.Helper()
		l := jsstore.Ended{Shard: 0, Owner: "s1", At: time.Now().UTC()}
		for _, id := range ids {
			l.Slots = append(l.Slots, jsstore.EndedSlot{Schedule: id, Slot: at, Seq: 1, Window: "0/1"})
		}
		if _, err := store.PutEnded(ctx, l, token); err != nil {
			t.Fatal(err)
		}
		return jsstore.EndedKey(0, token)
	}

	// Before the load: a state record without a spec, and a spec whose
	// list comes later.
	put(states, "early", record)
	put(specs, "once", oneShot(at))

	var mu sync.Mutex
	tab := &table{rows: map[string]*tableRow{}}
	loaded := make(chan struct{})
	var changed []string
	f := &readmodel.Follower{Store: store, Table: tab, Lock: &mu, Planner: planner{},
		Loaded: func() { close(loaded) },
		Changed: func(kind readmodel.Record, ids ...string) {
			mu.Lock()
			defer mu.Unlock()
			for _, id := range ids {
				changed = append(changed, fmt.Sprintf("%d:%s", kind, id))
			}
		}}
	var r readmodel.Runner
	r.Run(ctx, 10*time.Millisecond, f.Follow, func(err error) { t.Errorf("follow: %v", err) })
	defer r.Stop()
	testwait.Done(t, 10*time.Second, "the follower's load", loaded)

	type want struct {
		state  string
		next   time.Time // zero: none
		listOf string
	}
	expect := func(what string, rows map[string]*want) {
		t.Helper()
		err := testwait.Until(10*time.Second, what, func() error {
			mu.Lock()
			defer mu.Unlock()
			for id, w := range rows {
				row := tab.Row(id)
				switch {
				case w == nil && row != nil:
					return fmt.Errorf("%s has a row: %+v", id, *row)
				case w == nil:
					continue
				case row == nil:
					return fmt.Errorf("%s has no row", id)
				}
				var wantNext int64
				if !w.next.IsZero() {
					wantNext = w.next.UnixNano()
				}
				if got := row.State(); got != w.state || row.NextAt() != wantNext || f.ListOf(id) != w.listOf {
					return fmt.Errorf("%s: %s next %d list %q, want %s next %d list %q", id, got, row.NextAt(), f.ListOf(id), w.state, wantNext, w.listOf)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	expect("the load", map[string]*want{"early": nil, "once": {state: admin.StatePlanned, next: at}})

	// A state record before its spec: kept aside, then the spec's row
	// takes it (and is not planned).
	put(states, "late", record)
	expect("a state record alone", map[string]*want{"late": nil})
	put(specs, "late", oneShot(at))
	put(specs, "early", oneShot(at))
	expect("the specs after their records", map[string]*want{
		"late": {state: admin.StateActive, next: next}, "early": {state: admin.StateActive, next: next}})

	// A spec removed with its state record left: no row; a record written
	// after is kept aside for a spec added again.
	del(specs, "late")
	expect("the spec removed", map[string]*want{"late": nil})
	put(states, "late", `{"plan":"p","ended":true}`)
	put(specs, "late", oneShot(at))
	expect("the spec added again", map[string]*want{"late": {state: admin.StateEnded}})

	// An ended list names a one-shot: ended, no next slot, the list to
	// read; one ahead of its spec is kept for it. Moved to another time,
	// the one-shot is planned anew (the list still the one to read).
	once := list("t1", "once", "ahead")
	expect("the listed one-shot", map[string]*want{"once": {state: admin.StateEnded, listOf: once}, "ahead": nil})
	put(specs, "ahead", oneShot(at))
	expect("the spec after its list", map[string]*want{"ahead": {state: admin.StateEnded, listOf: once}})
	moved := at.Add(24 * time.Hour)
	put(specs, "once", oneShot(moved))
	expect("the one-shot moved", map[string]*want{"once": {state: admin.StatePlanned, next: moved, listOf: once}})

	// Records that do not decode: a state record is a record all the
	// same, a spec is invalid (and not planned), a list stands for
	// nothing; none stops the follower.
	put(bucket(layout.LeasesBucket), jsstore.EndedKey(0, "forged"), `{"slots":`)
	put(states, "early", `{"next":`)
	put(specs, "bad", `{"workflow":`)
	expect("the undecodable records", map[string]*want{
		"early": {state: admin.StateActive}, "bad": {state: admin.StateInvalid},
		"ahead": {state: admin.StateEnded, listOf: once}})

	// The state record of a listed one-shot decides its state; deleted,
	// the list stands for it again.
	put(states, "ahead", record)
	expect("a record for the listed one-shot", map[string]*want{"ahead": {state: admin.StateActive, next: next, listOf: once}})
	del(states, "ahead")
	expect("its record deleted", map[string]*want{"ahead": {state: admin.StateEnded, listOf: once}})

	mu.Lock()
	heard := slices.Clone(changed)
	mu.Unlock()
	for _, w := range []string{"0:late", "1:late", "2:once", "0:ahead"} {
		if !slices.Contains(heard, w) {
			t.Errorf("changes %v, want %s among them", heard, w)
		}
	}
	if slices.Contains(heard, "2:ahead") {
		t.Errorf("changes %v: a list told of a schedule without a row", heard)
	}
}
