package daemon

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/natstest"
)

// TestStopAllBoundedByContext: a part that does not stop before the
// caller's context ends is named in the error, which wraps the context's
// error, and the parts after it are still asked to stop.
func TestStopAllBoundedByContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	var asked []string
	stuck := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	ok := func(name string) part {
		return part{name, func(context.Context) error { asked = append(asked, name); return nil }}
	}
	err := stopAll(ctx, []part{ok("first"), {"the stuck part", stuck}, ok("last")})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "stop the stuck part") {
		t.Fatalf("stopAll: %v; want the stuck part named, wrapping context.DeadlineExceeded", err)
	}
	if strings.Join(asked, ",") != "first,last" {
		t.Errorf("parts asked to stop: %v; want first and last, the stuck one between them", asked)
	}
	failed := errors.New("boom")
	err = stopAll(context.Background(), []part{{"a", func(context.Context) error { return failed }}, {"b", func(context.Context) error { return failed }}})
	if !errors.Is(err, failed) || strings.Count(err.Error(), "boom") != 2 {
		t.Errorf("two failing parts: %v; want both errors", err)
	}
}

// TestStopTwice: a running daemon stops cleanly within its context, every
// part it started is asked (TestMain's goleak finds no goroutine left),
// and a second Stop is a no-op.
func TestStopTwice(t *testing.T) {
	srv := natstest.Start(t)
	d, err := Start(context.Background(), Config{Conn: natsconn.Options{URL: srv.URL()}, MetricsListen: "127.0.0.1:0"})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	if got := len(d.parts()); got < 5 {
		t.Errorf("a running daemon has %d parts to stop; want the metrics endpoint, the admin API, the watches, both engines and the connection", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := d.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := d.Stop(ctx); err != nil {
		t.Errorf("second stop: %v", err)
	}
}
