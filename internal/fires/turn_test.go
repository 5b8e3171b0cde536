package fires_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestFireQuantumDispatchesAtItsEnd: with a fire quantum, a slot between
// two multiples of it is dispatched at the next multiple (the engine's
// timer is armed for it, not for the slot), never before its time; the
// fire says so in its Sched-Dispatched-At. A slot on a multiple keeps its
// time: nothing is added to it.
func TestFireQuantumDispatchesAtItsEnd(t *testing.T) {
	h := setup(t)
	const q = 50 * time.Millisecond
	f, start := fakeEngine(t, h, fires.Config{FireQuantum: q})
	on := start                                        // a multiple of the quantum
	off := start.Add(time.Second + 7*time.Millisecond) // between two multiples
	end := start.Add(time.Second + q)
	h.put("on", kvstore.Spec{Workflow: "wf", At: &on})
	h.put("off", kvstore.Spec{Workflow: "wf", At: &off})

	armedAt(t, f, on, on) // the slot on a multiple: armed for its time
	f.Set(on)
	got := h.waitFires("on", 10*time.Second, atLeast(1))
	if m := got[0].meta; !m.ScheduledAt.Equal(on) || !m.DispatchedAt.Equal(on) {
		t.Fatalf("fire of the slot on a multiple: scheduled %v, dispatched %v; want both %v", m.ScheduledAt, m.DispatchedAt, on)
	}

	armedAt(t, f, end, end) // the other: armed for the quantum's end, not for its slot
	f.Set(end)
	got = h.waitFires("off", 10*time.Second, atLeast(1))
	if m := got[0].meta; !m.ScheduledAt.Equal(off) || !m.DispatchedAt.Equal(end) {
		t.Fatalf("fire of the slot between multiples: scheduled %v, dispatched %v; want %v, dispatched at the quantum's end %v", m.ScheduledAt, m.DispatchedAt, off, end)
	}
}

// TestQuantumBundlesWindows: with a fire quantum, the plain slots of a
// steady load go onto windows, and the small windows of several shards
// due in the same quantum are claimed in one bundle: every slot fires
// once, in cadence, and each record's claim is a window's, settled by its
// fire's sequence.
func TestQuantumBundlesWindows(t *testing.T) {
	t.Parallel()
	h := setup(t)
	var bundles atomic.Int64
	h.engine(fires.Config{FireQuantum: 20 * time.Millisecond, StepHook: func(s fires.Step) {
		if s == fires.StepWindowBundle {
			bundles.Add(1)
		}
	}})
	var ids []string
	for i := range 40 {
		id := fmt.Sprintf("b%02d", i)
		ids = append(ids, id)
		h.put(id, kvstore.Spec{Workflow: "wf", Every: "1s"})
	}
	for _, id := range ids {
		checkCadence(t, h.waitFires(id, 15*time.Second, atLeast(3)), time.Second)
	}
	if bundles.Load() == 0 {
		t.Fatal("no bundle of windows: 40 schedules due in the same quantum went out shard by shard")
	}
	for _, id := range ids {
		st, _ := h.record(id)
		if c := st.Claim; c == nil || c.Window == "" || !c.Settled() {
			t.Errorf("%s: claim %+v, want a window's, settled by its fire's sequence", id, c)
		}
	}
}
