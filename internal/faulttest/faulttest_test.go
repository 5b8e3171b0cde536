package faulttest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/natstest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestProcLifecycle(t *testing.T) {
	log := filepath.Join(t.TempDir(), "p.log")
	p := NewProc("sleeper", log, "ready", []string{"sh", "-c", "echo ready $START; exec sleep 60"})
	p.Env = []string{"START=first"}
	t.Cleanup(p.Kill)
	if err := p.Start(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if !p.Running() || p.ExitStatus() != "running" {
		t.Fatalf("running %v, status %s", p.Running(), p.ExitStatus())
	}
	if pid := p.Pid(); pid <= 0 {
		t.Errorf("Pid of a running process: %d", pid)
	} else if _, err := os.Stat(fmt.Sprintf("/proc/%d/status", pid)); err != nil {
		t.Errorf("Pid %d has no /proc entry: %v", pid, err)
	}
	if _, err := p.Launch(); err == nil {
		t.Error("a second launch while running: no error")
	}
	off := LogSize(log)
	p.Kill()
	if p.Running() || p.ExitCode() != -1 {
		t.Errorf("after Kill: running %v, exit code %d", p.Running(), p.ExitCode())
	}
	if pid := p.Pid(); pid != 0 {
		t.Errorf("Pid after Kill: %d, want 0", pid)
	}
	p.Env = []string{"START=second"}
	if err := p.Start(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if !LogHas(log, off, "ready second") || LogHas(log, off, "ready first") {
		t.Errorf("log after the restart:\n%s", Tail(log, off, 1024))
	}
	p.Stop() // SIGTERM ends sleep
	if code, exited := p.WaitExit(time.Second); !exited || code != -1 {
		t.Errorf("after Stop: exited %v, code %d", exited, code)
	}
}

func TestProcExitsBeforeReady(t *testing.T) {
	p := NewProc("quitter", filepath.Join(t.TempDir(), "q.log"), "ready", []string{"sh", "-c", "echo bad flag; exit 2"})
	err := p.Start(10 * time.Second)
	var ee *ExitedError
	if !errors.As(err, &ee) || ee.Code != 2 || !strings.Contains(ee.Tail, "bad flag") {
		t.Fatalf("error %v, want an ExitedError with status 2 and the output", err)
	}
	p2 := NewProc("silent", filepath.Join(t.TempDir(), "s.log"), "ready", []string{"sleep", "60"})
	t.Cleanup(p2.Kill)
	if err := p2.Start(200 * time.Millisecond); err == nil || !strings.Contains(err.Error(), "did not log") {
		t.Errorf("error %v, want a timeout", err)
	}
}

func TestTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.log")
	if got := Tail(path, 0, 10); !strings.HasPrefix(got, "(no log") {
		t.Errorf("Tail of a missing file: %q", got)
	}
	p := NewProc("echo", filepath.Join(t.TempDir(), "e.log"), "0123456789", []string{"sh", "-c", "echo 0123456789; exec sleep 60"})
	t.Cleanup(p.Kill)
	if err := p.Start(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if got := Tail(p.LogPath, 0, 5); !strings.HasPrefix(got, "[... ") || !strings.HasSuffix(got, "789\n") {
		t.Errorf("Tail(5) = %q", got)
	}
}

func TestFireReader(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "FIRES", Subjects: []string{"f.>"}}); err != nil {
		t.Fatal(err)
	}
	publish := func(from, to int) {
		for i := from; i < to; i++ {
			m := &nats.Msg{Subject: "f.x", Header: nats.Header{"N": []string{fmt.Sprint(i)}}, Data: []byte("body")}
			if _, err := js.PublishMsg(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	var got []string
	read := func(h nats.Header, md *jetstream.MsgMetadata) {
		got = append(got, fmt.Sprintf("%s@%d", h.Get("N"), md.Sequence.Stream))
	}
	r := NewFireReader(js, "FIRES")
	publish(0, 3)
	if err := r.Sync(ctx, read); err != nil {
		t.Fatal(err)
	}
	// Another connection: the reader resumes after what it read.
	_, js2 := srv.Connect(t)
	r.Use(js2)
	publish(3, 5)
	if err := r.Sync(ctx, read); err != nil {
		t.Fatal(err)
	}
	if err := r.Sync(ctx, read); err != nil { // nothing new
		t.Fatal(err)
	}
	if want := "0@1 1@2 2@3 3@4 4@5"; strings.Join(got, " ") != want {
		t.Errorf("read %v, want %s", got, want)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	publish(5, 6)
	if err := r.Sync(done, read); err == nil {
		t.Error("Sync with an ended context: no error")
	}
}
