package fires_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/control"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// These tests cover ended lists (Config.EndedLists): a window's
// one-shots recorded as one list instead of a state record each, which
// stands for their ended records for as long as they are the same
// one-shots, whatever the fire stream still holds.

// waitListed waits until every id is in an ended list of shard 0 and
// returns the lists.
func (h *harness) waitListed(ids []string, timeout time.Duration) []jsstore.EndedEntry {
	h.t.Helper()
	var lists []jsstore.EndedEntry
	err := testwait.Until(timeout, "every one-shot in an ended list", func() error {
		var err error
		if lists, err = h.store.EndedLists(context.Background(), 0, nil); err != nil {
			return err
		}
		for _, id := range ids {
			if _, ok := listedSlot(lists, id); !ok {
				return fmt.Errorf("%s is in none of %d lists", id, len(lists))
			}
		}
		return nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return lists
}

// listedSlot finds id's slot in lists.
func listedSlot(lists []jsstore.EndedEntry, id string) (jsstore.EndedSlot, bool) {
	for _, e := range lists {
		for _, s := range e.List.Slots {
			if s.Schedule == id {
				return s, true
			}
		}
	}
	return jsstore.EndedSlot{}, false
}

// noRecords asserts that no id has a state record.
func (h *harness) noRecords(ids []string) {
	h.t.Helper()
	for _, id := range ids {
		switch st, _, err := h.store.GetState(context.Background(), id); {
		case err == nil:
			h.t.Errorf("%s: state record %+v, want none (its ended list stands for it)", id, st)
		case !errors.Is(err, kvstore.ErrNotFound):
			h.t.Fatal(err)
		}
	}
}

// purgeFires empties the fire stream, as its retention does to fires
// older than --fire-retention.
func (h *harness) purgeFires() {
	h.t.Helper()
	s, err := h.js.Stream(context.Background(), "SCHED_FIRES")
	if err != nil {
		h.t.Fatal(err)
	}
	if err := s.Purge(context.Background()); err != nil {
		h.t.Fatal(err)
	}
}

// freshFire writes a one-shot of shard 0 due in a second and waits for
// its fire: once it fired, the engine owns shard 0 and checked it, which
// read its ended lists before anything of the shard was dispatched.
func (h *harness) freshFire(prefix string) {
	h.t.Helper()
	id := h.oneShots(prefix, 1, time.Now().Add(time.Second).Truncate(time.Millisecond), nil)[0]
	h.waitFires(id, 20*time.Second, atLeast(1))
}

// A herd of one-shots with ended lists: each fired once, listed with its
// fire's sequence, and has no state record; schedule get shows it ended.
// Restarted after the fire stream lost every fire (its retention), a
// scheduler plans each listed one-shot as ended: none fires again, none
// is overdue, none gets a record.
func TestEndedListsStandForOneShotRecords(t *testing.T) {
	t.Parallel()
	h := setup(t)
	cfg, e, ids, lists := h.listedHerd("listed", 40)
	h.noRecords(ids)
	for _, id := range ids {
		s, _ := listedSlot(lists, id)
		if f := h.of(id); len(f) == 1 && (s.Seq != f[0].seq || !s.Slot.Equal(f[0].meta.ScheduledAt)) {
			t.Errorf("%s: listed %+v, want its fire's slot %s and sequence %d", id, s, f[0].meta.ScheduledAt, f[0].seq)
		}
	}
	if err := e.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.purgeFires()
	cfg.Instance = "second"
	e2 := h.engine(cfg)
	h.freshFire("fresh")
	waitNoneOverdue(t, e2)
	h.allFires()
	for _, id := range ids {
		if n := len(h.of(id)); n != 1 {
			t.Errorf("%s fired %d times, want once", id, n)
		}
	}
	h.noRecords(ids)
	// What schedule get says of one, the stream empty: ended, from its list.
	spec, err := h.store.GetSpec(context.Background(), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if v := (readmodel.Model{Store: h.store, Planner: fires.Planner{}}).Info(context.Background(), nil, spec, nil); v.State == nil || !v.State.Ended || v.LastStatus != string(kvstore.TickDispatched) {
		t.Errorf("%s: schedule get says state %+v, last status %q, want it ended and dispatched", ids[0], v.State, v.LastStatus)
	}
}

// listedHerd starts an engine with ended lists, fires n one-shots of
// shard 0 in windows, and waits until each fired once and is listed.
func (h *harness) listedHerd(prefix string, n int) (fires.Config, *fires.Engine, []string, []jsstore.EndedEntry) {
	h.t.Helper()
	cfg := fires.Config{WindowBusy: -1, EndedLists: true, LeaseTTL: 2 * time.Second}
	e := h.engine(cfg)
	ids := h.oneShots(prefix, n, time.Now().Add(time.Second).Truncate(time.Millisecond), nil)
	lists := h.waitListed(ids, 20*time.Second)
	h.onceEach(ids)
	return cfg, e, ids, lists
}

// waitNoneOverdue waits until e reports no schedule overdue.
func waitNoneOverdue(t *testing.T, e *fires.Engine) {
	t.Helper()
	err := testwait.Until(10*time.Second, "no overdue schedule", func() error {
		health, err := e.Health(context.Background(), 0)
		if err == nil && len(health.Overdue) > 0 {
			err = fmt.Errorf("%d overdue, e.g. %+v", len(health.Overdue), health.Overdue[0])
		}
		return err
	})
	if err != nil {
		t.Error(err)
	}
}

// With ended lists off (or beside a member that does not read them), a
// scheduler turns the lists of its shards into state records, each the
// ended record its list stood for, and deletes the lists.
func TestEndedListsTurnedIntoRecords(t *testing.T) {
	t.Parallel()
	h := setup(t)
	cfg, e, ids, lists := h.listedHerd("convert", 30)
	if err := e.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.purgeFires()
	cfg.Instance, cfg.EndedLists = "off", false
	h.engine(cfg, fires.SweepEvery(100*time.Millisecond))
	records := h.waitEnded(ids, 20*time.Second)
	for _, id := range ids {
		st, s := records[id], jsstore.EndedSlot{}
		s, _ = listedSlot(lists, id)
		if c := st.Claim; c == nil || c.Seq != s.Seq || !c.Slot.Equal(s.Slot) || st.Fires != 1 || !st.Next.IsZero() {
			t.Errorf("%s: record %+v, want ended with one fire and the listed claim %+v", id, st, s)
		}
	}
	err := testwait.Until(10*time.Second, "no ended list left", func() error {
		left, err := h.store.EndedLists(context.Background(), 0, nil)
		if err == nil && len(left) > 0 {
			err = fmt.Errorf("%d lists left", len(left))
		}
		return err
	})
	if err != nil {
		t.Error(err)
	}
	h.freshFire("fresh")
	h.allFires()
	for _, id := range ids {
		if n := len(h.of(id)); n != 1 {
			t.Errorf("%s fired %d times, want once", id, n)
		}
	}
}

// A list whose one-shots are all gone (removed) is deleted by the sweep;
// one that still stands for a schedule is kept.
func TestEndedListsSweptWhenNothingStands(t *testing.T) {
	t.Parallel()
	h := setup(t)
	h.engine(fires.Config{WindowBusy: -1, EndedLists: true}, fires.SweepEvery(100*time.Millisecond))
	ids := h.oneShots("swept", 10, time.Now().Add(time.Second).Truncate(time.Millisecond), nil)
	lists := h.waitListed(ids, 20*time.Second)
	keep := h.oneShots("kept", 3, time.Now().Add(time.Second).Truncate(time.Millisecond), nil)
	kept := h.waitListed(keep, 20*time.Second)
	for _, id := range ids {
		if err := h.store.DeleteSpec(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	var keepKey string
	for _, e := range kept {
		if _, ok := listedSlot([]jsstore.EndedEntry{e}, keep[0]); ok {
			keepKey = e.Key
		}
	}
	err := testwait.Until(10*time.Second, "the removed one-shots' lists deleted", func() error {
		left, err := h.store.EndedLists(context.Background(), 0, nil)
		if err != nil {
			return err
		}
		var keys []string
		for _, e := range left {
			keys = append(keys, e.Key)
		}
		for _, e := range lists {
			if e.Key != keepKey && slices.Contains(keys, e.Key) {
				return fmt.Errorf("%s still there", e.Key)
			}
		}
		if !slices.Contains(keys, keepKey) {
			return fmt.Errorf("%s (standing for %s) was deleted", keepKey, keep[0])
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// An operator's trigger on a listed one-shot, its fire gone from the
// stream and past the duplicate window, creates its record with an empty
// plan: the scheduler plans it as ended from the list (the slot does not
// fire again) and fires the trigger once.
func TestEndedListOneShotTriggered(t *testing.T) {
	t.Parallel()
	const dupWindow = 3 * time.Second
	h := setupWith(t, jsstore.SetupConfig{DuplicateWindow: dupWindow})
	cfg := fires.Config{WindowBusy: -1, EndedLists: true, ClaimTTL: time.Second}
	h.engine(cfg)
	ids := h.oneShots("trig", 5, time.Now().Add(time.Second).Truncate(time.Millisecond), nil)
	h.waitListed(ids, 20*time.Second)
	h.onceEach(ids)
	waitPastDuplicates(t, h.of(ids[0])[0].meta.ScheduledAt, dupWindow)
	h.purgeFires()
	slot, err := control.Control{Store: h.store}.Trigger(context.Background(), ids[0], "again")
	if err != nil {
		t.Fatal(err)
	}
	h.waitFires(ids[0], 20*time.Second, func(f []fireMsg) bool {
		return slices.ContainsFunc(f, func(m fireMsg) bool { return m.meta.SlotID == slot })
	})
	st := h.waitEnded(ids[:1], 10*time.Second)[ids[0]]
	if st.Fires != 2 || len(st.Triggers) != 0 {
		t.Errorf("record %+v, want ended with two fires and no trigger pending", st)
	}
	h.allFires()
	var regular int
	for _, f := range h.of(ids[0]) {
		if f.meta.SlotID != slot {
			regular++
		}
	}
	if regular != 1 {
		t.Errorf("%s: its one-shot slot fired %d times, want once", ids[0], regular)
	}
}

// Forged ended lists stand for nothing: one naming a slot after its own
// time, one naming a slot without a fire's sequence. The one-shots they
// name fire as their specs say, and the sweep deletes the lists.
func TestForgedEndedListsIgnored(t *testing.T) {
	t.Parallel()
	h := setup(t)
	now := time.Now()
	at := now.Add(2 * time.Second).Truncate(time.Millisecond)
	ids := h.oneShots("forged", 2, at, nil)
	forged := []jsstore.Ended{
		{Shard: 0, Owner: "mallory", At: now.Add(-10 * time.Second), Slots: []jsstore.EndedSlot{{Schedule: ids[0], Slot: at, Seq: 1}}},
		{Shard: 0, Owner: "mallory", At: at.Add(time.Second), Slots: []jsstore.EndedSlot{{Schedule: ids[1], Slot: at}}},
	}
	for i, l := range forged {
		if _, err := h.store.PutEnded(context.Background(), l, fmt.Sprintf("forged%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	h.engine(fires.Config{WindowBusy: -1, EndedLists: true}, fires.SweepEvery(100*time.Millisecond))
	for _, id := range ids {
		h.waitFires(id, 20*time.Second, atLeast(1))
	}
	h.onceEach(ids)
	err := testwait.Until(10*time.Second, "the forged lists deleted", func() error {
		for _, key := range []string{"ended.0.forged0", "ended.0.forged1"} {
			if _, err := h.store.Leases().Get(context.Background(), key); err == nil {
				return fmt.Errorf("%s still there", key)
			}
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}
