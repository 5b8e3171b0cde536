package startwait

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/testlog"
	"github.com/jetsched/jetsched/internal/testwait"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestStepLogsASlowWait: a step still running after Slow is logged at
// info with what it waits for, and its end too.
func TestStepLogsASlowWait(t *testing.T) {
	waiting := testlog.NewSignal("start: waiting")
	var logs testlog.Buffer
	// The text handler first: the line is written before the signal lets
	// the step return (else "waiting" may land after the check).
	log := slog.New(testlog.Multi{slog.NewTextHandler(&logs, nil), waiting})
	err := Step(context.Background(), log, "the thing", 0, func(ctx context.Context) error {
		testwait.Receive(t, 10*time.Second, "the wait logged", waiting.Seen)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`level=INFO msg="start: waiting" for="the thing"`, `level=INFO msg="start: waited" for="the thing" took=`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs.String())
		}
	}
}

// TestStepBounded: a step that outlives its limit ends with an error
// naming it and the limit; a quick one logs nothing.
func TestStepBounded(t *testing.T) {
	var logs testlog.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	err := Step(context.Background(), log, "the stuck thing", 20*time.Millisecond, func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "the stuck thing: not done within 20ms") {
		t.Fatalf("Step = %v, want the thing and its limit named, wrapping the deadline", err)
	}
	failed := errors.New("refused")
	if err := Step(context.Background(), log, "x", time.Minute, func(context.Context) error { return failed }); err != failed {
		t.Errorf("Step = %v, want f's error as it is", err)
	}
	if logs.String() != "" {
		t.Errorf("quick steps logged:\n%s", logs.String())
	}
}

// TestWatchdog: while not ready, what is pending is logged at info; once
// ready, that the wait is over.
func TestWatchdog(t *testing.T) {
	waiting, done := testlog.NewSignal("index: waiting"), testlog.NewSignal("index: done")
	var logs testlog.Buffer
	log := slog.New(testlog.Multi{waiting, done, slog.NewTextHandler(&logs, nil)})
	ready := make(chan struct{})
	Watchdog(context.Background(), log, "index", ready, func() []string { return []string{"the specs"} })
	testwait.Receive(t, 10*time.Second, "the wait logged", waiting.Seen)
	close(ready)
	testwait.Receive(t, 10*time.Second, "the end logged", done.Seen)
	if !strings.Contains(logs.String(), `level=INFO msg="index: waiting" for="[the specs]"`) {
		t.Errorf("the log lacks what is pending:\n%s", logs.String())
	}
}
