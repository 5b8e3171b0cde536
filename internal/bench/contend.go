package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// burnPeriod is the duty cycle of a co-tenant thread that burns a fraction
// of a core: busy for the fraction of each period, asleep for the rest.
const burnPeriod = 10 * time.Millisecond

// MaxContend is the most cores Config.Contend may ask for.
const MaxContend = 1024

// Burn uses cores of CPU (fractions allowed: 0.5 is one thread busy half
// of each 10 ms) until ctx ends: ceil(cores) goroutines, each locked to an
// OS thread, spinning on the clock for its share of each period and asleep
// for the rest. It is the co-tenant of `scheduler bench --contend`; a
// non-positive cores returns at once.
func Burn(ctx context.Context, cores float64) {
	if !(cores > 0) {
		return
	}
	var wg sync.WaitGroup
	for share := range shares(cores) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			burnThread(ctx, share)
		}()
	}
	wg.Wait()
}

// shares splits cores into one share per thread: whole cores of 1, and
// the remainder.
func shares(cores float64) func(yield func(float64) bool) {
	return func(yield func(float64) bool) {
		whole := math.Floor(cores)
		for range int(whole) {
			if !yield(1) {
				return
			}
		}
		if rest := cores - whole; rest > 1e-9 {
			yield(rest)
		}
	}
}

// burnThread spins share of each burnPeriod on its own OS thread until ctx
// ends.
func burnThread(ctx context.Context, share float64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	busy := time.Duration(share * float64(burnPeriod))
	idle := time.NewTimer(0)
	defer idle.Stop()
	for {
		start := time.Now()
		for time.Since(start) < busy {
			// spin: the co-tenant's work is the CPU it takes
		}
		if busy >= burnPeriod {
			if ctx.Err() != nil {
				return
			}
			continue
		}
		idle.Reset(burnPeriod - time.Since(start))
		select {
		case <-ctx.Done():
			return
		case <-idle.C:
		}
	}
}

// Contention says how a run's co-tenant burned CPU (Report.Contention).
type Contention struct {
	// Cores is what the co-tenant burns while it runs (Config.Contend).
	Cores float64 `json:"cores"`
	// Mode is "process": a `scheduler bench --burn` child, whose CPU is
	// not in any row's CPU figure; or "in-process": goroutines of the
	// bench process (a run without a scheduler binary, as the tests),
	// whose CPU is in the rows' figures.
	Mode string `json:"mode"`
	// CPUSec is the CPU the co-tenant used over the run (process mode;
	// 0 in-process, where it is not told apart).
	CPUSec float64 `json:"cpu_sec,omitempty"`
	// ActiveSec is how long it ran, over the run.
	ActiveSec float64 `json:"active_sec"`
}

// contender runs the co-tenant while a contended row is measured. Its
// methods are called from the runner's goroutine only; a nil contender
// (a quiet pass) does nothing.
type contender struct {
	rep    *Contention
	binary string
	since  time.Time
	// One of: a child process, or goroutines in this process.
	proc   *process
	cancel context.CancelFunc
	done   chan struct{}
}

// newContender is the co-tenant of cores, a child `binary bench --burn`
// when binary is set, else goroutines in this process.
func newContender(cores float64, binary string) *contender {
	mode := "in-process"
	if binary != "" {
		mode = "process"
	}
	return &contender{rep: &Contention{Cores: cores, Mode: mode}, binary: binary}
}

// start starts burning unless it already does.
func (c *contender) start() error {
	if c == nil || !c.since.IsZero() {
		return nil
	}
	if c.binary != "" {
		cmd := exec.Command(c.binary, "bench", "--burn", strconv.FormatFloat(c.rep.Cores, 'f', -1, 64))
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		dieWithParent(cmd)
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("contend: start %s bench --burn: %w", c.binary, err)
		}
		c.proc = &process{cmd: cmd, done: make(chan error, 1)}
		go func() { c.proc.done <- cmd.Wait() }()
	} else {
		ctx, cancel := context.WithCancel(context.Background())
		c.cancel, c.done = cancel, make(chan struct{})
		go func() {
			defer close(c.done)
			Burn(ctx, c.rep.Cores)
		}()
	}
	c.since = time.Now()
	return nil
}

// stop stops burning (and waits until it has) unless it is stopped.
func (c *contender) stop() {
	if c == nil || c.since.IsZero() {
		return
	}
	if c.proc != nil {
		c.rep.CPUSec += c.proc.cpuSeconds()
		_ = c.proc.cmd.Process.Kill()
		<-c.proc.done
		c.proc = nil
	} else {
		c.cancel()
		<-c.done
	}
	c.rep.ActiveSec += time.Since(c.since).Seconds()
	c.since = time.Time{}
}

// during runs f with the co-tenant burning (a nil contender: quietly).
func during[T any](c *contender, f func() (T, error)) (T, error) {
	if err := c.start(); err != nil {
		var zero T
		return zero, err
	}
	defer c.stop()
	return f()
}
