package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/cli"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/jsname"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestListingAtScale writes N schedules through the bulk path (5,000 by
// default, whose one-reply listing was past NATS's 1 MB max payload and
// never answered) into a running daemon, then lists them with the CLI:
// the first page of schedule ls and of status, every page with --all
// --json (JSON lines, in id order, each id once), and a filtered count.
// JETSCHED_LIST_SCALE=1000000 makes it the measurement of
// docs/operations.md (it logs times and RSS; run it with -timeout 30m).
func TestListingAtScale(t *testing.T) {
	n := 5000
	if v := os.Getenv("JETSCHED_LIST_SCALE"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			t.Fatalf("JETSCHED_LIST_SCALE=%q: want a count of at least 1000", v)
		}
	}
	d := startDaemon(t, daemon.Config{})
	ctx := context.Background()
	js := d.JetStream()
	start := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	input := []byte(`{"tenant":"` + strings.Repeat("t", 200) + `"}`)
	t0 := time.Now()
	for i := range n {
		anchor := start.Add(time.Duration(float64(22*time.Hour) * float64(i) / float64(n)))
		spec := kvstore.Spec{Workflow: []string{"billing", "reports", "sync"}[i%3], Every: "24h", Anchor: &anchor, Input: input}
		data, err := spec.Encode()
		if err != nil {
			t.Fatal(err)
		}
		// Ids out of order: the catalogue sorts them.
		if _, err := js.PublishAsync(jsname.KV(js, "sched_specs", fmt.Sprintf("s%07d", (i*7919)%n)), data); err != nil {
			t.Fatal(err)
		}
		if i%2000 == 1999 || i == n-1 { // a window of pipelined puts
			select {
			case <-js.PublishAsyncComplete():
			case <-time.After(time.Minute):
				t.Fatal("bulk write not acknowledged")
			}
		}
	}
	t.Logf("%d schedules written in %s", n, time.Since(t0).Round(time.Millisecond))
	select {
	case <-d.Engine().Ready():
	case <-time.After(10 * time.Minute):
		t.Fatal("engine index not complete")
	}
	t.Logf("engine index complete %s after the write", time.Since(t0).Round(time.Millisecond))

	run := func(out io.Writer, args ...string) (time.Duration, string) {
		t.Helper()
		var errOut bytes.Buffer
		began := time.Now()
		code := cli.Main(ctx, append(args, "--nats-url", d.ClientURL()), out, &errOut)
		took := time.Since(began)
		if code != cli.ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
		}
		return took, errOut.String()
	}
	// The first calls wait for the admin catalogue's load: measure after.
	deadline := time.Now().Add(10 * time.Minute)
	for {
		var errOut bytes.Buffer
		if cli.Main(ctx, []string{"schedule", "ls", "--limit", "1", "--nats-url", d.ClientURL()}, io.Discard, &errOut) == cli.ExitOK {
			break
		}
		if time.Now().After(deadline) || !strings.Contains(errOut.String(), "loading") {
			t.Fatalf("schedule ls: %s", errOut.String())
		}
	}

	var out bytes.Buffer
	var took time.Duration
	for range 3 {
		out.Reset()
		var errOut string
		took, errOut = run(&out, "schedule", "ls")
		if strings.Count(out.String(), "\n") != 101 || !strings.Contains(errOut, fmt.Sprintf("100 of %d schedules shown", n)) || !strings.Contains(out.String(), "s0000000") {
			t.Fatalf("schedule ls: first page\n%s%s", out.String()[:min(out.Len(), 2000)], errOut)
		}
		t.Logf("schedule ls, first page: %s", took.Round(time.Millisecond))
	}
	for range 3 {
		out.Reset()
		took, _ = run(&out, "status")
		if !strings.Contains(out.String(), fmt.Sprintf("%d schedules: ", n)) || strings.Count(out.String(), "\n") != 104 {
			t.Fatalf("status: first page\n%s", out.String()[:min(out.Len(), 2000)])
		}
		t.Logf("status, first page: %s", took.Round(time.Millisecond))
	}
	out.Reset()
	took, _ = run(&out, "schedule", "ls", "--workflow", "reports", "--prefix", "s00001", "--json", "--limit", "1")
	if want := fmt.Sprintf(`"total": %d`, countPrefixed(n, "s00001", 1)); !strings.Contains(out.String(), want) {
		t.Fatalf("schedule ls --workflow reports --prefix s00001: want %s in\n%s", want, out.String())
	}
	t.Logf("schedule ls --workflow --prefix (a filtered count): %s", took.Round(time.Millisecond))

	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	rssBefore := rssMiB()
	t.Logf("before --all: RSS %d MiB, heap in use %d MiB (the whole process)", rssBefore, ms.HeapInuse>>20)
	lines := &idLines{t: t}
	took, _ = run(lines, "schedule", "ls", "--all", "--json", "--limit", "1000")
	if lines.n != n {
		t.Fatalf("schedule ls --all --json: %d lines, want %d", lines.n, n)
	}
	t.Logf("schedule ls --all --json: %d schedules in %s; RSS %d MiB before, %d MiB after (the whole process: server, scheduler, CLI)",
		n, took.Round(time.Millisecond), rssBefore, rssMiB())
}

// countPrefixed counts the ids s%07d below n with prefix whose writer
// index i (id = i*7919 mod n) gave workflow index wf (i mod 3).
func countPrefixed(n int, prefix string, wf int) int {
	c := 0
	for i := range n {
		if i%3 == wf && strings.HasPrefix(fmt.Sprintf("s%07d", (i*7919)%n), prefix) {
			c++
		}
	}
	return c
}

// idLines checks JSON lines of schedules as they stream: each one an
// object whose id comes after the previous line's. It keeps no lines.
type idLines struct {
	t    *testing.T
	buf  []byte
	last string
	n    int
}

func (l *idLines) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil // a partial line: wait for the rest
		}
		line := l.buf[:i]
		const key = `{"id":"`
		if !bytes.HasPrefix(line, []byte(key)) {
			l.t.Errorf("line %d is not a schedule: %.80s", l.n+1, line)
		} else {
			id := string(line[len(key) : len(key)+bytes.IndexByte(line[len(key):], '"')])
			if id <= l.last {
				l.t.Errorf("line %d: id %s after %s", l.n+1, id, l.last)
			}
			l.last = id
		}
		l.n++
		l.buf = l.buf[:copy(l.buf, l.buf[i+1:])]
	}
}

// rssMiB is this process's resident set size (0 without /proc).
func rssMiB() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return kb / 1024
		}
	}
	return 0
}
