package integration

// Fault tests of window claims (docs/protocol.md, "Window claims"): the
// owner dies in the middle of a window's publishes, and operators change,
// pause and remove schedules while their window is being published.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/control"
	"github.com/jetsched/jetsched/internal/faulttest"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestFaultKillOwnerMidWindow: one shard, so that one instance owns every
// schedule and each second's 200 due slots form one window. The owner
// exits (status 3) after sending the 300th window publish: in the middle
// of its second window, with about half of it sent and none of its state
// records written. The survivor takes the shard when the lease expires,
// turns the window's slots into claims on their records, and takes each
// over when it expires: the ones that reached the server are dropped by
// the stream as duplicates (their ledger entries say so), the others land
// with Sched-Reason takeover.
func TestFaultKillOwnerMidWindow(t *testing.T) {
	t.Parallel() // waits on slots more than it computes: CI's budget (test.sh)
	const name = "kill-owner-mid-window"
	bin := schedulerBinary(t)
	srv := natstest.Start(t)
	windows := []string{"--shards", "1", "--window-busy", "0"}
	crasher := newSchedProc(t, bin, "crasher", schedulerArgs(srv.URL(), "crasher", windows...), []string{"JETSCHED_CRASH_AT=window-send:300"})
	crasher.start()
	_, js := connectURLs(t, srv.URL())
	store := openStore(t, js)
	// The crasher holds the only shard before the survivor starts.
	if err := testwait.Until(15*time.Second, "the crasher holds shard 0", func() error {
		if owner := store.LeaseOwners(context.Background())[0]; owner != "crasher" {
			return fmt.Errorf("shard 0 held by %q", owner)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	survivor := newSchedProc(t, bin, "survivor", schedulerArgs(srv.URL(), "survivor", windows...), nil)
	survivor.start()

	ids := scheduleIDs("midwin", 200)
	created := time.Now()
	putSchedules(t, store, ids)
	fires := newFireLog(t, js)

	if !crashed(t, crasher, "window-send:300", 20*time.Second) {
		t.FailNow()
	}
	t.Logf("%s: the owner died mid-window %s after the schedules were written", name, time.Since(created).Round(100*time.Millisecond))
	// Past the lease (2s) and the window's claim TTL (3s), and a few
	// seconds of ordinary fires by the survivor after that.
	chaosStop := time.Now().Add(10 * time.Second)
	settle(t, fires, name, ids, chaosStop, created, 40*time.Second)
	// The window's slots were taken over: those that had not reached the
	// server landed as takeovers, those that had were re-published as
	// duplicates. (Which of the sent ones reached the server before the
	// exit depends on the client's flush: the split varies from run to
	// run, the sum does not.)
	duplicates := 0
	for _, id := range ids {
		ticks, err := store.History(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range ticks {
			if tk.Duplicate {
				duplicates++
			}
		}
	}
	t.Logf("%s: %d takeovers landed, %d re-published as duplicates", name, fires.reasons[kvstore.ReasonTakeover], duplicates)
	if fires.reasons[kvstore.ReasonTakeover]+duplicates == 0 {
		t.Errorf("%s: no slot was taken over (%d landed, %d duplicates): the crash did not leave a window unrecorded",
			name, fires.reasons[kvstore.ReasonTakeover], duplicates)
	}
	if !survivor.running() {
		t.Errorf("the survivor exited (status %d)", survivor.exitCode())
	}
}

// TestFaultChangeDuringWindow: while a window of 40 slots is being
// published (held after its first publish), an operator pauses 5 of its
// schedules, changes 5 to every 2s and removes 5. The window's slots were
// due before the actions: each fires exactly once. After the actions, the
// paused and removed schedules fire no more, the changed ones fire every
// 2s, and the 25 untouched ones fire every second, each slot exactly
// once. The paused records keep their pause (the window's state write
// merged into them) and the removed ones keep no record.
func TestFaultChangeDuringWindow(t *testing.T) {
	t.Parallel() // waits on slots more than it computes: CI's budget (test.sh)
	const name = "change-during-window"
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	ctx := context.Background()
	if err := jsstore.Setup(ctx, js, jsstore.SetupConfig{Shards: 1}); err != nil {
		t.Fatal(err)
	}
	var armed atomic.Bool
	held := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	hook := func(s fires.Step) {
		if s == fires.StepWindowPublish && armed.Load() {
			once.Do(func() {
				close(held)
				<-release
			})
		}
	}
	_, ejs := srv.Connect(t)
	estore, err := jsstore.Open(ctx, ejs, kvstore.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := fires.New(fires.Config{Store: estore, Instance: "owner", ClaimTTL: 3 * time.Second, WindowBusy: -1,
		StepHook: hook, Logger: fileLogger(t, "owner")})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
		_ = eng.Stop(context.Background())
	})
	testwait.Done(t, 10*time.Second, "engine: index ready", eng.Ready())

	store := openStore(t, js)
	ids := scheduleIDs("chg", 40)
	paused, changed, removed, untouched := ids[0:5], ids[5:10], ids[10:15], ids[15:]
	created := time.Now()
	putSchedules(t, store, ids)
	log := newFireLog(t, js)
	// Every schedule has fired once: the next second's 40 slots are due
	// together and go into one window, which the hook holds.
	if behind := log.waitAllReach(ids, created.Add(time.Second), 20*time.Second); len(behind) > 0 {
		t.Fatalf("%d schedules never fired, e.g. %v", len(behind), first(behind, 5))
	}
	armed.Store(true)
	testwait.Done(t, 10*time.Second, "a window held after its first publish", held)

	// The held window lists the schedules acted on: their records change
	// between the window's claim and its state writes.
	win, _, err := store.GetWindow(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	inWindow := map[string]bool{}
	for _, s := range win.Slots {
		inWindow[s.Schedule] = true
	}
	for _, id := range ids[:15] {
		if !inWindow[id] {
			t.Fatalf("the held window %s (%d slots) does not list %s: the actions would not race its publishes", win.Name(), len(win.Slots), id)
		}
	}
	acted := time.Now()
	ctl := control.Control{Store: store, Clock: clock.Clock{}}
	for _, id := range paused {
		if _, err := ctl.Pause(ctx, id, "paused mid-window", time.Time{}); err != nil {
			t.Fatalf("pause %s: %v", id, err)
		}
	}
	for i, id := range changed {
		spec := faultSpec(fmt.Sprintf("fault%d", i%4))
		spec.Every = "2s"
		if _, err := store.PutSpec(ctx, id, spec); err != nil {
			t.Fatalf("change %s: %v", id, err)
		}
	}
	for _, id := range removed {
		if err := store.DeleteSpec(ctx, id); err != nil {
			t.Fatalf("remove %s: %v", id, err)
		}
	}
	close(release)
	released = true

	// The run goes on for 8s after the actions.
	chaosStop := time.Now().Add(8 * time.Second)
	if behind := log.waitAllReach(untouched, chaosStop.Add(2*time.Second), 30*time.Second); len(behind) > 0 {
		t.Errorf("%d untouched schedules stopped firing, e.g. %v", len(behind), first(behind, 5))
	}
	if err := log.syncRetry(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	// Exactly once for every schedule up to the actions (the window's
	// slots included: they were due before), and for the untouched ones
	// up to the end.
	before := acted.Truncate(slotStep)
	sum := log.summarize(append(append(append([]string{}, paused...), changed...), removed...), before, created)
	rest := log.summarize(untouched, chaosStop.Truncate(slotStep).Add(-slotStep), created)
	sum.Schedules += rest.Schedules
	sum.Expected += rest.Expected
	sum.Fired += rest.Fired
	sum.Duplicates += rest.Duplicates
	sum.Lost += rest.Lost
	sum.dupSlots = append(sum.dupSlots, rest.dupSlots...)
	sum.lostSlots = append(sum.lostSlots, rest.lostSlots...)
	// After the actions: paused and removed schedules fire no slot later
	// than the held window's; changed ones fire on a 2s grid.
	late := 0
	for _, id := range append(append([]string{}, paused...), removed...) {
		for ms := range log.slots[id] {
			if time.UnixMilli(ms).After(acted) {
				late++
				sum.dupSlots = append(sum.dupSlots, kvstore.SlotID(id, time.UnixMilli(ms))+" (after its pause or removal)")
			}
		}
	}
	sum.Duplicates += late
	for _, id := range changed {
		var after []int64
		for ms := range log.slots[id] {
			if time.UnixMilli(ms).After(acted.Add(slotStep)) {
				after = append(after, ms)
			}
		}
		slices.Sort(after)
		if len(after) < 2 {
			t.Errorf("%s: %d fires in the 8s after its change to every 2s, want at least 2", id, len(after))
		}
		for i := 1; i < len(after); i++ {
			if d := after[i] - after[i-1]; d != 2000 {
				t.Errorf("%s: slots %s and %s are %dms apart, not the 2s of its changed spec", id,
					time.UnixMilli(after[i-1]).UTC(), time.UnixMilli(after[i]).UTC(), d)
			}
		}
	}
	faulttest.Summarize(t, fmt.Sprintf("FAULT %s: %s", name, sum))
	if sum.Duplicates != 0 {
		t.Errorf("%s: %d duplicate or unwanted fires, e.g. %v", name, sum.Duplicates, first(sum.dupSlots, 10))
	}
	if sum.Lost != 0 {
		t.Errorf("%s: %d lost slots, e.g. %v", name, sum.Lost, first(sum.lostSlots, 10))
	}
	for _, id := range paused {
		st, _, err := store.GetState(ctx, id)
		if err != nil || st.Paused == nil {
			t.Errorf("%s: the pause did not survive the window's state write: paused %v, err %v", id, st.Paused, err)
		}
	}
	for _, id := range removed {
		err := testwait.Until(10*time.Second, "the state record of removed "+id+" deleted", func() error {
			if _, _, err := store.GetState(ctx, id); !errors.Is(err, kvstore.ErrNotFound) {
				return fmt.Errorf("still there (err %v)", err)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}
}
