package fires_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/control"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestLeasesShareAndHandOver: two instances split the shards; when one
// stops, the other takes them all and every schedule keeps its cadence
// with no duplicate.
func TestLeasesShareAndHandOver(t *testing.T) {
	t.Parallel()
	h := setup(t)
	a := h.engine(fires.Config{Instance: "a", LeaseTTL: 2 * time.Second})
	b := h.engine(fires.Config{Instance: "b", LeaseTTL: 2 * time.Second})
	ids := []string{}
	for i := range 20 {
		id := "s" + string(rune('a'+i))
		ids = append(ids, id)
		h.put(id, kvstore.Spec{Workflow: "wf", Every: "1s"})
	}
	testwait.Eventually(t, 10*time.Second, "the 64 shards split between a and b", func() bool { return a.LeasesHeld() > 0 && b.LeasesHeld() > 0 && a.LeasesHeld()+b.LeasesHeld() == 64 })
	for _, id := range ids {
		h.waitFires(id, 10*time.Second, atLeast(2))
	}
	a.Stop(context.Background())
	testwait.Eventually(t, 10*time.Second, "b holding all 64 shards", func() bool { return b.LeasesHeld() == 64 })
	for _, id := range ids {
		n := len(h.of(id))
		fires := h.waitFires(id, 10*time.Second, atLeast(n+2))
		checkCadence(t, fires, time.Second)
	}
	byB := 0
	for _, f := range h.of(ids[0]) {
		if f.meta.Instance == "b" {
			byB++
		}
	}
	if byB == 0 {
		t.Fatal("b never fired the schedule after a left")
	}
}

// TestShardsMoveWithoutWaitingForARound: leases move when an instance
// joins or stops, not at the next lease round. The engines' clocks are
// fakes that never advance, so no round ever comes: only the watch of the
// leases bucket can make a join split the shards and a stop hand them
// over. Before it, a stopped instance's shards waited up to a third of the
// lease TTL for the others' next round (3.3 s by default), the gap in fires
// of every rolling restart.
func TestShardsMoveWithoutWaitingForARound(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ca, _ := clock.NewFake(time.Now())
	cb, _ := clock.NewFake(time.Now())
	a := h.engine(fires.Config{Instance: "a", LeaseTTL: 30 * time.Second, Clock: ca})
	testwait.Eventually(t, 10*time.Second, "a, alone, holding the 64 shards", func() bool { return a.LeasesHeld() == 64 })
	b := h.engine(fires.Config{Instance: "b", LeaseTTL: 30 * time.Second, Clock: cb})
	testwait.Eventually(t, 10*time.Second, "the shards split when b joined", func() bool { return a.LeasesHeld() == 32 && b.LeasesHeld() == 32 })
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 10*time.Second, "b holding every shard a handed back", func() bool { return b.LeasesHeld() == 64 })
}

// TestMisfireFireAllCatchesUp: after downtime past the threshold, fire_all
// fires every missed slot, in order, marked catchup.
func TestMisfireFireAllCatchesUp(t *testing.T) {
	t.Parallel()
	h := setup(t)
	first := h.engine(fires.Config{Instance: "first"})
	h.put("all", kvstore.Spec{Workflow: "wf", Every: "1s", Misfire: kvstore.MisfireFireAll, MisfireThreshold: "500ms"})
	h.put("skip", kvstore.Spec{Workflow: "wf", Every: "1s", MisfireThreshold: "500ms"})
	before := h.waitFires("all", 10*time.Second, atLeast(2))
	h.waitFires("skip", 10*time.Second, atLeast(2))
	first.Stop(context.Background())
	last := before[len(before)-1].meta.ScheduledAt
	// The fleet is down for three slots: the next instance's clock reads
	// 3.5 s past the last fire, so it finds them in the past.
	n := len(h.of("all"))
	h.engine(fires.Config{Instance: "second", Clock: clock.Clock{Offset: max(time.Until(last.Add(3500*time.Millisecond)), 0)}})
	fires := h.waitFires("all", 10*time.Second, atLeast(n+4))
	checkCadence(t, fires, time.Second)
	catchup := 0
	for _, f := range fires {
		if f.meta.Reason == kvstore.ReasonCatchup {
			catchup++
		}
	}
	if catchup < 2 {
		t.Fatalf("%d catch-up fires, want the missed slots", catchup)
	}
	// skip records the missed slots instead of firing them.
	testwait.Eventually(t, 10*time.Second, "a missed slot of skip recorded as a misfire", func() bool {
		ticks, err := h.store.History(context.Background(), "skip")
		if err != nil {
			return false
		}
		for _, tk := range ticks {
			if tk.Status == kvstore.TickMissed && strings.HasPrefix(tk.Reason, "misfire") {
				return true
			}
		}
		return false
	})
}

// TestOverlapSkipUntilCompletion: with overlap skip, slots due while the
// previous fire has not reported completion are skipped; a completion
// report (or the timeout) frees the schedule.
func TestOverlapSkipUntilCompletion(t *testing.T) {
	t.Parallel()
	h := setup(t)
	h.engine(fires.Config{})
	h.put("ov", kvstore.Spec{Workflow: "wf", Every: "1s", Overlap: kvstore.OverlapSkip, CompletionTimeout: "1h"})
	first := h.waitFires("ov", 10*time.Second, atLeast(1))[0]
	// No report yet: the next slots are skipped.
	testwait.Eventually(t, 10*time.Second, "a slot of ov skipped while the first runs", func() bool {
		ticks, _ := h.store.History(context.Background(), "ov")
		for _, tk := range ticks {
			if tk.Status == kvstore.TickSkipped && strings.Contains(tk.Reason, "still running") {
				return true
			}
		}
		return false
	})
	if n := len(h.of("ov")); n != 1 {
		t.Fatalf("%d fires while the first runs, want 1", n)
	}
	data, _ := json.Marshal(kvstore.DoneReport{SlotID: first.meta.SlotID, Outcome: kvstore.OutcomeCompleted, Worker: "test"})
	if err := h.js.Conn().Publish("sched.done.ov", data); err != nil {
		t.Fatal(err)
	}
	h.waitFires("ov", 10*time.Second, atLeast(2))
	tick := h.waitTick(first.meta.SlotID)
	testwait.Eventually(t, 5*time.Second, "the first slot of ov completed", func() bool {
		tick, _ = h.store.SlotEntry(context.Background(), first.meta.SlotID)
		return tick.Status == kvstore.TickCompleted
	})
}

// TestOperatorControls: pause and resume, trigger, skip and backfill.
func TestOperatorControls(t *testing.T) {
	t.Parallel()
	h := setup(t)
	h.engine(fires.Config{})
	ctx := context.Background()
	c := control.Control{Store: h.store}
	h.put("op", kvstore.Spec{Workflow: "wf", Every: "1s"})
	h.waitFires("op", 10*time.Second, atLeast(1))

	// Trigger: an extra slot with its own id and reason.
	slotID, err := c.Trigger(ctx, "op", "by hand")
	if err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 10*time.Second, "the triggered slot of op fired", func() bool {
		for _, f := range h.of("op") {
			if f.meta.SlotID == slotID && f.meta.Reason == kvstore.ReasonTrigger && f.meta.Note == "by hand" {
				return true
			}
		}
		return false
	})

	// Pause: no regular fires; resume: fires again, the paused slots are
	// recorded as skipped. A witness schedule on the same engine shows that
	// two slots' time passed while op was paused.
	h.put("witness", kvstore.Spec{Workflow: "wf", Every: "1s"})
	h.waitFires("witness", 10*time.Second, atLeast(1))
	if _, err := c.Pause(ctx, "op", "maintenance", time.Time{}); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	h.waitFires("witness", 10*time.Second, func(fs []fireMsg) bool {
		return len(fs) > 0 && !fs[len(fs)-1].meta.ScheduledAt.Before(paused.Add(2*time.Second))
	})
	resumed := time.Now() // before the resume: the slots before it are all skipped
	if _, err := c.Resume(ctx, "op"); err != nil {
		t.Fatal(err)
	}
	h.waitFires("op", 10*time.Second, func(fs []fireMsg) bool {
		return len(fs) > 0 && fs[len(fs)-1].meta.ScheduledAt.After(resumed)
	})
	testwait.Eventually(t, 5*time.Second, "the paused slots of op recorded as skipped", func() bool {
		ticks, _ := h.store.History(ctx, "op")
		for _, tk := range ticks {
			if tk.Status == kvstore.TickSkipped && tk.Reason == "paused" {
				return true
			}
		}
		return false
	})
	// A slot due within a second of the pause may have been claimed before
	// the engine saw it; none after.
	for _, f := range h.of("op") {
		if at := f.meta.ScheduledAt; at.After(paused.Add(time.Second)) && at.Before(resumed) {
			t.Fatalf("slot %v fired while paused (paused %v, resumed %v)", at, paused, resumed)
		}
	}

	// Backfill three past slots, marked backfill.
	from := time.Now().Add(-time.Hour).Truncate(time.Second)
	if _, err := c.Backfill(ctx, "op", from, from.Add(2*time.Second), 50, "replay"); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 10*time.Second, "three backfilled slots of op fired", func() bool {
		k := 0
		for _, f := range h.of("op") {
			if f.meta.Reason == kvstore.ReasonBackfill {
				k++
			}
		}
		return k == 3
	})

	// Skip the next two regular slots.
	if _, err := c.Skip(ctx, "op", 2); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 10*time.Second, "two slots of op skipped by skip-next", func() bool {
		ticks, _ := h.store.History(ctx, "op")
		k := 0
		for _, tk := range ticks {
			if tk.Status == kvstore.TickSkipped && strings.Contains(tk.Reason, "skip-next") {
				k++
			}
		}
		return k == 2
	})
	// Controls refuse what makes no sense.
	if _, err := c.Resume(ctx, "op"); err == nil {
		t.Fatal("resume of a running schedule accepted")
	}
	if _, err := c.Backfill(ctx, "op", from, from.Add(time.Hour*2), 10, ""); err == nil {
		t.Fatal("backfill into the future accepted")
	}
}
