package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/testhttp"
)

// TestDueBacklog: the engine's due backlog is two gauges, at 0 from the
// start, set as the engine reports it.
func TestDueBacklog(t *testing.T) {
	m := New(Config{})
	srv, err := m.Serve("127.0.0.1:0", func() error { return nil }, false)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Shutdown(t.Context()) }()
	scrape := func() string {
		_, body := testhttp.Get(t, "http://"+srv.Addr()+"/metrics")
		return body
	}
	for _, want := range []string{"jetsched_due_backlog 0\n", "jetsched_due_backlog_seconds 0\n"} {
		if body := scrape(); !strings.Contains(body, want) {
			t.Errorf("before any report: /metrics lacks %q", want)
		}
	}
	m.DueBacklog(1200, 2500*time.Millisecond)
	for _, want := range []string{"jetsched_due_backlog 1200\n", "jetsched_due_backlog_seconds 2.5\n"} {
		if body := scrape(); !strings.Contains(body, want) {
			t.Errorf("after a report: /metrics lacks %q", want)
		}
	}
}
