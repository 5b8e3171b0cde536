package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRunSmall runs every scenario at a small size on an embedded server
// and checks what every run must show whatever the machine's speed: every
// slot and timer delivered exactly once, rates and ratios measured, and a
// table and JSON that carry them. Speed itself is never asserted here.
// With Audit, the steady count runs again with the audit duties on,
// labelled (in this run rather than one of its own: a run's fixed waits,
// its baseline and its plain steady row cost ~10 s). The native scenario
// (the server's own schedules) and the rows set beside them run in
// TestContendSmall, quiet and contended, rather than here as well (~14 s
// of fixed waits).
func TestRunSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: every bench scenario but native against a real server, ~70 s (./test.sh and CI run it)")
	}
	var progress bytes.Buffer
	logs := t.TempDir()
	rep, err := Run(context.Background(), Config{
		DataDir: t.TempDir(), Duration: 2 * time.Second, BaselinePairs: 2000,
		Only: []string{"steady", "herd", "scale", "timers", "fleet", "restart"}, Steady: []int{200}, Herd: 500, Scale: 2000, Timers: 500, TimerSpread: 2 * time.Second, Fleet: 200, Restart: 200,
		Audit: true, Progress: &progress, LogDir: logs,
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(logs, "nats-server.log")); err != nil || !bytes.Contains(b, []byte("Starting nats-server")) {
		t.Errorf("--log-dir: the embedded server's log holds %q (%v), want its start-up notices", b, err)
	}
	if rep.BaselinePairsPerSec <= 0 {
		t.Fatalf("baseline rate %v", rep.BaselinePairsPerSec)
	}
	seen := map[string]int{}
	var steady []string
	for _, r := range rep.Results {
		seen[r.Scenario]++
		if r.Scenario == "steady" {
			steady = append(steady, r.Label)
		}
		if r.Duplicates != 0 || r.Gaps != 0 {
			t.Errorf("%s %s: %d duplicates, %d gaps", r.Scenario, r.Label, r.Duplicates, r.Gaps)
		}
		switch r.Scenario {
		case "steady", "fleet", "herd", "timers", "restart":
			if r.PerSec <= 0 || r.Ratio <= 0 || r.P99Ms <= 0 {
				t.Errorf("%s %s: rate %v ratio %v p99 %v: not measured", r.Scenario, r.Label, r.PerSec, r.Ratio, r.P99Ms)
			}
			if r.Scenario == "steady" || r.Scenario == "fleet" {
				// Each measured second's worst lateness, the run's
				// maximum among them.
				if len(r.MaxMsBySecond) != 2 || max(r.MaxMsBySecond[0], r.MaxMsBySecond[1]) != r.MaxMs {
					t.Errorf("%s %s: worst by second %v, max %v: want 2 seconds, the greater the max", r.Scenario, r.Label, r.MaxMsBySecond, r.MaxMs)
				}
				if len(r.P99MsBySecond) != 2 || r.P99MsBySecond[0] <= 0 || r.P99MsBySecond[0] > r.MaxMsBySecond[0] || r.P99MsBySecond[1] > r.MaxMsBySecond[1] {
					t.Errorf("%s %s: p99 by second %v, worst %v: want 2 seconds, each p99 measured and at most its worst", r.Scenario, r.Label, r.P99MsBySecond, r.MaxMsBySecond)
				}
			}
		case "scale":
			if r.Seconds <= 0 || r.FirstFireSec <= 0 || r.AllDueSec < r.FirstFireSec || r.RSSMiB <= 0 {
				t.Errorf("scale: index %vs first due fire %vs all due %vs RSS %v MiB: not measured", r.Seconds, r.FirstFireSec, r.AllDueSec, r.RSSMiB)
			}
		}
	}
	if len(steady) != 2 || steady[0] != "200 schedules x 1/s" || steady[1] != "200 schedules x 1/s, audited" {
		t.Errorf("steady results %q, want the plain run and the audited one", steady)
	}
	want := map[string]int{"baseline": 3, "steady": 2, "herd": 1, "native": 0, "floor": 0, "scale": 1, "timers": 1, "fleet": 3, "restart": 1}
	for k, n := range want {
		if seen[k] != n {
			t.Errorf("%d %s results, want %d", seen[k], k, n)
		}
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"SCENARIO", "x BASE", "steady", "fleet", "200 schedules x 1/s", "200 schedules x 1/s, audited", "herd"} {
		if !strings.Contains(table.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, table.String())
		}
	}
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil || len(back.Results) != len(rep.Results) {
		t.Fatalf("JSON round trip: %v, %d results", err, len(back.Results))
	}
	if !strings.Contains(progress.String(), "steady:") {
		t.Errorf("no progress line for steady in %q", progress.String())
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Only: []string{"stedy"}}, `scenario "stedy": unknown`},
		{Config{Steady: []int{100, 0}}, "steady count 0"},
		{Config{Herd: -1}, "herd count -1"},
		{Config{Duration: -time.Second}, "duration -1s"},
		{Config{Workers: -2}, "workers -2"},
		{Config{Rounds: -1}, "rounds -1"},
		{Config{Contend: -0.5}, "contend -0.5: must be a number of cores"},
		{Config{Contend: math.NaN()}, "contend NaN"},
		{Config{Contend: 2000}, "contend 2000"},
		{Config{LogDir: "/nonexistent/jetsched-logs"}, `log dir "/nonexistent/jetsched-logs": must be an existing directory`},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate(%+v) = %v, want an error with %q", tt.cfg, err, tt.want)
		}
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("zero Config: %v", err)
	}
	if err := (Config{LogDir: t.TempDir()}).Validate(); err != nil {
		t.Errorf("an existing log dir: %v", err)
	}
}

func TestOnTimeAgain(t *testing.T) {
	for _, tc := range []struct {
		by   []float64
		want string
	}{
		{nil, "unmeasured"},
		{[]float64{5, 8, 9}, "0 s"},
		{[]float64{900, 300, 40, 20}, "2 s"},
		{[]float64{900, 30, 140, 20, 10}, "3 s"},
		{[]float64{10, 20, 150}, "never"},
	} {
		if got := onTimeAgain(tc.by, 100); got != tc.want {
			t.Errorf("onTimeAgain(%v) = %q, want %q", tc.by, got, tc.want)
		}
	}
}

// A contended row is back on time by each second's p99 (the lateness a
// steady rate is held at); one slot late by a collection's pause in a
// second of thousands moves only the stricter rule of the worst.
func TestBackOnTimeByTheSecondsP99(t *testing.T) {
	second := func(n int, late time.Duration, outlier time.Duration) []time.Duration {
		d := make([]time.Duration, n)
		for i := range d {
			d[i] = late
		}
		if outlier > 0 {
			d[n/2] = outlier
		}
		return d
	}
	rc := &receiver{
		after: []time.Duration{900 * time.Millisecond, 20 * time.Millisecond, 60 * time.Millisecond},
		afterLate: [][]time.Duration{
			second(1000, 700*time.Millisecond, 900*time.Millisecond), // still behind
			second(1000, 8*time.Millisecond, 20*time.Millisecond),
			second(1000, 9*time.Millisecond, 60*time.Millisecond), // one slot held by a pause
		},
	}
	var res Result
	rc.latency(&res)
	if want := []float64{700, 8, 9}; !slices.Equal(res.AfterP99MsBySecond, want) {
		t.Errorf("p99 by second %v, want %v", res.AfterP99MsBySecond, want)
	}
	if want := []float64{900, 20, 60}; !slices.Equal(res.AfterMsBySecond, want) {
		t.Errorf("worst by second %v, want %v", res.AfterMsBySecond, want)
	}
	if res.BackOnTime != "1 s" || res.BackOnTimeWorst != "never" {
		t.Errorf("back on time %q (worst %q), want \"1 s\" (\"never\")", res.BackOnTime, res.BackOnTimeWorst)
	}
}
