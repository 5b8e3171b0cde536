package bench

import (
	"reflect"
	"testing"
)

// Rows are paired by peer and round only: the server's row of another
// round, or of another count, is never the one a row is measured against,
// and a row without its counterpart is left out. The floor's row pairs
// with the same @every row as jetsched's, told apart by its scenario.
func TestVersusPairsByPeerAndRound(t *testing.T) {
	rs := []Result{
		{Scenario: "baseline", PerSec: 90_000},
		{Scenario: "steady", Round: 1, Peer: "steady 1000", PerSec: 1000, CPUPer1k: 0.3, P99Ms: 2},
		{Scenario: "steady", Round: 1, Peer: "steady 50000", PerSec: 40_000, CPUPer1k: 0.1, P99Ms: 900}, // native skips it
		{Scenario: "steady", Round: 1, Label: "1000 schedules x 1/s, audited", PerSec: 1000},            // no peer
		{Scenario: "herd", Round: 1, Peer: "herd 100", PerSec: 80, CPUPer1k: 0.03, P99Ms: 1300},
		{Scenario: "native", Round: 1, Peer: "herd 100", PerSec: 100, CPUPer1k: 0.02, P99Ms: 1000},
		{Scenario: "native", Round: 1, Label: "100/s for 10s (NATS server @at)", PerSec: 100}, // no peer
		{Scenario: "native", Round: 1, Peer: "steady 1000", PerSec: 1000, CPUPer1k: 0.015, P99Ms: 14},
		{Scenario: "floor", Round: 1, Peer: "steady 1000", PerSec: 1000, CPUPer1k: 0.03, P99Ms: 5},
		{Scenario: "herd", Round: 2, Peer: "herd 100", PerSec: 120, CPUPer1k: 0.025, P99Ms: 1100},
		{Scenario: "native", Round: 2, Peer: "herd 100", PerSec: 100, CPUPer1k: 0.02, P99Ms: 1200},
		{Scenario: "herd", Round: 3, Peer: "herd 100", PerSec: 90, CPUPer1k: 0.02, P99Ms: 1000}, // native failed in round 3
	}
	got := versus(rs)
	want := []Versus{
		{Round: 1, Peer: "steady 1000", Scenario: "steady", Rate: 1, CPU: 0.3 / 0.015, P99Ms: 2, PeerP99Ms: 14},
		{Round: 1, Peer: "herd 100", Scenario: "herd", Rate: 0.8, CPU: 0.03 / 0.02, P99Ms: 1300, PeerP99Ms: 1000},
		{Round: 1, Peer: "steady 1000", Scenario: "floor", Rate: 1, CPU: 0.03 / 0.015, P99Ms: 5, PeerP99Ms: 14},
		{Round: 2, Peer: "herd 100", Scenario: "herd", Rate: 1.2, CPU: 0.025 / 0.02, P99Ms: 1100, PeerP99Ms: 1200},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("versus:\n got %+v\nwant %+v", got, want)
	}
	med := Medians(got)
	if len(med) != 1 || med[0].Peer != "herd 100" || med[0].Rate != 1.0 || med[0].P99Ms != 1200 || med[0].PeerP99Ms != 1100 {
		t.Fatalf("medians %+v: want herd 100 alone (steady 1000 has one round), rate 1.0, p99 1200 against 1100", med)
	}
}

// The floor's comparisons have medians of their own, never mixed with
// jetsched's at the same peer.
func TestMediansKeepTheFloorApart(t *testing.T) {
	var vs []Versus
	for round, cpu := range []float64{4, 6, 5} {
		vs = append(vs, Versus{Round: round + 1, Peer: "steady 1000", Scenario: "steady", CPU: cpu},
			Versus{Round: round + 1, Peer: "steady 1000", Scenario: "floor", CPU: cpu / 4})
	}
	got := Medians(vs)
	want := []Versus{{Peer: "steady 1000", Scenario: "steady", CPU: 5}, {Peer: "steady 1000", Scenario: "floor", CPU: 1.25}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("medians:\n got %+v\nwant %+v", got, want)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{3, 1}, 2},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(tc.xs); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}
