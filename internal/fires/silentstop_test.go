package fires_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/control"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Each test here is an operator sequence or a record that once left a
// schedule quietly not firing (issue 12, "no silent stop"); each now ends
// with the schedule firing again, or its slot recorded with the reason.

// firesAfter waits for a regular fire of id scheduled after t.
func (h *harness) firesAfter(id string, t time.Time, timeout time.Duration) fireMsg {
	h.t.Helper()
	var got fireMsg
	h.waitFires(id, timeout, func(fs []fireMsg) bool {
		for _, f := range fs {
			if f.meta.Reason == "" && f.meta.ScheduledAt.After(t) {
				got = f
				return true
			}
		}
		return false
	})
	return got
}

// A backfill in progress, rm, and the same id added again: the new
// schedule starts clean (no inherited backfill) and fires.
func TestRemoveDuringBackfillThenAddAgain(t *testing.T) {
	t.Parallel()
	h := setup(t)
	h.engine(fires.Config{})
	ctx := context.Background()
	h.put("h1", kvstore.Spec{Workflow: "wf", Every: "1s"})
	h.waitFires("h1", 10*time.Second, atLeast(1))
	// A long backfill (the ran from 1900; one request is now
	// bounded, so this one is 50,000 slots under a raised bound).
	c := control.Control{Store: h.store, MaxBackfillSlots: 100_000}
	to := time.Now().Add(-time.Hour).Truncate(time.Second)
	from := to.Add(-50_000 * time.Second)
	if _, err := c.Backfill(ctx, "h1", from, to, 10000, ""); err != nil {
		t.Fatal(err)
	}
	// Some of its slots fired: the backfill is under way (its 50,000
	// slots take at least 5 s at the rate's bound). The deadline is wide:
	// a loaded box under -race fired fewer than 50 a second here.
	h.waitFires("h1", 30*time.Second, atLeast(50))
	if st, _ := h.record("h1"); st.Backfill == nil {
		t.Fatal("the backfill ended before the rm: nothing left to test")
	}
	if err := h.store.DeleteSpec(ctx, "h1"); err != nil {
		t.Fatal(err)
	}
	readded := time.Now()
	h.put("h1", kvstore.Spec{Workflow: "wf", Every: "1s"})
	h.firesAfter("h1", readded, 15*time.Second)
	st, _ := h.record("h1")
	if st.Backfill != nil {
		t.Errorf("the re-added schedule inherited the removed one's backfill: %+v", st.Backfill)
	}
}

// A note far over the header limit, forged into the state record, is cut
// in the Sched-Note header: the trigger fires and the schedule goes on.
func TestOversizedTriggerNoteIsCut(t *testing.T) {
	t.Parallel()
	h := setup(t)
	h.engine(fires.Config{})
	ctx := context.Background()
	h.put("h2", kvstore.Spec{Workflow: "wf", Every: "1s"})
	h.waitFires("h2", 10*time.Second, atLeast(1))
	for {
		st, rev := h.record("h2")
		st.Triggers = append(st.Triggers, kvstore.Trigger{At: time.Now().UTC(), Note: strings.Repeat("n", 100<<10)})
		if _, err := h.store.UpdateState(ctx, "h2", st, rev); err == nil {
			break
		}
	}
	forged := time.Now()
	h.waitFires("h2", 10*time.Second, func(fs []fireMsg) bool {
		for _, f := range fs {
			if f.meta.Reason == kvstore.ReasonTrigger {
				if n := len(f.meta.Note); n > 1024 || !strings.HasSuffix(f.meta.Note, "…(cut)") {
					t.Fatalf("Sched-Note of %d bytes, want it cut to 1 KB", n)
				}
				return true
			}
		}
		return false
	})
	h.firesAfter("h2", forged.Add(time.Second), 10*time.Second)
}

// A fire the stream refuses for good (larger than its max message size) is
// recorded as failed with the reason, with an event, and the schedule moves
// on to its next slots; a fixed spec fires again.
func TestUnpublishableSlotIsRecordedFailed(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	s, err := h.js.Stream(ctx, "SCHED_FIRES")
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	cfg.MaxMsgSize = 4096
	if _, err := h.js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	nc := h.js.Conn()
	failed, err := nc.SubscribeSync("sched.event.failed.>")
	if err != nil {
		t.Fatal(err)
	}
	h.engine(fires.Config{})
	big := []byte(`"` + strings.Repeat("x", 8000) + `"`)
	h.put("big", kvstore.Spec{Workflow: "wf", Every: "1s", Input: big})
	ev := nextEvent(t, failed, 15*time.Second, "failed event for an unpublishable slot")
	tick := h.waitTick(kvstore.SlotID("big", ev.Slot))
	if tick.Status != kvstore.TickFailed || !strings.Contains(tick.Reason, "maximum") {
		t.Fatalf("tick %+v, want failed with the server's reason", tick)
	}
	// The schedule moved on: the next slot is tried (and fails) too.
	ev2 := nextEvent(t, failed, 15*time.Second, "failed event for the next slot (the schedule stopped after one unpublishable slot)")
	if !ev2.Slot.After(ev.Slot) {
		t.Fatalf("second failure for slot %v, not after %v", ev2.Slot, ev.Slot)
	}
	fixed := time.Now()
	h.put("big", kvstore.Spec{Workflow: "wf", Every: "1s", Input: []byte(`{"small":true}`)})
	h.firesAfter("big", fixed, 15*time.Second)
}

// nextEvent waits for the next event on sub.
func nextEvent(t *testing.T, sub *nats.Subscription, timeout time.Duration, what string) kvstore.Event {
	t.Helper()
	m, err := sub.NextMsg(timeout)
	if err != nil {
		t.Fatalf("no %s: %v", what, err)
	}
	var ev kvstore.Event
	if err := json.Unmarshal(m.Data, &ev); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return ev
}

// forgeState rewrites the state record of id with change, as `nats kv put`
// would, retrying when the engine wrote in between.
func (h *harness) forgeState(id string, change func(*kvstore.State)) {
	h.t.Helper()
	ctx := context.Background()
	for range 50 {
		st, rev := h.record(id)
		change(&st)
		if _, err := h.store.UpdateState(ctx, id, st, rev); err == nil {
			return
		}
	}
	h.t.Fatalf("could not forge the state of %s", id)
}

// record reads id's state record, waiting for it to exist: a fire under a
// window claim is published before its record is written, so a test that
// saw the fire may be ahead of the record.
func (h *harness) record(id string) (kvstore.State, uint64) {
	h.t.Helper()
	var st kvstore.State
	var rev uint64
	err := testwait.Until(10*time.Second, "the state record of "+id, func() (err error) {
		st, rev, err = h.store.GetState(context.Background(), id)
		return err
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return st, rev
}

// A forged (or badly clocked) state record whose next slot is far in the
// future, or before the schedule existed, is re-planned with an event and
// the schedule fires again; the far-past one is not walked as a century of
// missed slots.
func TestImplausibleStateIsReplanned(t *testing.T) {
	t.Parallel()
	h := setup(t)
	nc := h.js.Conn()
	replanned, err := nc.SubscribeSync("sched.event.replanned.>")
	if err != nil {
		t.Fatal(err)
	}
	h.engine(fires.Config{})
	for _, tc := range []struct {
		id   string
		next time.Time
		want string
	}{
		{"future", time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC), "beyond the recurrence's next slot"},
		{"past", time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), "before the schedule was created"},
	} {
		h.put(tc.id, kvstore.Spec{Workflow: "wf", Every: "1s"})
		h.waitFires(tc.id, 10*time.Second, atLeast(1))
		// (The claim goes too: a next slot before the claimed one is
		// implausible on its own.)
		h.forgeState(tc.id, func(st *kvstore.State) { st.Next, st.Claim = tc.next, nil })
		forged := time.Now()
		ev := nextEvent(t, replanned, 15*time.Second, tc.id+": replanned event")
		if ev.Schedule != tc.id || !strings.Contains(ev.Reason, tc.want) {
			t.Fatalf("%s: replanned event %+v, want reason %q", tc.id, ev, tc.want)
		}
		h.firesAfter(tc.id, forged.Add(time.Second), 10*time.Second)
		st, _, err := h.store.GetState(context.Background(), tc.id)
		if err != nil {
			t.Fatal(err)
		}
		if st.Missed != 0 {
			t.Errorf("%s: %d slots recorded missed for a forged next", tc.id, st.Missed)
		}
	}
}

// A schedule whose fires keep failing for a reason that may pass (the fire
// stream deleted by an operator) is flagged: a stalled event and a warning,
// while it keeps being retried; with the stream back, it fires again.
func TestFailingScheduleIsFlaggedStalled(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	nc := h.js.Conn()
	stalled, err := nc.SubscribeSync("sched.event.stalled.>")
	if err != nil {
		t.Fatal(err)
	}
	h.engine(fires.Config{ClaimTTL: time.Second})
	h.put("s1", kvstore.Spec{Workflow: "wf", Every: "1s"})
	h.waitFires("s1", 10*time.Second, atLeast(1))
	s, err := h.js.Stream(ctx, "SCHED_FIRES")
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	if err := h.js.DeleteStream(ctx, "SCHED_FIRES"); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, stalled, 60*time.Second, "stalled event while every publish fails")
	if ev.Schedule != "s1" || ev.Count < 5 || ev.Reason == "" {
		t.Fatalf("stalled event %+v, want s1 with the attempts and the last error", ev)
	}
	if _, err := h.js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	h.subscribeFires()
	h.firesAfter("s1", back, 30*time.Second)
}

// A spec written straight into the bucket under a key that is not a valid
// id ("a.b" is two subject tokens) is reported on one token, so that
// `sched.event.invalid.*` sees it.
func TestInvalidEventOfADottedKeyIsOneToken(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	invalid, err := h.js.Conn().SubscribeSync("sched.event.invalid.*")
	if err != nil {
		t.Fatal(err)
	}
	h.engine(fires.Config{})
	kv, err := h.js.KeyValue(ctx, "sched_specs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "a.b", []byte(`{"workflow":"wf","every":"1s"}`)); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, invalid, 10*time.Second, "invalid event on sched.event.invalid.* for key a.b")
	if ev.Schedule != "a.b" || ev.Field != "id" {
		t.Fatalf("event %+v, want key a.b and field id", ev)
	}
}
