package fires_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// A state record put back behind the fire stream (a backup restored, or
// the record of an owner that died before recording its last fires) is
// caught up from the stream by the next instance to decide it: none of
// the slots the stream holds fires again or is recorded missed, beyond
// the stream's duplicate window and past the misfire threshold alike,
// and the record counts them as fired. The first instance to find them
// behind dies before writing anything; the next finds them again.
func TestStateRecordBehindTheStreamIsCaughtUp(t *testing.T) {
	t.Parallel()
	const dupWindow = 3 * time.Second
	h := setupWith(t, jsstore.SetupConfig{DuplicateWindow: dupWindow})
	ctx := context.Background()
	specs := map[string]kvstore.Spec{
		// Late within the misfire threshold: fired again in a window.
		"behind-plain": {Workflow: "wf", Every: "1s"},
		// Late past it: recorded missed, although it fired.
		"behind-skip": {Workflow: "wf", Every: "1s", MisfireThreshold: "1s"},
		// Late past it, caught up: fired again.
		"behind-all": {Workflow: "wf", Every: "1s", MisfireThreshold: "1s", Misfire: kvstore.MisfireFireAll},
	}
	cfg := fires.Config{WindowBusy: -1, Instance: "s1", LeaseTTL: 2 * time.Second, ClaimTTL: time.Second}
	first := h.engine(cfg)
	for id, s := range specs {
		h.put(id, s)
	}
	backup := map[string]kvstore.State{}
	for id := range specs {
		h.waitFires(id, 15*time.Second, atLeast(2))
		st, _ := h.record(id)
		if c := st.Claim; c == nil || c.Window == "" || !c.Settled() {
			t.Fatalf("%s: the record to put back has claim %+v, want a settled window claim", id, c)
		}
		backup[id] = st
	}
	for id, st := range backup {
		h.waitFires(id, 15*time.Second, func(fs []fireMsg) bool {
			n := 0
			for _, f := range fs {
				if f.meta.ScheduledAt.After(st.Next) {
					n++
				}
			}
			return n >= 3 // three slots at least fired after the one the record says is next
		})
	}
	if err := first.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	h.allFires()
	var last time.Time
	for id := range specs {
		fs := h.of(id)
		last = maxTime(last, fs[len(fs)-1].meta.ScheduledAt)
	}
	waitPastDuplicates(t, last, dupWindow) // the stream would store a publish of those slots again
	for id, st := range backup {
		h.forgeState(id, func(s *kvstore.State) { *s = st })
	}
	// The shards' window records moved on meanwhile (later windows of
	// other schedules, say): only the stream says what fired.
	leases, err := h.js.KeyValue(ctx, "sched_leases")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := leases.ListKeysFiltered(ctx, "window.*")
	if err != nil {
		t.Fatal(err)
	}
	for k := range keys.Keys() {
		if err := leases.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	// The same instance restarted dies as soon as it has found a record
	// behind, before writing anything of it (its connection closed); the
	// next one looks again.
	nc, js := h.srv.Connect(t)
	store, err := jsstore.Open(ctx, js, kvstore.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	crashed := make(chan struct{})
	var once sync.Once
	crashCfg := cfg
	crashCfg.Store = store
	crashCfg.StepHook = func(s fires.Step) {
		if s == fires.StepCaughtUp {
			once.Do(func() { nc.Close(); close(crashed) })
		}
	}
	h.startLoading(crashCfg)
	testwait.Done(t, 15*time.Second, "the restarted instance's death at its first catch-up", crashed)
	steps := make(chan fires.Step, 1024)
	cfg.Instance, cfg.StepHook = "s2", stepsTo(steps)
	restarted := time.Now()
	second := h.engine(cfg)
	waitStep(t, 15*time.Second, steps, fires.StepCaughtUp)
	for id := range specs {
		h.firesAfter(id, restarted, 15*time.Second)
	}
	if err := second.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	h.allFires()
	for id := range specs {
		fs := h.of(id)
		seen := map[string]bool{}
		for _, f := range fs {
			if seen[f.meta.SlotID] {
				t.Errorf("%s: slot %s fired twice", id, f.meta.SlotID)
			}
			seen[f.meta.SlotID] = true
			switch tick, err := h.store.GetTick(ctx, f.meta.SlotID); {
			case err == nil:
				t.Errorf("%s: fired slot %s has a ledger entry %s (%s), want none: the stream says it fired", id, f.meta.SlotID, tick.Status, tick.Reason)
			case !errors.Is(err, kvstore.ErrNotFound):
				t.Fatal(err)
			}
		}
		// (The slots due while no instance ran are missed, or caught up,
		// as their policy says: they are not in the stream.)
		st, _ := h.record(id)
		if st.Fires != uint64(len(seen)) {
			t.Errorf("%s: record counts %d fires, the stream holds %d", id, st.Fires, len(seen))
		}
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// A record that already took the stream's last fire as its claim, its
// next slot not moved past it yet (what the check of a window record
// writes when the record was behind: see demote), is not behind the
// stream: the fires up to that claim are counted once, by whoever wrote
// it, not again by the reader (schedule.get) nor by the next owner.
// (Counted twice, the record of issue 26's CI run said 13 fires where
// the stream held 9.)
func TestRecordCaughtUpOnceIsNotCaughtUpAgain(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	cfg := fires.Config{WindowBusy: -1, Instance: "s1", LeaseTTL: 2 * time.Second, ClaimTTL: time.Second}
	first := h.engine(cfg)
	h.put("once", kvstore.Spec{Workflow: "wf", Every: "1s"})
	h.waitFires("once", 15*time.Second, atLeast(5))
	if err := first.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	h.allFires()
	fs := h.of("once")
	last := fs[len(fs)-1]
	// The record as the check of a window record leaves it: the stream's
	// last fire as its settled claim and every fire counted, its next
	// slot still three slots back.
	h.forgeState("once", func(st *kvstore.State) {
		at := last.meta.DispatchedAt.UTC()
		st.Claim = &kvstore.Claim{Slot: last.meta.ScheduledAt.UTC(), Token: "stream-" + strconv.FormatUint(last.seq, 10), Owner: "s0",
			At: at, Expires: at, Seq: last.seq, Window: kvstore.ClaimFromStream}
		st.Next = last.meta.ScheduledAt.Add(-3 * time.Second).UTC()
		st.Fires = uint64(len(fs))
		st.Owner = "s0"
	})
	spec, err := h.store.GetSpec(ctx, "once")
	if err != nil {
		t.Fatal(err)
	}
	st, _ := h.record("once")
	if up := (readmodel.Model{Store: h.store, Planner: fires.Planner{}}).CaughtUp(ctx, spec, st, time.Now()); up.Fires != uint64(len(fs)) || !up.Next.After(last.meta.ScheduledAt) {
		t.Errorf("a reader is shown fires %d, next %v; the stream holds %d fires, the last at %v", up.Fires, up.Next, len(fs), last.meta.ScheduledAt)
	}
	cfg.Instance = "s2"
	next := h.engine(cfg)
	h.firesAfter("once", last.meta.ScheduledAt, 20*time.Second)
	if err := next.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	h.allFires()
	h.onceEachSlot("once")
	if st, _ := h.record("once"); st.Fires != uint64(len(h.of("once"))) {
		t.Errorf("the next owner's record counts %d fires, the stream holds %d", st.Fires, len(h.of("once")))
	}
}
