package cli

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/testwait"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDemoLogsFiresReadably: the demo's log piped (not a terminal) is
// text without colour, durations as 1.5ms rather than nanoseconds, and
// --log-fires writes a line per fire naming the schedule, slot and
// lateness.
func TestDemoLogsFiresReadably(t *testing.T) {
	t.Parallel()
	ctx, stop := context.WithCancel(context.Background())
	var logs syncBuffer
	exited := make(chan int, 1)
	go func() {
		exited <- mainEnv(ctx, []string{"demo", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--log-fires",
			"--console-listen", "127.0.0.1:0"}, nil, &bytes.Buffer{}, &logs)
	}()
	fired := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d\.\d{3} INF fired .*schedule=demo-[a-z0-9-]+ .*slot=\S+ lateness=[0-9.]+(ns|µs|ms|s)\b`)
	testwait.Eventually(t, 30*time.Second, "a fired line in the demo's log", func() bool {
		select {
		case code := <-exited:
			exited <- code
			return true // reported below
		default:
		}
		return fired.MatchString(logs.String())
	})
	stop()
	if code := <-exited; code != ExitOK {
		t.Fatalf("demo exited %d:\n%s", code, logs.String())
	}
	out := logs.String()
	if !fired.MatchString(out) {
		t.Fatalf("no readable fired line in the demo's log:\n%s", out)
	}
	if strings.Contains(out, `{"time"`) || strings.Contains(out, "\x1b[") {
		t.Errorf("the piped demo log is JSON or coloured:\n%s", out)
	}
}
