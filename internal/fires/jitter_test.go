package fires

import (
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestDecideJitter: a jittered slot is due at its time plus the offset its
// slot id fixes, the same for every caller; the misfire threshold counts
// from the latest it may be due; and it never goes the window's way.
func TestDecideJitter(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	const jitter = 10 * time.Second
	slot := t0.Add(time.Minute)
	off := compile.JitterOffset("s", slot, jitter)
	in := func(now time.Time) Input {
		return Input{ID: "s", Now: now, Plan: "every 1m", Schedule: cronx.Interval{Every: time.Minute},
			Policy: compile.Policy{Jitter: jitter}, State: &kvstore.State{Next: slot, Plan: "every 1m"}, MisfireThreshold: time.Minute}
	}
	if d := Decide(in(slot)); off > 0 && (d.Action != ActWait || !d.Until.Equal(slot.Add(off))) {
		t.Fatalf("at the slot's time: %v until %v, want a wait until %v (offset %v)", d.Action, d.Until, slot.Add(off), off)
	}
	if due, ok := Due(in(slot)); !ok || !due.Equal(slot.Add(off)) {
		t.Fatalf("Due = %v, %v; want %v", due, ok, slot.Add(off))
	}
	d, plain := DecidePlain(in(slot.Add(off)))
	if d.Action != ActClaim || !d.Slot.Equal(slot) || plain {
		t.Fatalf("at its jittered instant: %+v, plain %v; want a claim of the slot itself, not plain", d, plain)
	}
	// Late: the threshold (1m) counts from the latest instant (slot+10s).
	if d := Decide(in(slot.Add(jitter + time.Minute))); d.Action != ActClaim {
		t.Fatalf("1m after the jitter's end: %v, want still a claim", d.Action)
	}
	if d := Decide(in(slot.Add(jitter + time.Minute + time.Second))); d.Action != ActMisfire {
		t.Fatalf("past threshold and jitter: %v, want a misfire", d.Action)
	}
	// No jitter: due at the slot, as before.
	plainIn := in(slot)
	plainIn.Policy = compile.Policy{}
	if d := Decide(plainIn); d.Action != ActClaim {
		t.Fatalf("without a jitter at the slot's time: %v, want a claim", d.Action)
	}
}
