package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/timers"
)

// member is one scheduler of a scenario: an instance in this process, or a
// `scheduler run` process.
type member interface {
	// cpuSeconds is the CPU the member used outside this process (0 for
	// an instance in it: cpuSeconds() counts those).
	cpuSeconds() float64
	stop()
}

func (in *instance) cpuSeconds() float64 { return 0 }

// process is a `scheduler run` child on the scenario's layout.
type process struct {
	cmd  *exec.Cmd
	done chan error
}

// startMember starts the scenario's scheduler name: a process when asked
// and the run has a scheduler binary, else an instance in this process.
func (s *scenario) startMember(ctx context.Context, name string, asProcess bool) (member, error) {
	if !asProcess || s.r.cfg.Binary == "" {
		in, err := s.startInstance(ctx, name)
		if err != nil {
			return nil, err
		}
		if err := in.waitReady(ctx); err != nil {
			in.stop()
			return nil, err
		}
		return in, nil
	}
	return s.startProcess(name)
}

// startProcess starts `scheduler run` as name on the scenario's layout,
// with extra flags after run's own. The child is killed if this process
// dies first (Linux), so that a bench stopped hard leaves no scheduler
// behind to fire into the next run's buckets.
func (s *scenario) startProcess(name string, extra ...string) (*process, error) {
	conn := s.r.cfg.Conn
	conn.URL = s.r.url
	level := "error"
	var log *os.File
	if s.r.cfg.LogDir != "" {
		f, err := s.r.logFile(s.layout.Prefix + "-" + name)
		if err != nil {
			return nil, err
		}
		defer f.Close() // the process has its own descriptor once started
		level, log = "info", f
	}
	args := append(conn.Args(), "--name-prefix", s.layout.Prefix, "--log-level", level,
		"run", "--instance", name,
		"--workers", strconv.Itoa(cmp.Or(s.r.cfg.Workers, fires.DefaultWorkers)),
		"--timer-workers", strconv.Itoa(cmp.Or(s.r.cfg.TimerWorkers, timers.DefaultWorkers)),
		"--window-slots", strconv.Itoa(s.r.cfg.WindowSlots), "--window-busy", strconv.Itoa(s.r.cfg.WindowBusy),
		"--fire-quantum", s.r.cfg.FireQuantum.String(), "--record-lag", s.r.cfg.RecordLag.String(), "--state-interval", s.r.cfg.StateInterval.String(),
		"--ended-lists="+strconv.FormatBool(s.r.cfg.EndedLists))
	if s.r.cfg.GCPercent != 0 {
		args = append(args, "--gc-percent", strconv.Itoa(s.r.cfg.GCPercent))
	}
	if s.r.cfg.GCHeadroom != "" {
		args = append(args, "--gc-headroom", s.r.cfg.GCHeadroom)
	}
	args = append(args, extra...)
	cmd := exec.Command(s.r.cfg.Binary, args...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if log != nil {
		cmd.Stdout, cmd.Stderr = log, log
	}
	dieWithParent(cmd)
	// A bench process never writes an audit trail (or touches its stream).
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "JETSCHED_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s run: %w", s.r.cfg.Binary, err)
	}
	p := &process{cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	return p, nil
}

// rssMiB is the process's resident set now and its peak (VmHWM), from
// /proc (0 elsewhere).
func (p *process) rssMiB() (now, peak float64) {
	pid := strconv.Itoa(p.cmd.Process.Pid)
	return statusMiB(pid, "VmRSS"), statusMiB(pid, "VmHWM")
}

// stop asks the process to stop (SIGTERM: it hands its shards back) and
// kills it after 30 s.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// cpuSeconds reads the process's user and system time from /proc (Linux;
// 0 elsewhere).
func (p *process) cpuSeconds() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// The fields after the command name (in parentheses, may hold spaces):
	// state is field 3, utime 14, stime 15, in clock ticks (100 per second
	// on Linux).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100
}
