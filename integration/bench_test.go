package integration

import (
	"encoding/json"
	"os/exec"
	"testing"
)

// TestBenchFleetRunsSchedulerProcesses runs `scheduler bench --scenario
// fleet` from the built binary: its fleet is 1, 2 and 3 `scheduler run`
// processes on the bench's embedded server, every slot received once.
func TestBenchFleetRunsSchedulerProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three fleets of scheduler processes, ~40 s (./test.sh and CI run it)")
	}
	bin := schedulerBinary(t)
	out, err := exec.Command(bin, "bench", "--scenario", "fleet", "--fleet", "300", "--duration", "2s",
		"--baseline-pairs", "2000", "--json").Output()
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	var rep struct {
		Results []struct {
			Scenario   string  `json:"scenario"`
			Instances  int     `json:"instances"`
			PerSec     float64 `json:"per_sec"`
			Duplicates int     `json:"duplicates"`
			Gaps       int     `json:"gaps"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("bench --json: %v\n%s", err, out)
	}
	seen := 0
	for _, r := range rep.Results {
		if r.Scenario != "fleet" {
			continue
		}
		seen++
		if r.Instances != seen || r.PerSec < 250 || r.Duplicates != 0 || r.Gaps != 0 {
			t.Errorf("fleet of %d: %+v, want instances %d, ~300 fires/s, 0 duplicates, 0 gaps", seen, r, seen)
		}
	}
	if seen != 3 {
		t.Fatalf("%d fleet results, want 3\n%s", seen, out)
	}
	if n, _ := exec.Command("pgrep", "-f", "name-prefix bench").Output(); len(n) > 0 {
		t.Fatalf("scheduler processes left running: %s", n)
	}
}
