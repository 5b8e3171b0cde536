package fires_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/nats-io/nats-server/v2/server"
)

// With windows always on, plain slots are claimed in windows: every slot
// fires once, in cadence, and each record's claim carries the window's
// name and the fire's sequence (settled by the record itself), with a
// dispatched ledger entry of the same sequence.
func TestWindowClaimsSettleByRecord(t *testing.T) {
	t.Parallel()
	h := setup(t)
	h.engine(fires.Config{WindowBusy: -1})
	ids := []string{"w1", "w2", "w3", "w4", "w5", "w6"}
	for _, id := range ids {
		h.put(id, kvstore.Spec{Workflow: "wf", Every: "1s"})
	}
	for _, id := range ids {
		fs := h.waitFires(id, 15*time.Second, atLeast(3))
		checkCadence(t, fs, time.Second)
		for _, f := range fs {
			if f.expect != "" {
				t.Errorf("%s: a window's fire carries Nats-Expected-Stream %q", id, f.expect)
			}
		}
	}
	windowed := 0
	for _, id := range ids {
		st, _ := h.record(id)
		c := st.Claim
		if c == nil || c.Window == "" {
			continue
		}
		windowed++
		if !c.Settled() {
			t.Errorf("%s: window claim %+v has no sequence", id, c)
			continue
		}
		tick := h.waitTick(c.ID(id))
		if tick.Status != kvstore.TickDispatched || tick.Seq != c.Seq {
			t.Errorf("%s: ledger %s/%d, the record's claim says seq %d", id, tick.Status, tick.Seq, c.Seq)
		}
	}
	if windowed == 0 {
		t.Fatal("no record shows a window claim: the slots did not go into windows")
	}
}

// A window record left by an instance that died (or forged into the
// bucket) is checked before its shard is dispatched: a listed slot that
// no record shows becomes a claim on its record and is taken over once
// expired (one fire, Sched-Reason takeover, not a second plain one); a
// slot later than the window's own time is ignored; a schedule that does
// not exist gets no record; an undecodable record on another shard is
// replaced, and that shard fires as usual. The loop dispatches the shard
// from the records the check wrote, not from the watch's echo of them
// (kept from it here, as a slow watch would be late with them): with a
// fire quantum, a schedule decided from the plan it had before would go
// out on the engine's own window as a plain fire of that slot.
func TestWindowRecordCheckedOnTakingTheShard(t *testing.T) {
	t.Parallel()
	for _, q := range []time.Duration{0, fires.DefaultFireQuantum} {
		t.Run(fmt.Sprintf("quantum=%s", q), func(t *testing.T) {
			t.Parallel()
			windowRecordChecked(t, q)
		})
	}
}

func windowRecordChecked(t *testing.T, quantum time.Duration) {
	h := setup(t)
	ctx := context.Background()
	shards, err := h.store.Shards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	due := now.Add(-2 * time.Second).Truncate(time.Millisecond)
	later := now.Add(time.Hour).Truncate(time.Millisecond)
	h.put("orphan", kvstore.Spec{Workflow: "wf", At: &due})
	h.put("future", kvstore.Spec{Workflow: "wf", At: &later})
	shard := kvstore.ShardOf("orphan", shards)
	win := jsstore.Window{Shard: shard, Seq: 7, Token: "ghost-token", Owner: "ghost", At: now.Add(-2 * time.Second), Expires: now.Add(-time.Second),
		Slots: []jsstore.WindowSlot{{Schedule: "orphan", Slot: due}, {Schedule: "future", Slot: later}, {Schedule: "gone", Slot: due}}}
	// "future" and "gone" may hash to another shard: the record names
	// them anyway, as a forged one could.
	if _, err := h.store.PutWindow(ctx, win, 0); err != nil {
		t.Fatal(err)
	}
	other := -1
	var otherID string
	for i := range 200 {
		id := "plain-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		if s := kvstore.ShardOf(id, shards); s != shard {
			other, otherID = s, id
			break
		}
	}
	if _, err := h.store.Leases().Put(ctx, jsstore.WindowKey(other), []byte("not a window")); err != nil {
		t.Fatal(err)
	}
	h.put(otherID, kvstore.Spec{Workflow: "wf", Every: "1s"})

	late := fires.LateStates(func(key string, value []byte) bool {
		return key == "orphan" && bytes.Contains(value, []byte(win.Token))
	})
	h.engine(fires.Config{ClaimTTL: 2 * time.Second, FireQuantum: quantum}, late)
	got := h.waitFires("orphan", 15*time.Second, atLeast(1))
	if got[0].meta.Reason != kvstore.ReasonTakeover {
		t.Errorf("orphan's slot fired with reason %q, want %q (taken over from the window)", got[0].meta.Reason, kvstore.ReasonTakeover)
	}
	h.waitFires(otherID, 15*time.Second, atLeast(2))
	// The one-shot ended with its one fire: its record moved past the
	// window's slot instead of firing it again.
	err = testwait.Until(10*time.Second, "orphan's record ended", func() error {
		if st, _ := h.record("orphan"); !st.Ended {
			return fmt.Errorf("record %+v", st)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	if n := len(h.of("orphan")); n != 1 {
		t.Errorf("orphan fired %d times, want once", n)
	}
	if st, _, err := h.store.GetState(ctx, "future"); err == nil && st.Claim != nil {
		t.Errorf("future: the forged slot %s became a claim %+v", later, st.Claim)
	}
	if _, _, err := h.store.GetState(ctx, "gone"); !errors.Is(err, kvstore.ErrNotFound) {
		t.Errorf("gone (no spec): a record was written for it (err %v)", err)
	}
}

// A server whose max_payload is too small for a window record refuses
// it: the window's slots go per slot at once (every one fires, once) and
// the next windows are smaller, down to what the server takes. The ended
// lists of those windows (a little larger than their window records) may
// be refused too: their one-shots are then recorded one by one; each
// ends, by its record or its list.
func TestWindowTooLargeForTheServer(t *testing.T) {
	t.Parallel()
	srv := natstest.StartWith(t, &server.Options{MaxPayload: 4 << 10})
	js, store := srv.Store(t)
	h := &harness{t: t, srv: srv, js: js, store: store, added: make(chan struct{}, 1)}
	h.subscribeFires()
	var refused atomic.Int64
	hook := func(s fires.Step) {
		if s == fires.StepWindowRefused {
			refused.Add(1)
		}
	}
	h.engine(fires.Config{WindowBusy: -1, StepHook: hook, EndedLists: true})
	ctx := context.Background()
	shards, err := store.Shards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// 120 schedules of one shard, due together: their window record
	// (over 10 KiB) is bigger than the server takes.
	var ids []string
	for i := 0; len(ids) < 120; i++ {
		id := fmt.Sprintf("big-window-schedule-with-a-long-name-%05d", i)
		if kvstore.ShardOf(id, shards) == 0 {
			ids = append(ids, id)
		}
	}
	at := time.Now().Add(2 * time.Second).Truncate(time.Second)
	for _, id := range ids {
		h.put(id, kvstore.Spec{Workflow: "wf", At: &at})
	}
	for _, id := range ids {
		h.waitFires(id, 20*time.Second, atLeast(1))
	}
	for _, id := range ids {
		if n := len(h.of(id)); n != 1 {
			t.Errorf("%s fired %d times", id, n)
		}
	}
	if refused.Load() == 0 {
		t.Error("no window record was refused: the test did not make one too large")
	}
	err = testwait.Until(20*time.Second, "every one-shot ended, by its record or its list", func() error {
		for _, id := range ids {
			st, _, err := store.GetState(ctx, id)
			if errors.Is(err, kvstore.ErrNotFound) {
				spec, serr := store.GetSpec(ctx, id)
				if serr != nil {
					return serr
				}
				st, _ = readmodel.ListedState(ctx, store, store.NewEndedReader(), spec, "")
				err = nil
			}
			if err != nil {
				return err
			}
			if !st.Ended {
				return fmt.Errorf("%s has not ended: %+v", id, st)
			}
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// A shard's window check that fails while NATS is away, and is due again
// while the lease is silent, must not leave the schedules waiting for it
// behind: once the lease is back they go through dispatch again (found by
// the bridge partition test: a one-shot never fired).
func TestWindowCheckFailureWhileLeaseSilent(t *testing.T) {
	t.Parallel()
	h := setup(t)
	failed, deferred := make(chan struct{}, 16), make(chan struct{}, 16)
	signal := func(ch chan struct{}) {
		select {
		case ch <- struct{}{}:
		default: // a hook must not block
		}
	}
	hook := func(s fires.Step) {
		switch s {
		case fires.StepWindowCheckFailed:
			signal(failed)
		case fires.StepWindowCheckDeferred:
			signal(deferred)
		}
	}
	// The engine's clock is a fake one: the test decides when the slot
	// falls due (with NATS away) and when the lease's silence passes its
	// guard, instead of timing an outage around them.
	clk, fake := clock.NewFake(time.Now())
	// Windows always: each shard is checked once owned, so the check that
	// fails here is the one a window that could not be claimed (NATS
	// away) asks for.
	e := h.engine(fires.Config{Clock: clk, LeaseTTL: 10 * time.Second, StepHook: hook, WindowBusy: -1})
	ctx := context.Background()
	testwait.Eventually(t, 10*time.Second, "the engine holds every shard", func() bool {
		n, err := h.store.Shards(ctx)
		return err == nil && e.LeasesHeld() == n
	})
	at := fake.Now().Add(2 * time.Second).Truncate(time.Millisecond)
	h.put("away", kvstore.Spec{Workflow: "wf", At: &at, MisfireThreshold: "1h"})
	testwait.Eventually(t, 10*time.Second, "the loop's timer set for the slot", func() bool { return fake.ArmedFor(at) })
	// NATS goes away, then the slot falls due (2s into the lease's 9s of
	// tolerated silence): its window is not claimed, and the shard's
	// check, asked for again after it, fails.
	h.srv.Shutdown()
	fake.Set(at)
	testwait.Receive(t, 20*time.Second, "the shard's window check failed", failed)
	retry := fake.Now().Add(time.Second)
	testwait.Eventually(t, 10*time.Second, "the check's retry timer", func() bool { return fake.ArmedFor(retry) })
	// Its retry comes after the guard: the lease is silent.
	fake.Advance(10 * time.Second)
	testwait.Receive(t, 10*time.Second, "the check's retry deferred for a silent lease", deferred)
	h.srv.Restart()
	// NATS is back: the lease keeper renews at its next round (a third of
	// the TTL on the fake clock), and the schedule must fire. Each poll
	// moves the fake clock on a second, so that the keeper's rounds come.
	err := testwait.Until(30*time.Second, "the slot fired after NATS came back", func() error {
		if len(h.of("away")) > 0 {
			return nil
		}
		fake.Advance(time.Second)
		return errors.New("not fired yet")
	})
	if err != nil {
		t.Fatal(err)
	}
	got := h.waitFires("away", 30*time.Second, atLeast(1))
	if n := len(got); n != 1 {
		t.Errorf("fired %d times, want once", n)
	}
}

// An owner that dies between its window's claim and the window's publishes
// leaves claims that the next owner does not wait out: made before its
// tenure of the shard began, by an owner whose lease lapsed, they are
// checked at once and their slots taken over. Waited out, a SIGKILLed
// instance's last slots fired a whole claim TTL late (the soak: p99 8-31 s
// in the minute after each kill). The claim TTL here is 20 s; the slot
// fires within seconds of the takeover, once. (The test ends once the dead
// owner's window has given its publishes up, at the claim's expiry.)
func TestLapsedOwnersClaimIsNotWaitedOut(t *testing.T) {
	t.Parallel()
	h := setup(t)
	nc, js := h.srv.Connect(t)
	store, err := jsstore.Open(context.Background(), js, kvstore.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := fires.Config{WindowBusy: -1, LeaseTTL: 2 * time.Second, ClaimTTL: 20 * time.Second}
	crashCfg := cfg
	crashed := make(chan struct{})
	var once sync.Once
	crashCfg.Store, crashCfg.Instance = store, "dies"
	crashCfg.StepHook = func(s fires.Step) {
		if s == fires.StepAfterWindow {
			once.Do(func() { nc.Close(); close(crashed) }) // claimed, nothing published
		}
	}
	testwait.Done(t, 10*time.Second, "the first owner's index", h.startLoading(crashCfg).Ready())
	h.put("lapsed", kvstore.Spec{Workflow: "wf", Every: "1s"})
	testwait.Done(t, 20*time.Second, "the first owner's death after its window's claim", crashed)
	died := time.Now()
	// The next owner fires per slot: a window of its own, decided before
	// the check of the dead owner's window record reached its memory, would
	// fire the slot itself (a plain fire, once all the same) and hide what
	// this test looks at.
	cfg.Instance, cfg.WindowSlots = "next", -1
	h.engine(cfg)
	// Waited out, the first slot would come 20 s after the claim.
	fs := h.waitFires("lapsed", 15*time.Second, atLeast(1))
	if f := fs[0]; f.meta.Instance != "next" || f.meta.Reason != kvstore.ReasonTakeover || f.meta.DispatchedAt.Sub(died) > 12*time.Second {
		t.Errorf("first fire by %s at %s, %s after the death, reason %q: want the next owner's takeover, before the claim expires",
			f.meta.Instance, f.meta.DispatchedAt.Format(time.TimeOnly), f.meta.DispatchedAt.Sub(died).Round(time.Millisecond), f.meta.Reason)
	}
	h.waitFires("lapsed", 20*time.Second, atLeast(3))
	h.allFires()
	h.onceEachSlot("lapsed")
}
