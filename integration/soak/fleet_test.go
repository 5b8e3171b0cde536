package soak

// The fleet: three `scheduler run` processes, each with a metrics port,
// restarted one at a time (SIGTERM or SIGKILL); every process's life is a
// generation with its own series of samples.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/faulttest"
)

// generation is one process of an instance, from its start to its end.
type generation struct {
	instance string
	n        int // 1 for the first process of the instance
	pid      int
	started  time.Time
	ended    time.Time // zero while it runs
	// end says how it ended: "SIGTERM", "SIGKILL", or "" (it ran to the
	// end of the soak).
	end     string
	samples []sample
}

func (g *generation) String() string { return fmt.Sprintf("%s#%d (pid %d)", g.instance, g.n, g.pid) }

// instance is one scheduler of the fleet, under one --instance name
// across its restarts.
type instance struct {
	name        string
	metricsPort int
	proc        *faulttest.Proc

	mu   sync.Mutex
	gens []*generation
	// down is set while the restarter has it stopped on purpose.
	down bool
}

// current is the running generation, nil while it is down.
func (in *instance) current() *generation {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.down || len(in.gens) == 0 {
		return nil
	}
	return in.gens[len(in.gens)-1]
}

func (in *instance) generations() []*generation {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]*generation(nil), in.gens...)
}

// fleet is the scheduler processes.
type fleet struct {
	insts []*instance
	errs  *errorLog
}

// buildScheduler builds cmd/scheduler into dir.
func buildScheduler(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "scheduler")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/jetsched/jetsched/cmd/scheduler")
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// freePort is a free loopback TCP port.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startFleet starts the schedulers s1, s2, s3 against url with the
// production defaults (claim TTL 30s, lease TTL 10s), JSON logs in dir and
// Prometheus metrics on a port each.
func startFleet(t *testing.T, bin, url, dir string, errs *errorLog) *fleet {
	t.Helper()
	f := &fleet{errs: errs}
	for _, name := range []string{"s1", "s2", "s3"} {
		port := freePort(t)
		argv := []string{bin, "run", "--nats-url", url, "--instance", name, "--log-format", "json",
			"--metrics-listen", "127.0.0.1:" + strconv.Itoa(port)}
		in := &instance{name: name, metricsPort: port,
			proc: faulttest.NewProc(name, filepath.Join(dir, name+".log"), `"msg":"scheduler started"`, argv)}
		t.Cleanup(func() {
			in.proc.Kill()
			if t.Failed() {
				t.Logf("---- %s: %s ----\n%s\n---- end of %s ----", name, in.proc.LogPath,
					faulttest.Tail(in.proc.LogPath, 0, 16<<10), name)
			}
		})
		if err := f.launch(in); err != nil {
			t.Fatal(err)
		}
		f.insts = append(f.insts, in)
	}
	return f
}

// launch starts a new generation of in.
func (f *fleet) launch(in *instance) error {
	if err := in.proc.Start(60 * time.Second); err != nil {
		return fmt.Errorf("start %s: %w", in.name, err)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.gens = append(in.gens, &generation{instance: in.name, n: len(in.gens) + 1, pid: in.proc.Pid(), started: time.Now()})
	in.down = false
	return nil
}

// restart ends in's current generation with sig (SIGTERM: a clean stop
// that must exit 0; SIGKILL: a crash), waits downtime and starts a new one.
func (f *fleet) restart(in *instance, sig string, downtime time.Duration) {
	in.mu.Lock()
	g := in.gens[len(in.gens)-1]
	in.down = true
	g.ended, g.end = time.Now(), sig
	in.mu.Unlock()
	if sig == "SIGTERM" {
		in.proc.Stop()
		if code := in.proc.ExitCode(); code != 0 {
			f.errs.add("%s: SIGTERM: exit status %d (%s), want 0: a clean stop", g, code, in.proc.ExitStatus())
		}
	} else {
		in.proc.Kill()
	}
	time.Sleep(downtime)
	for attempt := 1; ; attempt++ {
		err := f.launch(in)
		if err == nil {
			return
		}
		f.errs.add("restart %s (attempt %d): %v", in.name, attempt, err)
		if attempt == 3 {
			return
		}
		time.Sleep(5 * time.Second)
	}
}

// restartLoop restarts s2 and s3 in turn, one at a time, until ctx ends:
// every lo to 2*lo, SIGTERM or SIGKILL at random, down for up to 20s (a
// killed one half the time at once, as a supervisor would). s1 is never
// restarted, so that one series spans the run. A restart in progress when
// ctx ends is finished, so the fleet is whole when it returns; it is never
// below two.
func (f *fleet) restartLoop(ctx context.Context, rng *rand.Rand, lo time.Duration, counts map[string]int) {
	victims := f.insts[1:]
	for i := 0; ; i++ {
		wait := lo + time.Duration(rng.Int64N(int64(lo)))
		if !sleepCtx(ctx, wait) {
			return
		}
		in := victims[i%len(victims)]
		sig := "SIGTERM"
		if rng.IntN(2) == 0 {
			sig = "SIGKILL"
		}
		downtime := time.Duration(rng.Int64N(int64(20 * time.Second)))
		if sig == "SIGKILL" && rng.IntN(2) == 0 {
			downtime = 0
		}
		f.restart(in, sig, downtime)
		counts[sig]++
	}
}

// errorLog collects the failures of the background goroutines; the test
// reports them at the end.
type errorLog struct {
	mu   sync.Mutex
	errs []string
}

func (e *errorLog) add(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errs = append(e.errs, time.Now().UTC().Format(time.TimeOnly)+" "+fmt.Sprintf(format, args...))
}

func (e *errorLog) all() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.errs...)
}

// sleepCtx waits d or until ctx ends; it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}
