package fires_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/internal/testlog"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Records left behind (Config.StateInterval): a steady schedule's state
// record is written once per interval instead of once per fire, and a
// graceful stop writes what is left, so that the record then shows every
// fire.
func TestRecordsLeftBehindAreWrittenPerInterval(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	states, err := h.js.KeyValue(ctx, "sched_state")
	if err != nil {
		t.Fatal(err)
	}
	w, err := states.Watch(ctx, "lb", jetstream.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	e := h.engine(fires.Config{WindowBusy: -1, StateInterval: 3 * time.Second})
	h.put("lb", kvstore.Spec{Workflow: "wf", Every: "1s"})
	// A record written by the interval, not by a stop: it counts fires
	// the records before it did not.
	writes := 0
	deadline := time.After(20 * time.Second)
	for seen := uint64(0); seen < 4; {
		select {
		case kv := <-w.Updates():
			writes++
			if st, err := kvstore.DecodeState(kv.Value()); err == nil {
				seen = st.Fires
			}
		case <-deadline:
			t.Fatalf("no state record counting 4 fires within 20s (%d writes)", writes)
		}
	}
	fs := h.waitFires("lb", 20*time.Second, atLeast(10))
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	h.allFires()
	fs = h.of("lb")
	for drained := false; !drained; {
		select {
		case <-w.Updates():
			writes++
		default:
			drained = true
		}
	}
	if writes > len(fs)/2+1 {
		t.Errorf("%d state writes for %d fires: want about one per 3 s interval", writes, len(fs))
	}
	st, _ := h.record("lb")
	last := fs[len(fs)-1].meta.ScheduledAt
	if st.Fires != uint64(len(fs)) || st.Claim == nil || !st.Claim.Slot.Equal(last) || !st.Next.After(last) {
		t.Errorf("after the stop the record says fires %d, claim %+v, next %v; the stream holds %d fires, the last at %v", st.Fires, st.Claim, st.Next, len(fs), last)
	}
}

// An owner that dies with records behind its fires: the next owner finds
// them in the stream (the window record's last slots, and the schedule's
// last fire for the others), fires none of them again and counts them
// all.
func TestOwnerDiesWithRecordsBehind(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	ids := []string{"d1", "d2", "d3"}
	nc, js := h.srv.Connect(t)
	store, err := jsstore.Open(ctx, js, kvstore.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	var logs testlog.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the engines' logs:\n%s", logs.String())
		}
	})
	cfg := fires.Config{WindowBusy: -1, StateInterval: time.Hour, LeaseTTL: 2 * time.Second, ClaimTTL: time.Second}
	crashCfg := cfg
	crashCfg.Logger, cfg.Logger = log, log // (each logs its instance)
	crashCfg.Store, crashCfg.Instance = store, "dies"
	testwait.Done(t, 10*time.Second, "the first owner's index", h.startLoading(crashCfg).Ready())
	for _, id := range ids {
		h.put(id, kvstore.Spec{Workflow: "wf", Every: "1s"})
	}
	for _, id := range ids {
		h.waitFires(id, 20*time.Second, atLeast(5))
	}
	nc.Close() // dies: its records say one or two fires
	died := time.Now()
	h.allFires()
	for _, id := range ids {
		st, _ := h.record(id)
		if st.Fires >= 4 {
			t.Fatalf("%s: its record counts %d fires before the death: not left behind", id, st.Fires)
		}
		// What a reader of the bucket is shown (schedule.get): the record
		// caught up with the stream.
		spec, err := h.store.GetSpec(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		fs := h.of(id)
		last := fs[len(fs)-1].meta.ScheduledAt
		up := (readmodel.Model{Store: h.store, Planner: fires.Planner{}}).CaughtUp(ctx, spec, st, time.Now())
		if up.Fires != uint64(len(fs)) || up.Claim == nil || !up.Claim.Slot.Equal(last) || !up.Next.Equal(last.Add(time.Second)) {
			t.Errorf("%s caught up: fires %d, claim %+v, next %v; the stream holds %d fires, the last at %v", id, up.Fires, up.Claim, up.Next, len(fs), last)
		}
	}
	cfg.Instance = "next"
	next := h.engine(cfg)
	for _, id := range ids {
		h.firesAfter(id, died.Add(3*time.Second), 20*time.Second)
	}
	if err := next.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	h.allFires()
	for _, id := range ids {
		h.onceEachSlot(id)
		st, _ := h.record(id)
		if fs := h.of(id); st.Fires != uint64(len(fs)) {
			var slots []string
			for _, f := range fs {
				slots = append(slots, fmt.Sprintf("%s#%d by %s", f.meta.ScheduledAt.Format("15:04:05"), f.seq, f.meta.Instance))
			}
			t.Errorf("%s: record counts %d fires, the stream holds %d: %v; record %+v", id, st.Fires, len(fs), slots, st)
		}
	}
}

// An operator's write (a pause) into a record behind its fires is merged
// with them in memory: the stop writes the pause and every fire.
func TestRecordsBehindKeepAnOperatorsWrite(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	e := h.engine(fires.Config{WindowBusy: -1, StateInterval: time.Hour})
	h.put("op", kvstore.Spec{Workflow: "wf", Every: "1s"})
	h.waitFires("op", 20*time.Second, atLeast(4))
	h.forgeState("op", func(st *kvstore.State) { st.Paused = &kvstore.Pause{Note: "by hand", At: time.Now().UTC()} })
	paused := time.Now()
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	h.allFires()
	fs := h.of("op")
	st, _ := h.record("op")
	if st.Paused == nil || st.Paused.Note != "by hand" {
		t.Errorf("the operator's pause was lost: paused %+v", st.Paused)
	}
	last := fs[len(fs)-1].meta.ScheduledAt
	if st.Fires != uint64(len(fs)) || st.Claim == nil || !st.Claim.Slot.Equal(last) {
		t.Errorf("record counts %d fires, claim %+v; the stream holds %d, the last at %v", st.Fires, st.Claim, len(fs), last)
	}
	if last.After(paused.Add(time.Second)) {
		t.Errorf("fired %v, after the pause of %v", last, paused)
	}
	h.onceEachSlot("op")
}

// onceEachSlot asserts that no slot of id is in the fire stream twice.
func (h *harness) onceEachSlot(id string) {
	h.t.Helper()
	seen := map[string]bool{}
	for _, f := range h.of(id) {
		if seen[f.meta.SlotID] {
			h.t.Errorf("%s: slot %s fired twice", id, f.meta.SlotID)
		}
		seen[f.meta.SlotID] = true
	}
}

// An owner that hands shards back to rebalance first writes the records
// it left behind for them, so that the next owner takes them current.
// The member that joins here reads records behind (its member key
// announces the cap), so nothing else would write them: with an interval
// of an hour they would stay behind. (A member of the previous release,
// without the cap, also makes the owner write every record at once,
// through fleetReads; the hand-back's wait makes sure that happens before
// the shards go.)
func TestHandBackWritesRecordsBehind(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	shards, err := h.store.Shards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Schedules in the upper half of the shards, which a rebalance to two
	// members hands back (the highest held go first).
	var ids []string
	for i := 0; len(ids) < 4; i++ {
		if id := fmt.Sprintf("hb%d", i); kvstore.ShardOf(id, shards) >= shards/2+1 {
			ids = append(ids, id)
		}
	}
	steps := make(chan fires.Step, 4096)
	h.engine(fires.Config{WindowBusy: -1, StateInterval: time.Hour, StepHook: stepsTo(steps)})
	for _, id := range ids {
		h.put(id, kvstore.Spec{Workflow: "wf", Every: "1s"})
	}
	// Once the lease rounds have seen that every member reads records
	// behind, the records fall behind their fires.
	err = testwait.Until(30*time.Second, "every record three fires behind", func() error {
		for _, id := range ids {
			st, _, err := h.store.GetState(ctx, id)
			if err != nil {
				return err
			}
			if n := len(h.of(id)); st.Fires == 0 || st.Fires+3 > uint64(n) {
				return fmt.Errorf("%s: its record counts %d fires, the stream holds %d", id, st.Fires, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	joining, _ := json.Marshal(map[string]any{"owner": "joining", "renewed": time.Now().UTC(), "ttl": "1h", "caps": []string{"behind-stream"}})
	if _, err := h.store.Leases().Put(ctx, "member.joining", joining); err != nil {
		t.Fatal(err)
	}
	waitStep(t, 30*time.Second, steps, fires.StepHandBackWritten)
	err = testwait.Until(20*time.Second, "the upper shards handed back", func() error {
		for _, id := range ids {
			if _, err := h.store.Leases().Get(ctx, fmt.Sprintf("shard.%d", kvstore.ShardOf(id, shards))); err == nil {
				return fmt.Errorf("shard of %s still leased", id)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	h.allFires()
	for _, id := range ids {
		fs := h.of(id)
		st, _ := h.record(id)
		last := fs[len(fs)-1].meta.ScheduledAt
		if st.Fires != uint64(len(fs)) || st.Claim == nil || !st.Claim.Slot.Equal(last) || !st.Next.After(last) {
			t.Errorf("%s handed back with its record at fires %d, claim %+v, next %v; the stream holds %d fires, the last at %v",
				id, st.Fires, st.Claim, st.Next, len(fs), last)
		}
	}
}
