// Package daemontest helps tests run a daemon: Stop stops one within a
// bound and fails the test when it does not stop cleanly.
package daemontest

import (
	"context"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/daemon"
)

// StopTimeout bounds Stop: generous, so that a slow machine stops in
// time, yet a hung stop fails the test instead of hanging it.
const StopTimeout = time.Minute

// Stop stops d within StopTimeout and reports an error of the stop as a
// test failure. It suits t.Cleanup and defer (the test's own context has
// ended by the time cleanups run, so it uses one of its own).
func Stop(t testing.TB, d *daemon.Daemon) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), StopTimeout)
	defer cancel()
	if err := d.Stop(ctx); err != nil {
		t.Errorf("stop the daemon: %v", err)
	}
}

// Cleanup registers Stop of d as a cleanup of t.
func Cleanup(t testing.TB, d *daemon.Daemon) {
	t.Helper()
	t.Cleanup(func() { Stop(t, d) })
}
