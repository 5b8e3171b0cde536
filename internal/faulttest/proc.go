// Package faulttest holds what the fault tests (integration/) and the
// partition tests (integration/partition/) share: a child process with its
// log file, a reader of the fire stream, and the FAULT summary line that
// test.sh prints after a run.
package faulttest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is a child process, started and restarted with the same name, whose
// output goes to one log file across every start. Its zero value is not
// usable: set the fields, then Start. Safe for concurrent use.
type Proc struct {
	// Name is used in errors and in the log's start lines.
	Name string
	// LogPath is the log file (appended to).
	LogPath string
	// Ready is what a log line of a started process contains.
	Ready string
	// Env is added to the test's environment.
	Env []string

	mu     sync.Mutex
	argv   []string
	cmd    *exec.Cmd
	done   chan struct{} // closed when the current process has exited
	starts int
}

// NewProc returns a stopped process that runs argv (the program first).
func NewProc(name, logPath, ready string, argv []string) *Proc {
	return &Proc{Name: name, LogPath: logPath, Ready: ready, argv: argv}
}

// SetArgv changes the command line of the next start.
func (p *Proc) SetArgv(argv []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.argv = argv
}

// Argv is the command line of the next start.
func (p *Proc) Argv() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.argv
}

// ExitedError is WaitReady's error when the process exited first.
type ExitedError struct {
	Name string
	Code int    // exit status, -1 when killed by a signal
	Tail string // the end of its log since this start
}

func (e *ExitedError) Error() string {
	return fmt.Sprintf("%s exited with status %d before it was ready:\n%s", e.Name, e.Code, e.Tail)
}

// Start launches the process and waits until its log shows the Ready
// line, or timeout.
func (p *Proc) Start(timeout time.Duration) error {
	off, err := p.Launch()
	if err != nil {
		return err
	}
	return p.WaitReady(off, timeout)
}

// Launch starts the process without waiting and returns the log offset of
// this start. The process gets SIGKILL if the test process dies first.
func (p *Proc) Launch() (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done != nil {
		select {
		case <-p.done:
		default:
			return 0, fmt.Errorf("%s: start while running", p.Name)
		}
	}
	f, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	p.starts++
	fmt.Fprintf(f, "=== harness: start #%d of %s at %s: %s %s\n", p.starts, p.Name,
		time.Now().Format(time.RFC3339Nano), strings.Join(p.Env, " "), strings.Join(p.argv, " "))
	off, _ := f.Seek(0, io.SeekEnd)
	var cmd *exec.Cmd
	for attempt := 0; ; attempt++ {
		cmd = exec.Command(p.argv[0], p.argv[1:]...)
		cmd.Env = append(os.Environ(), p.Env...)
		cmd.Stdout, cmd.Stderr = f, f
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		err = cmd.Start()
		if err == nil {
			break
		}
		// A binary just written by another goroutine while this one forks.
		if errors.Is(err, syscall.ETXTBSY) && attempt < 20 {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		return 0, fmt.Errorf("start %s: %w", p.Name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	p.cmd, p.done = cmd, done
	return off, nil
}

// WaitReady polls the log from off for the Ready line. A process that
// exits first gives an *ExitedError.
func (p *Proc) WaitReady(off int64, timeout time.Duration) error {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	deadline := time.Now().Add(timeout)
	for !LogHas(p.LogPath, off, p.Ready) {
		select {
		case <-done:
			return &ExitedError{Name: p.Name, Code: p.ExitCode(), Tail: Tail(p.LogPath, off, 4096)}
		case <-time.After(25 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not log %q within %s:\n%s", p.Name, p.Ready, timeout, Tail(p.LogPath, off, 4096))
		}
	}
	return nil
}

// Running reports whether the current process is alive.
func (p *Proc) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Pid is the current process's id, 0 when it is not running (the soak
// test reads its /proc entries).
func (p *Proc) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	select {
	case <-p.done:
		return 0
	default:
		return p.cmd.Process.Pid
	}
}

// Kill sends SIGKILL (a crash) and waits until the process is gone. A
// no-op when it is not running.
func (p *Proc) Kill() { p.signal(syscall.SIGKILL, 0) }

// Stop sends SIGTERM (a clean stop), waits up to 15s, then kills.
func (p *Proc) Stop() { p.signal(syscall.SIGTERM, 15*time.Second) }

func (p *Proc) signal(sig syscall.Signal, grace time.Duration) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	_ = cmd.Process.Signal(sig)
	if grace > 0 {
		select {
		case <-done:
			return
		case <-time.After(grace):
			_ = cmd.Process.Kill()
		}
	}
	<-done
}

// WaitExit waits up to timeout for the process to exit on its own and
// returns its exit status (-1 when killed by a signal).
func (p *Proc) WaitExit(timeout time.Duration) (code int, exited bool) {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done == nil {
		return 0, false
	}
	select {
	case <-done:
		return p.ExitCode(), true
	case <-time.After(timeout):
		return 0, false
	}
}

// ExitCode is the last process's exit status (0 while it runs or before a
// start, -1 when killed by a signal).
func (p *Proc) ExitCode() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.ProcessState == nil {
		return 0
	}
	return p.cmd.ProcessState.ExitCode()
}

// ExitStatus describes the last process's end ("running" while it runs).
func (p *Proc) ExitStatus() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.ProcessState == nil {
		return "running"
	}
	return p.cmd.ProcessState.String()
}

// LogSize is the current length of a log (where a new start's lines begin).
func LogSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// LogHas reports whether the log has a line containing needle after off.
func LogHas(path string, off int64, needle string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return false
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if bytes.Contains(sc.Bytes(), []byte(needle)) {
			return true
		}
	}
	return false
}

// Tail returns at most max bytes of the end of path, from offset off.
func Tail(path string, off, max int64) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	end, _ := f.Seek(0, io.SeekEnd)
	start := off
	if end-max > start {
		start = end - max
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return err.Error()
	}
	b, _ := io.ReadAll(f)
	if start > off {
		return fmt.Sprintf("[... %d bytes before]\n%s", start-off, b)
	}
	return string(b)
}

// Send sends sig to the running process without waiting (SIGSTOP and
// SIGCONT freeze and thaw it); a no-op when it is not running.
func (p *Proc) Send(sig syscall.Signal) error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	default:
	}
	return cmd.Process.Signal(sig)
}
