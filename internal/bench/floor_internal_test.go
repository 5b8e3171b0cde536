package bench

import (
	"context"
	"github.com/jetsched/jetsched/internal/fires"
	"slices"
	"testing"
	"time"
)

// The floor sends as the steady scenario's schedules fall due: n slots a
// second, the i-th at i/n of it, each at the end of its quantum (never
// before its time), a quantum's slots together.
func TestFloorSchedule(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	f := &floorSender{n: 1000, quantum: 4 * time.Millisecond}
	if got, want := f.slotAt(start, 1003), start.Add(time.Second+3*time.Millisecond); !got.Equal(want) {
		t.Errorf("slot 1003 at %v, want the 4th schedule's slot in the second second, %v", got, want)
	}
	// Slot 1 (1 ms) is sent at 4 ms with slots 2-4: slots 1 to 4 go
	// together, slot 5 waits for 8 ms.
	due := fires.QuantumEnd(f.slotAt(start, 1), f.quantum)
	if want := start.Add(4 * time.Millisecond); !due.Equal(want) {
		t.Errorf("slot 1 sent at %v, want %v", due, want)
	}
	end := start.Add(2 * time.Second)
	if got := f.batch(start, 1, due, end); got != 5 {
		t.Errorf("batch from slot 1 ends at %d, want 5 (slots 1-4)", got)
	}
	// Late: everything due by now goes at once, nothing past end.
	if got := f.batch(start, 5, start.Add(time.Hour), end); got != 2000 {
		t.Errorf("a late batch ends at %d, want 2000 (the slots before end)", got)
	}
	// Without a quantum, each slot at its own time.
	f.quantum = 0
	if due := fires.QuantumEnd(f.slotAt(start, 7), 0); !due.Equal(start.Add(7*time.Millisecond)) || f.batch(start, 7, due, end) != 8 {
		t.Errorf("without a quantum slot 7 is sent at %v in a batch to %d, want alone at 7 ms", due, f.batch(start, 7, due, end))
	}
	var got []time.Duration
	for _, at := range []time.Duration{0, time.Millisecond, 4 * time.Millisecond, 4*time.Millisecond + 1} {
		got = append(got, fires.QuantumEnd(start.Add(at), 4*time.Millisecond).Sub(start))
	}
	if want := []time.Duration{0, 4 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond}; !slices.Equal(got, want) {
		t.Errorf("quantum ends %v, want %v", got, want)
	}
}

// The floor runs on its own only when native (which runs it beside each
// @every row) is not chosen.
func TestFloorChosen(t *testing.T) {
	for _, tc := range []struct {
		only []string
		want bool
	}{
		{[]string{"floor"}, true},
		{[]string{"steady", "floor"}, true},
		{[]string{"native", "floor"}, false},
		{[]string{"steady"}, false},
		{Scenarios, false},
	} {
		if got := chosen(tc.only, "floor"); got != tc.want {
			t.Errorf("chosen(%q, floor) = %v, want %v", tc.only, got, tc.want)
		}
	}
	if !chosen(Scenarios, "native") || chosen([]string{"herd"}, "native") {
		t.Error("native: chosen when named only")
	}
}

// TestFloorAlone runs the floor scenario on its own, in 4 ms quanta, and
// checks what every such run must show whatever the machine's speed:
// one row at the steady count @every is measured at (not at the larger
// one), every slot received once as a fire the steady rows' receiver
// reads, its rate and CPU measured, and no comparison without the
// native scenario.
func TestFloorAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the floor against a real server, ~5 s")
	}
	rep, err := Run(context.Background(), Config{
		DataDir: t.TempDir(), Duration: time.Second, BaselinePairs: 500, Steady: []int{100, 20_000},
		Only: []string{"floor"}, FireQuantum: 4 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	var rows []Result
	for _, r := range rep.Results {
		if r.Scenario == "floor" {
			rows = append(rows, r)
		}
	}
	if len(rows) != 1 {
		t.Fatalf("floor rows %+v, want one (100; 20,000 is above what @every measures)", rows)
	}
	r := rows[0]
	if r.Peer != "steady 100" || r.Label != "100 schedules x 1/s (publish floor: plain publisher, 4ms quanta)" {
		t.Errorf("floor row %q, peer %q", r.Label, r.Peer)
	}
	if r.Gaps != 0 || r.Duplicates != 0 || r.Note != "" || r.PerSec <= 0 || r.CPUPer1k <= 0 || r.P99Ms <= 0 {
		t.Errorf("floor row %+v: want every slot once, rate, CPU and lateness measured", r)
	}
	if len(rep.Versus) != 0 {
		t.Errorf("versus %+v without the native scenario", rep.Versus)
	}
}
