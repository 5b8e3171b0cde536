package bench

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestContendSmall runs steady and native quiet and beside an in-process
// co-tenant (no scheduler binary: goroutines), and checks what every such
// run must show whatever the machine's speed: each row twice, measured,
// the contended one labelled and with its seconds after the co-tenant
// stopped, every slot once, the co-tenant's run time, jetsched's steady
// row beside the server's own schedules' and a capacity for each system
// quiet and contended, in the table and the JSON. It is the run of the
// native scenario (the NATS server's own schedules) TestRunSmall leaves
// out.
func TestContendSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: steady and native (with the floor) twice against a real server, ~35 s")
	}
	rep, err := Run(context.Background(), Config{
		DataDir: t.TempDir(), Duration: 1 * time.Second, BaselinePairs: 1000, Steady: []int{100},
		Herd: 100, Only: []string{"steady", "native", "floor"}, Contend: 0.5,
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Contention; c == nil || c.Cores != 0.5 || c.Mode != "in-process" || c.ActiveSec <= 0 {
		t.Fatalf("contention %+v: want 0.5 cores in-process, run for some time", c)
	}
	contended := 0
	peers := map[string]int{}
	for _, r := range rep.Results {
		if r.Scenario == "baseline" {
			continue
		}
		if r.Duplicates != 0 || r.Gaps != 0 {
			t.Errorf("%s %s: %d duplicates, %d gaps", r.Scenario, r.Label, r.Duplicates, r.Gaps)
		}
		if r.PerSec <= 0 || r.Ratio <= 0 || r.P99Ms <= 0 {
			t.Errorf("%s %s: rate %v ratio %v p99 %v: not measured", r.Scenario, r.Label, r.PerSec, r.Ratio, r.P99Ms)
		}
		peers[r.Scenario+" "+r.Peer]++
		if r.ContendCores == 0 {
			if r.BackOnTime != "" || strings.Contains(r.Label, "co-tenant") {
				t.Errorf("%s %s: a quiet row with %q back on time", r.Scenario, r.Label, r.BackOnTime)
			}
			continue
		}
		contended++
		if r.ContendCores != 0.5 || !strings.HasSuffix(r.Label, ", co-tenant 0.5 cores") {
			t.Errorf("%s %s: contend %v: want 0.5, labelled", r.Scenario, r.Label, r.ContendCores)
		}
		if r.Peer == steadyPeer(100) && (len(r.AfterMsBySecond) != 2 || len(r.AfterP99MsBySecond) != 2 || r.BackOnTime == "" || r.BackOnTimeWorst == "") {
			t.Errorf("%s %s: after %v (p99 %v), back on time %q (worst %q): want 2 seconds after the co-tenant stopped, and when", r.Scenario, r.Label, r.AfterMsBySecond, r.AfterP99MsBySecond, r.BackOnTime, r.BackOnTimeWorst)
		}
	}
	// steady 100; native: herd, 100/s @at, @every 100, the floor at 100.
	if contended != 5 {
		t.Errorf("%d contended rows, want 5", contended)
	}
	// Quiet and contended each: the rows set beside each other carry the
	// same peer, the server's @at row at 100/s none; the floor, chosen
	// beside native, runs once per condition, not twice.
	if want := map[string]int{"steady steady 100": 2, "native herd 100": 2, "native ": 2, "native steady 100": 2, "floor steady 100": 2}; !maps.Equal(peers, want) {
		t.Errorf("rows by scenario and peer %v, want %v", peers, want)
	}
	var systems []string
	for _, c := range rep.Capacity {
		systems = append(systems, c.System+" "+coTenant(c.ContendCores))
		if len(c.Measured) != 1 || c.Measured[0].Count != 100 || c.Measured[0].P99Ms <= 0 {
			t.Errorf("capacity %+v: want the count 100 measured", c)
		}
	}
	want := []string{"jetsched ", "nats-server @every ", "jetsched , co-tenant 0.5 cores", "nats-server @every , co-tenant 0.5 cores"}
	if !slices.Equal(systems, want) {
		t.Errorf("capacities %q, want %q", systems, want)
	}
	if len(rep.Versus) != 4 || rep.Versus[0].ContendCores != 0 || rep.Versus[1].Scenario != "floor" || rep.Versus[1].ContendCores != 0 ||
		rep.Versus[2].ContendCores != 0.5 || rep.Versus[3].Scenario != "floor" || rep.Versus[3].ContendCores != 0.5 {
		t.Errorf("versus %+v: want steady 100 and the floor quiet, then both contended", rep.Versus)
	}
	for _, v := range rep.Versus {
		if v.Peer != "steady 100" || v.Rate <= 0 || v.CPU <= 0 || v.P99Ms <= 0 || v.PeerP99Ms <= 0 || v.Round != 0 {
			t.Errorf("versus %+v: want steady 100, measured", v)
		}
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"co-tenant: 0.5 cores (in-process)", "capacity: the largest steady rate held at p99 under 50 ms",
		"steady 100, co-tenant 0.5 cores", "steady 100, publish floor, co-tenant 0.5 cores", "after the co-tenant stopped", "100 schedules x 1/s (NATS server @every)",
		"against the NATS server's own schedules", "steady 100, publish floor"} {
		if !strings.Contains(table.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, table.String())
		}
	}
}

// TestBurnStops: Burn burns on its own threads until its context ends.
func TestBurnStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Burn(ctx, 1.5)
	}()
	cancel()
	<-done
	Burn(context.Background(), 0) // nothing to burn: returns at once
}

func TestShares(t *testing.T) {
	for _, tc := range []struct {
		cores float64
		want  []float64
	}{
		{0.5, []float64{0.5}},
		{1, []float64{1}},
		{2.25, []float64{1, 1, 0.25}},
		{0, nil},
	} {
		var got []float64
		for s := range shares(tc.cores) {
			got = append(got, s)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("shares(%v) = %v, want %v", tc.cores, got, tc.want)
		}
	}
}

// TestCapacity: the largest count whose median p99 over the rounds is
// under 50 ms with no slot lost, per system and co-tenant.
func TestCapacity(t *testing.T) {
	row := func(scenario string, n int, cores, p99 float64, gaps int) Result {
		return Result{Scenario: scenario, Peer: steadyPeer(n), ContendCores: cores, P99Ms: p99, Gaps: gaps}
	}
	got := capacity([]Result{
		{Scenario: "baseline", P99Ms: 1},
		{Scenario: "steady", Peer: "", P99Ms: 1}, // audited: no peer
		row("steady", 1000, 0, 10, 0), row("steady", 10000, 0, 30, 0), row("steady", 20000, 0, 900, 0),
		row("steady", 1000, 0, 12, 0), row("steady", 10000, 0, 70, 0), row("steady", 20000, 0, 800, 0),
		row("steady", 1000, 0, 11, 0), row("steady", 10000, 0, 40, 0), row("steady", 20000, 0, 700, 0),
		row("native", 1000, 0, 200, 0), row("native", 10000, 0, 30, 0), row("herd", 500, 0, 1, 0),
		row("steady", 1000, 1, 20, 0), row("steady", 10000, 1, 20, 3),
		row("native", 1000, 1, 60, 0),
	})
	want := []struct {
		system  string
		cores   float64
		perSec  int
		atLeast bool
	}{
		{"jetsched", 0, 10000, false},          // median p99 of 10,000: 40 ms
		{"nats-server @every", 0, 10000, true}, // the largest measured held
		{"jetsched", 1, 1000, false},           // 10,000 lost slots
		{"nats-server @every", 1, 0, false},    // none held
	}
	if len(got) != len(want) {
		t.Fatalf("capacity %+v: want %d systems", got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.System != w.system || g.ContendCores != w.cores || g.PerSec != w.perSec || g.AtLeast != w.atLeast {
			t.Errorf("capacity %d: %+v, want %+v", i, g, w)
		}
	}
	if m := got[0].Measured; len(m) != 3 || m[1].P99Ms != 40 || m[2].Held {
		t.Errorf("jetsched measured %+v: want 3 counts, 10,000 at 40 ms, 20,000 not held", m)
	}
}
