package fires_test

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/testlog"
	"github.com/jetsched/jetsched/internal/testwait"
)

// TestStartSaysWhatTheIndexWaitsFor: a start whose specs' watch is held
// back (as a busy server would) says at info, a second in, that the due
// index waits for that watch and its initial values, and not for the
// state records' or the calendars', which are in; once the watch starts,
// that the wait is over.
func TestStartSaysWhatTheIndexWaitsFor(t *testing.T) {
	h := setup(t)
	var logs testlog.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	release := make(chan struct{})
	e := h.startLoading(fires.Config{Logger: log}, fires.HoldSpecsWatch(release))
	waitLogged := func(what string, want ...string) string {
		t.Helper()
		var line string
		err := testwait.Until(10*time.Second, what, func() error {
			for l := range strings.Lines(logs.String()) {
				if strings.Contains(l, want[0]) {
					line = l
					return nil
				}
			}
			return errors.New("not logged yet")
		})
		if err != nil {
			t.Fatalf("%v\n%s", err, logs.String())
		}
		for _, w := range want[1:] {
			if !strings.Contains(line, w) {
				t.Errorf("%s: %q lacks %q", what, line, w)
			}
		}
		return line
	}
	line := waitLogged("the index's wait logged", `msg="due index: waiting"`, "the specs' watch to start", "the specs' initial values", "level=INFO")
	if strings.Contains(line, "state records") || strings.Contains(line, "calendars") {
		t.Errorf("the wait names watches whose values are in: %q", line)
	}
	releaseAndWaitReady(t, e, release)
	waitLogged("the end of the wait logged", `msg="due index: done"`, "took=")
}
