package fires_test

import (
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
