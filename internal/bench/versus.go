package bench

import (
	"cmp"
	"slices"
	"strconv"
)

// Versus is one of jetsched's rows beside the row of the NATS server's own
// schedules it is measured against, in the same round of the same run: the
// comparison issue 26's targets are stated in.
type Versus struct {
	// Round is the rows' round (0: the run had one, or this is the median
	// of every round: see Medians).
	Round int `json:"round,omitempty"`
	// Peer is the rows' Result.Peer ("herd 100000", "steady 10000").
	Peer string `json:"peer"`
	// Scenario is the scenario of the row set beside the server's:
	// jetsched's ("steady", "herd"), or "floor", the plain publisher that
	// is the least any client-side scheduler pays (see floorRun).
	Scenario string `json:"scenario"`
	// ContendCores is the co-tenant's cores while both rows were measured
	// (0: quiet); rows pair only with rows of the same.
	ContendCores float64 `json:"contend_cores,omitempty"`
	// Rate is jetsched's rate over the server's: above 1, faster (the
	// herd's drain; a steady run holds its count either way).
	Rate float64 `json:"rate_ratio,omitempty"`
	// CPU is jetsched's CPU per 1,000 fires over the server's: below 1,
	// cheaper.
	CPU float64 `json:"cpu_ratio,omitempty"`
	// P99Ms and PeerP99Ms are the two rows' p99 lateness.
	P99Ms     float64 `json:"p99_ms"`
	PeerP99Ms float64 `json:"peer_p99_ms"`
}

// herdPeer and steadyPeer are the Peer of a herd of n and of n schedules
// every second.
func herdPeer(n int) string   { return "herd " + strconv.Itoa(n) }
func steadyPeer(n int) string { return "steady " + strconv.Itoa(n) }

// versus pairs each of jetsched's rows that has a Peer with the server's
// row (scenario native) of the same Peer and round, in the order of
// jetsched's rows. A row without its counterpart (native not run, or a
// steady count above what native measures) is left out.
func versus(rs []Result) []Versus {
	type key struct {
		round int
		peer  string
		cores float64
	}
	theirs := map[key]Result{}
	for _, x := range rs {
		if x.Scenario == "native" && x.Peer != "" {
			theirs[key{x.Round, x.Peer, x.ContendCores}] = x
		}
	}
	var out []Versus
	for _, x := range rs {
		if x.Scenario == "native" || x.Peer == "" {
			continue
		}
		y, ok := theirs[key{x.Round, x.Peer, x.ContendCores}]
		if !ok {
			continue
		}
		v := Versus{Round: x.Round, Peer: x.Peer, Scenario: x.Scenario, ContendCores: x.ContendCores, P99Ms: x.P99Ms, PeerP99Ms: y.P99Ms}
		if y.PerSec > 0 {
			v.Rate = x.PerSec / y.PerSec
		}
		if y.CPUPer1k > 0 {
			v.CPU = x.CPUPer1k / y.CPUPer1k
		}
		out = append(out, v)
	}
	return out
}

// Medians is the median of each peer's comparisons over the rounds (each
// field on its own; quiet and contended apart, jetsched's rows and the
// floor's apart), in the order the peers first come; a peer measured in
// one round only has none.
func Medians(vs []Versus) []Versus {
	type key struct {
		peer, scenario string
		cores          float64
	}
	var peers []key
	by := map[key][]Versus{}
	for _, v := range vs {
		k := key{v.Peer, v.Scenario, v.ContendCores}
		if _, ok := by[k]; !ok {
			peers = append(peers, k)
		}
		by[k] = append(by[k], v)
	}
	var out []Versus
	for _, p := range peers {
		if len(by[p]) < 2 {
			continue
		}
		field := func(f func(Versus) float64) float64 {
			xs := make([]float64, 0, len(by[p]))
			for _, v := range by[p] {
				xs = append(xs, f(v))
			}
			return median(xs)
		}
		out = append(out, Versus{Peer: p.peer, Scenario: p.scenario, ContendCores: p.cores,
			Rate:      field(func(v Versus) float64 { return v.Rate }),
			CPU:       field(func(v Versus) float64 { return v.CPU }),
			P99Ms:     field(func(v Versus) float64 { return v.P99Ms }),
			PeerP99Ms: field(func(v Versus) float64 { return v.PeerP99Ms })})
	}
	return out
}

// median is the middle of xs (the mean of the two middle ones for an even
// count); xs is sorted in place.
func median(xs []float64) float64 {
	slices.SortFunc(xs, cmp.Compare[float64])
	n := len(xs)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
