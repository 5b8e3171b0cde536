package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/jetsched/jetsched/internal/cli"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/demoworker"
	"github.com/jetsched/jetsched/internal/faulttest"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestDaemonEndToEnd runs the daemon on an embedded server, registers a
// schedule with the CLI as an operator would, and sees a worker receive
// its fires.
func TestDaemonEndToEnd(t *testing.T) {
	ctx := context.Background()
	d := startDaemon(t, daemon.Config{})
	run := cliRunner(d)
	code, _, errOut := run("schedule", "add", "--id", "e2e", "--workflow", "e2e-wf", "--cron", "* * * * * *", "--tz", "Asia/Tokyo")
	if code != cli.ExitOK {
		t.Fatalf("schedule add: exit %d: %s", code, errOut)
	}

	got := make(chan kvstore.FireMeta, 16)
	w, err := demoworker.New(demoworker.Config{JetStream: d.JetStream(), Workflow: "e2e-wf",
		OnFire: func(m kvstore.FireMeta, _ time.Duration) { got <- m }})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.StopAndCancel(context.Background()) }()
	var prev time.Time
	for i := range 3 {
		select {
		case m := <-got:
			if _, off := m.ScheduledAt.Zone(); off != 9*3600 {
				t.Fatalf("Sched-Scheduled-At %v not in Asia/Tokyo", m.ScheduledAt)
			}
			if i > 0 && !m.ScheduledAt.After(prev) {
				t.Fatalf("slot %v after %v", m.ScheduledAt, prev)
			}
			prev = m.ScheduledAt
		case <-time.After(10 * time.Second):
			t.Fatalf("fire %d not received", i)
		}
	}

	code, out, errOut := run("schedule", "ls")
	if code != cli.ExitOK {
		t.Fatalf("ls: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "e2e") || !strings.Contains(out, "JST") || !(strings.Contains(out, "dispatched") || strings.Contains(out, "completed")) {
		t.Fatalf("ls output lacks the schedule, its zone or its last status:\n%s", out)
	}
}

// TestBinaryStopsCleanlyOnSignal builds the scheduler binary, runs it with
// an embedded server, and checks that SIGTERM and SIGINT make it stop
// claiming, finish, and exit 0.
func TestBinaryStopsCleanlyOnSignal(t *testing.T) {
	bin := buildScheduler(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "run", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--log-format", "json")
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := bufio.NewScanner(stderr)
			started := false
			for lines.Scan() {
				var rec map[string]any
				if json.Unmarshal(lines.Bytes(), &rec) == nil && rec["msg"] == "scheduler started" {
					started = true
					break
				}
			}
			if !started {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatal("scheduler never logged 'scheduler started'")
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			var sawStopped bool
			for lines.Scan() {
				if strings.Contains(lines.Text(), `"msg":"stopped"`) {
					sawStopped = true
				}
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("exit after %v: %v", sig, err)
				}
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("scheduler did not exit within 30s of %v", sig)
			}
			if !sawStopped {
				t.Fatal("no 'stopped' log line")
			}
		})
	}
}

// TestPreflightNamesWhatIsMissing connects the daemon to a server without
// JetStream and expects a plain explanation.
func TestPreflightNamesWhatIsMissing(t *testing.T) {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	_, err = daemon.Start(context.Background(), daemon.Config{Conn: natsconn.Options{URL: srv.ClientURL()}})
	if err == nil || !strings.Contains(err.Error(), "JetStream is not enabled") || !strings.Contains(err.Error(), "-js") {
		t.Fatalf("err = %v, want a JetStream-not-enabled explanation", err)
	}
}

func buildScheduler(t *testing.T) string {
	t.Helper()
	return faulttest.BuildScheduler(t)
}
