package jsstore_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// An ended list is written once under its key, read back per shard with
// its revision, and deleted only at that revision. A forged or garbled
// value under an ended key, or one naming another shard, stands for
// nothing: it is skipped and reported.
func TestEndedLists(t *testing.T) {
	_, store := natstest.Start(t).Store(t)
	ctx := context.Background()
	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	l := jsstore.Ended{Shard: 3, Owner: "s1", At: at, Slots: []jsstore.EndedSlot{
		{Schedule: "a", Slot: at.Add(-time.Second), Seq: 7, Window: "3/1"},
		{Schedule: "b", Slot: at.Add(-time.Second), Seq: 8, Window: "3/1"},
	}}
	rev, err := store.PutEnded(ctx, l, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.PutEnded(ctx, l, "t1"); !errors.Is(err, kvstore.ErrConflict) {
		t.Errorf("second write under the same key: %v, want ErrConflict", err)
	}
	forged := map[string]string{
		"ended.3.bad":    `{"shard":3,"slots":[{"schedule":"no spaces allowed","slot":"2026-12-04T12:00:00Z"}]}`,
		"ended.3.noslot": `{"shard":3,"slots":[{"schedule":"c"}]}`,
		"ended.3.other":  `{"shard":4,"slots":[{"schedule":"c","slot":"2026-12-04T12:00:00Z"}]}`,
		"ended.3.junk":   `not json`,
	}
	for k, v := range forged {
		if _, err := store.Leases().Put(ctx, k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	var bad []string
	lists, err := store.EndedLists(ctx, 3, func(key string, err error) {
		if !errors.Is(err, kvstore.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", key, err)
		}
		bad = append(bad, key)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lists) != 1 || lists[0].Key != "ended.3.t1" || lists[0].Revision != rev || len(lists[0].List.Slots) != 2 || lists[0].List.Slots[1].Seq != 8 {
		t.Fatalf("lists of shard 3: %+v, want the one written", lists)
	}
	if len(bad) != len(forged) {
		t.Errorf("reported %v, want the %d forged keys", bad, len(forged))
	}
	if other, err := store.EndedLists(ctx, 4, nil); err != nil || len(other) != 0 {
		t.Errorf("lists of shard 4: %+v, %v; want none", other, err)
	}
	st := lists[0].List.Slots[0].State("at x", lists[0].List)
	if !st.Ended || st.Fires != 1 || !st.Next.IsZero() || st.Claim == nil || st.Claim.Seq != 7 || !st.Claim.Settled() {
		t.Errorf("state the slot stands for: %+v, want ended with its settled claim", st)
	}
	if err := store.DeleteEnded(ctx, "ended.3.t1", rev+100); !errors.Is(err, kvstore.ErrConflict) {
		t.Errorf("delete at a wrong revision: %v, want ErrConflict", err)
	}
	if err := store.DeleteEnded(ctx, "window.3", 1); !errors.Is(err, kvstore.ErrInvalid) {
		t.Errorf("delete of a key that is no list: %v, want ErrInvalid", err)
	}
	if err := store.DeleteEnded(ctx, "ended.3.t1", rev); err != nil {
		t.Fatal(err)
	}
	if lists, err := store.EndedLists(ctx, 3, nil); err != nil || len(lists) != 0 {
		t.Errorf("after the delete: %+v, %v; want none", lists, err)
	}
}

// A shard with more ended lists than one direct get answers (1,024) is
// read whole all the same (through a watch), deleted lists left out, and a
// garbled one reported once.
func TestEndedListsPastOneAnswer(t *testing.T) {
	_, store := natstest.Start(t).Store(t)
	ctx := context.Background()
	at := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	const n = 1030
	// First: in the first answer (cut short at 1,024), and reported once.
	if _, err := store.Leases().Put(ctx, "ended.5.zjunk", []byte("not json")); err != nil {
		t.Fatal(err)
	}
	var last uint64
	for i := range n + 1 {
		l := jsstore.Ended{Shard: 5, Owner: "s1", At: at, Slots: []jsstore.EndedSlot{{Schedule: "s" + strconv.Itoa(i), Slot: at, Seq: uint64(i + 1), Window: "5/1"}}}
		rev, err := store.PutEnded(ctx, l, "t"+strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		last = rev
	}
	if err := store.DeleteEnded(ctx, "ended.5.t"+strconv.Itoa(n), last); err != nil {
		t.Fatal(err)
	}
	var bad []string
	lists, err := store.EndedLists(ctx, 5, func(key string, _ error) { bad = append(bad, key) })
	if len(bad) != 1 || bad[0] != "ended.5.zjunk" {
		t.Errorf("reported %v, want the garbled list once", bad)
	}
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, l := range lists {
		seen[l.Key] = true
	}
	if len(lists) != n || len(seen) != n || seen["ended.5.t"+strconv.Itoa(n)] {
		t.Fatalf("%d lists (%d keys), want the %d not deleted", len(lists), len(seen), n)
	}
}

// An EndedReader finds a schedule's latest listed slot in its shard's
// lists, reads each shard once (a list written after its first look at
// the shard is not seen; a new reader sees it), and says when no list
// names a schedule.
func TestEndedReader(t *testing.T) {
	_, store := natstest.Start(t).Store(t)
	ctx := context.Background()
	shards, err := store.Shards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Three ids of one shard, and one of another.
	var same []string
	var other string
	for i := 0; len(same) < 3 || other == ""; i++ {
		id := "r" + strconv.Itoa(i)
		switch {
		case kvstore.ShardOf(id, shards) == kvstore.ShardOf("r0", shards) && len(same) < 3:
			same = append(same, id)
		case kvstore.ShardOf(id, shards) != kvstore.ShardOf("r0", shards) && other == "":
			other = id
		}
	}
	shard := kvstore.ShardOf(same[0], shards)
	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	put := func(shard int, token string, slots ...jsstore.EndedSlot) {
		t.Helper()
		if _, err := store.PutEnded(ctx, jsstore.Ended{Shard: shard, Owner: "s1", At: at, Slots: slots}, token); err != nil {
			t.Fatal(err)
		}
	}
	put(shard, "t1", jsstore.EndedSlot{Schedule: same[0], Slot: at.Add(-2 * time.Second), Seq: 1, Window: "w/1"})
	put(shard, "t2", jsstore.EndedSlot{Schedule: same[0], Slot: at.Add(-time.Second), Seq: 2, Window: "w/2"})
	put(kvstore.ShardOf(other, shards), "t3", jsstore.EndedSlot{Schedule: other, Slot: at.Add(-time.Second), Seq: 3, Window: "w/3"})

	r := store.NewEndedReader()
	s, l, ok, err := r.SlotOf(ctx, same[0])
	if err != nil || !ok || s.Seq != 2 || !s.Slot.Equal(at.Add(-time.Second)) || l.Owner != "s1" {
		t.Fatalf("SlotOf(%s) = %+v, %+v, %v, %v; want its latest slot, seq 2", same[0], s, l, ok, err)
	}
	if _, _, ok, err := r.SlotOf(ctx, same[1]); err != nil || ok {
		t.Fatalf("SlotOf(%s), in no list: ok %v, %v", same[1], ok, err)
	}
	if s, _, ok, err := r.SlotOf(ctx, other); err != nil || !ok || s.Seq != 3 {
		t.Fatalf("SlotOf(%s), another shard: %+v, %v, %v", other, s, ok, err)
	}
	put(shard, "t4", jsstore.EndedSlot{Schedule: same[2], Slot: at, Seq: 4, Window: "w/4"})
	if _, _, ok, err := r.SlotOf(ctx, same[2]); err != nil || ok {
		t.Errorf("SlotOf(%s) from a reader that had read its shard: ok %v, %v; want the shard as first read", same[2], ok, err)
	}
	if s, _, ok, err := store.NewEndedReader().SlotOf(ctx, same[2]); err != nil || !ok || s.Seq != 4 {
		t.Errorf("SlotOf(%s) from a new reader: %+v, %v, %v; want seq 4", same[2], s, ok, err)
	}
}

// A hint makes an EndedReader read the one list it names instead of the
// shard's every list; a wrong hint (no such list, a list that does not
// name the schedule, one of another shard, a forged value) costs that
// read and the shard is read as without it.
func TestEndedReaderHints(t *testing.T) {
	_, store := natstest.Start(t).Store(t)
	ctx := context.Background()
	shards, err := store.Shards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	id, shard := "h0", kvstore.ShardOf("h0", shards)
	otherShard := (shard + 1) % shards
	if _, err := store.PutEnded(ctx, jsstore.Ended{Shard: shard, Owner: "s1", At: at,
		Slots: []jsstore.EndedSlot{{Schedule: id, Slot: at.Add(-time.Second), Seq: 5, Window: "w/5"}}}, "good"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.PutEnded(ctx, jsstore.Ended{Shard: shard, Owner: "s1", At: at,
		Slots: []jsstore.EndedSlot{{Schedule: "someone-else", Slot: at, Seq: 6}}}, "notnamed"); err != nil {
		t.Fatal(err)
	}
	forged := map[string]string{
		jsstore.EndedKey(shard, "wrongshard"): `{"shard":` + strconv.Itoa(otherShard) + `,"slots":[{"schedule":"h0","slot":"2026-12-04T12:00:00Z","seq":9}]}`,
		jsstore.EndedKey(otherShard, "other"): `{"shard":` + strconv.Itoa(otherShard) + `,"slots":[{"schedule":"h0","slot":"2026-12-04T12:00:00Z","seq":9}]}`,
		jsstore.EndedKey(shard, "junk"):       `not json`,
	}
	for k, v := range forged {
		if _, err := store.Leases().Put(ctx, k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}

	r := store.NewEndedReader()
	r.Hint(id, jsstore.EndedKey(shard, "good"))
	if s, _, ok, err := r.SlotOf(ctx, id); err != nil || !ok || s.Seq != 5 {
		t.Fatalf("hinted SlotOf = %+v, %v, %v; want seq 5", s, ok, err)
	}
	if n := r.ShardsRead(); n != 0 {
		t.Errorf("a right hint read %d shards' lists, want none", n)
	}
	for _, key := range []string{jsstore.EndedKey(shard, "gone"), jsstore.EndedKey(shard, "notnamed"),
		jsstore.EndedKey(shard, "wrongshard"), jsstore.EndedKey(otherShard, "other"), jsstore.EndedKey(shard, "junk"), "window.3"} {
		r := store.NewEndedReader()
		r.Hint(id, key)
		if s, _, ok, err := r.SlotOf(ctx, id); err != nil || !ok || s.Seq != 5 {
			t.Errorf("hint %s: SlotOf = %+v, %v, %v; want seq 5 from the shard's lists", key, s, ok, err)
		}
		if n := r.ShardsRead(); n != 1 {
			t.Errorf("hint %s: %d shards read, want the schedule's", key, n)
		}
	}
}
