package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/testlog"
	"github.com/jetsched/jetsched/internal/testwait"
)

// runningDaemon is a `scheduler run` started in this process.
type runningDaemon struct {
	cancel context.CancelFunc
	exit   chan int
	stderr *testlog.Buffer
	url    string // the embedded server's client URL
}

// startRun runs `scheduler run` with args (JSON logs) until the test
// ends or stop is called, and waits for its "scheduler started" line.
func startRun(t *testing.T, args ...string) *runningDaemon {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := &runningDaemon{cancel: cancel, exit: make(chan int, 1), stderr: &testlog.Buffer{}}
	go func() {
		d.exit <- mainEnv(ctx, append([]string{"run", "--log-format", "json"}, args...), nil, io.Discard, d.stderr)
	}()
	t.Cleanup(func() { d.stop(t) })
	testwait.Eventually(t, 30*time.Second, "run's \"scheduler started\" log line", func() bool {
		for line := range strings.Lines(d.stderr.String()) {
			var rec struct{ Msg, URL string }
			if json.Unmarshal([]byte(line), &rec) != nil {
				continue
			}
			switch rec.Msg {
			case "embedded nats-server listening":
				d.url = rec.URL
			case "scheduler started":
				return true
			}
		}
		select {
		case code := <-d.exit:
			t.Fatalf("run exited %d before it started: %s", code, d.stderr.String())
		default:
		}
		return false
	})
	return d
}

// stop ends the run and checks that it exits 0. Safe to call twice.
func (d *runningDaemon) stop(t *testing.T) {
	t.Helper()
	if d.cancel == nil {
		return
	}
	d.cancel()
	d.cancel = nil
	if code := testwait.Receive(t, 30*time.Second, "run's exit after its context ends", d.exit); code != ExitOK {
		t.Errorf("run exited %d: %s", code, d.stderr.String())
	}
}

// TestRunRefusesADataDirInUse: a second scheduler on the --data-dir of a
// running one is refused with ExitLocked, naming the directory and the
// holder's pid, and the first keeps running; once the first has stopped,
// a new one starts on the directory. (flock locks per open file, so two
// runs in one process conflict as two processes do.)
func TestRunRefusesADataDirInUse(t *testing.T) {
	dir := t.TempDir()
	first := startRun(t, "--data-dir", dir, "--listen", "127.0.0.1:0", "--lease-ttl", "2s")

	// Bounded: on a store without the lock, the second run would run.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stdout, stderr strings.Builder
	code := mainEnv(ctx, []string{"run", "--data-dir", dir, "--listen", "127.0.0.1:0", "--log-format", "json"}, nil, &stdout, &stderr)
	if code != ExitLocked {
		t.Fatalf("second run on %s: exit %d, want %d (ExitLocked): %s", dir, code, ExitLocked, stderr.String())
	}
	for _, want := range []string{"--data-dir", dir, "pid " + strconv.Itoa(os.Getpid())} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("second run's error does not name %q: %s", want, stderr.String())
		}
	}

	// The first is unharmed: still running, its server still answering.
	select {
	case code := <-first.exit:
		t.Fatalf("the first run exited %d after the second was refused: %s", code, first.stderr.String())
	default:
	}
	nc, err := nats.Connect(first.url)
	if err != nil {
		t.Fatalf("connect to the first run's server %s: %v", first.url, err)
	}
	defer nc.Close()
	if _, err := nc.Request("$JS.API.STREAM.INFO.SCHED_FIRES", nil, 5*time.Second); err != nil {
		t.Fatalf("the first run's server after the second was refused: %v", err)
	}
	nc.Close()

	first.stop(t)
	startRun(t, "--data-dir", dir, "--listen", "127.0.0.1:0", "--lease-ttl", "2s").stop(t)
}
