package partition

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// burners is how many CPU burners load the box while a loaded nemesis
// lasts: two per core of the CI machines, so that the schedulers, the
// servers and the harness all wait for the CPU.
const burners = 4

// guardRuns is how many times the loaded isolation runs:
// JETSCHED_GUARD_RUNS, 1 by default (CI). Issue 28 asked for 20 loaded runs
// without a claim past the lease guard:
//
//	sudo JETSCHED_GUARD_RUNS=20 JETSCHED_PARTITION_ONLY=isolate-most-shards-loaded \
//	  go test -count=1 -v -timeout 60m -run TestPartition ./integration/partition/
func guardRuns() int {
	n, err := strconv.Atoi(os.Getenv("JETSCHED_GUARD_RUNS"))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// loaded is nemesis p with n CPU burners running from the fault's start to
// its heal: the isolated owner's lease guard must hold on its own clock
// however late its goroutines run.
func loaded(p func(h *harness) (plan, error), n int) func(h *harness) (plan, error) {
	return func(h *harness) (plan, error) {
		pl, err := p(h)
		if err != nil {
			return pl, err
		}
		apply, heal := pl.apply, pl.heal
		var stop func()
		pl.note += fmt.Sprintf("; %d CPU burners from the cut to the heal", n)
		pl.apply = func() error {
			stop = burnCPU(n)
			return apply()
		}
		pl.heal = func() error {
			if stop != nil {
				stop()
			}
			return heal()
		}
		return pl, nil
	}
}

// frozen is nemesis p with the cut-off node's scheduler frozen (SIGSTOP)
// for d, then thawed: starvation at its worst. The freeze comes after the
// next whole second past the cut (when every schedule's slot is due and
// the workers are claiming): its jobs in flight wake up past the lease
// guard, by its own clock, and must not claim or record anything then.
func frozen(p func(h *harness) (plan, error), after, d time.Duration) func(h *harness) (plan, error) {
	return func(h *harness) (plan, error) {
		pl, err := p(h)
		if err != nil {
			return pl, err
		}
		sched := h.c.nodes[pl.cut].sched
		apply := pl.apply
		pl.note += fmt.Sprintf("; its scheduler frozen %s after the next second for %s", after, d)
		pl.apply = func() error {
			if err := apply(); err != nil {
				return err
			}
			time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + after)))
			if err := sched.Send(syscall.SIGSTOP); err != nil {
				return fmt.Errorf("freeze the scheduler: %w", err)
			}
			time.Sleep(d)
			return sched.Send(syscall.SIGCONT)
		}
		return pl, nil
	}
}

// burnCPU starts n busy-looping processes (killed with the test process
// if it dies) and returns what stops them and waits for them.
func burnCPU(n int) func() {
	var cmds []*exec.Cmd
	for range n {
		c := exec.Command("sh", "-c", "while :; do :; done")
		c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if c.Start() == nil {
			cmds = append(cmds, c)
		}
	}
	return func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
}
