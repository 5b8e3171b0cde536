package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/testwait"
)

// TestBenchFleetRunsSchedulerProcesses runs `scheduler bench --scenario
// fleet` from the built binary: its fleet is 1, 2 and 3 `scheduler run`
// processes on the bench's embedded server, every slot received once.
func TestBenchFleetRunsSchedulerProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three fleets of scheduler processes, ~40 s (./test.sh and CI run it)")
	}
	bin := schedulerBinary(t)
	rep, out := runBench(t, bin, "--scenario", "fleet", "--fleet", "300", "--duration", "2s", "--baseline-pairs", "2000")
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
	// Only this bench's children: other packages' tests run scheduler
	// processes of their own at the same time (go test -p 2).
	if n, _ := exec.Command("pgrep", "-f", "^"+regexp.QuoteMeta(bin)+" .*name-prefix bench").Output(); len(n) > 0 {
		t.Fatalf("scheduler processes left running: %s", n)
	}
}

// benchResult is what these tests read of a bench report's row.
type benchResult struct {
	Scenario   string  `json:"scenario"`
	Instances  int     `json:"instances"`
	PerSec     float64 `json:"per_sec"`
	Seconds    float64 `json:"seconds"`
	RSSMiB     float64 `json:"rss_mib"`
	Duplicates int     `json:"duplicates"`
	Gaps       int     `json:"gaps"`
	Note       string  `json:"note"`
}

// runBench runs `scheduler bench --json` with args and decodes its report.
func runBench(t *testing.T, bin string, args ...string) (rep struct{ Results []benchResult }, out []byte) {
	t.Helper()
	out, err := exec.Command(bin, append(append([]string{"bench"}, args...), "--json")...).Output()
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("bench --json: %v\n%s", err, out)
	}
	return rep, out
}

// TestBenchScaleMeasuresSchedulerProcess runs `scheduler bench --scenario
// scale` from the built binary: its scheduler is a `scheduler run`
// process, whose own memory is the RSS reported, every canary fired.
func TestBenchScaleMeasuresSchedulerProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a scale run with a scheduler process, ~15 s (./test.sh and CI run it)")
	}
	bin := schedulerBinary(t)
	rep, out := runBench(t, bin, "--scenario", "scale", "--scale", "3000", "--baseline-pairs", "2000")
	seen := false
	for _, r := range rep.Results {
		if r.Scenario != "scale" {
			continue
		}
		seen = true
		if r.Seconds <= 0 || r.RSSMiB <= 0 || r.Gaps != 0 || !strings.Contains(r.Note, "scheduler process alone") {
			t.Errorf("scale: %+v, want an index time, the scheduler process's RSS, 0 gaps", r)
		}
	}
	if !seen {
		t.Fatalf("no scale result\n%s", out)
	}
}

// TestBenchChildrenDieWithIt kills a running `scheduler bench` with
// SIGKILL: its `scheduler run` children go with it (parent-death signal)
// instead of firing on into the next run's buckets.
func TestBenchChildrenDieWithIt(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a fleet bench killed mid-run (./test.sh and CI run it)")
	}
	bin := schedulerBinary(t)
	cmd := exec.Command(bin, "bench", "--scenario", "fleet", "--fleet", "100", "--duration", "30s", "--baseline-pairs", "1000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	parent := strconv.Itoa(cmd.Process.Pid)
	children := func() []string {
		out, _ := exec.Command("pgrep", "-P", parent, "-f", "name-prefix bench").Output()
		return strings.Fields(string(out))
	}
	var kids []string
	err := testwait.Until(2*time.Minute, "the bench's first scheduler process", func() error {
		if kids = children(); len(kids) == 0 {
			return errors.New("no child yet")
		}
		return nil
	})
	if err != nil {
		_ = cmd.Process.Kill()
		<-done
		t.Fatal(err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-done
	// The positive signal: each child's /proc entry goes (or turns zombie).
	err = testwait.Until(30*time.Second, "the killed bench's scheduler processes gone", func() error {
		for _, pid := range kids {
			if alive(pid) {
				return fmt.Errorf("scheduler process %s still running", pid)
			}
		}
		return nil
	})
	if err != nil {
		for _, pid := range kids {
			_ = exec.Command("kill", "-9", pid).Run()
		}
		t.Fatal(err)
	}
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// TestBenchContendRunsACoTenantProcess runs `scheduler bench --contend` from
// the built binary: its co-tenant is a `scheduler bench --burn` child
// process, whose CPU is reported apart from the rows' (and is not zero),
// and which is gone when the bench ends.
func TestBenchContendRunsACoTenantProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: steady quiet and contended, ~20 s (./test.sh and CI run it)")
	}
	bin := schedulerBinary(t)
	out, err := exec.Command(bin, "bench", "--scenario", "steady", "--steady", "100", "--duration", "1s",
		"--baseline-pairs", "1000", "--contend", "0.5", "--json").Output()
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	var rep struct {
		Contention struct {
			Cores  float64 `json:"cores"`
			Mode   string  `json:"mode"`
			CPUSec float64 `json:"cpu_sec"`
		} `json:"contention"`
		Capacity []struct {
			System       string  `json:"system"`
			ContendCores float64 `json:"contend_cores"`
		} `json:"capacity"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("bench --json: %v\n%s", err, out)
	}
	if c := rep.Contention; c.Cores != 0.5 || c.Mode != "process" || c.CPUSec <= 0 {
		t.Errorf("contention %+v: want 0.5 cores in a process that used some CPU\n%s", c, out)
	}
	if len(rep.Capacity) != 2 || rep.Capacity[1].ContendCores != 0.5 {
		t.Errorf("capacity %+v: want jetsched quiet and contended", rep.Capacity)
	}
	if n, _ := exec.Command("pgrep", "-f", "^"+regexp.QuoteMeta(bin)+" bench --burn").Output(); len(n) > 0 {
		t.Fatalf("co-tenant processes left running: %s", n)
	}
}
