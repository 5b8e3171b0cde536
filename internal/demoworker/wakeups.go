package demoworker

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/worker"
)

// WakeupConfig configures a WakeupWorker.
type WakeupConfig struct {
	// JetStream is the connection. Required.
	JetStream jetstream.JetStream
	// Layout names the wakeup stream. Zero value: defaults.
	Layout kvstore.Layout
	// Durable names the consumer. Default "workerdemo".
	Durable string
	// Holds reports whether run is still in the activity a wakeup's
	// condition names; a wakeup whose condition no longer holds is acked
	// and dropped, never advancing the run. Default: every condition holds.
	Holds func(run, condition string) bool
	// Logger receives one line per wakeup. Default: discard.
	Logger *slog.Logger
	// OnWakeup, if set, is called for every wakeup handled, with whether
	// it was acted on (false: stale, dropped).
	OnWakeup func(m wakeups.Meta, acted bool)
}

// WakeupWorker consumes wakeups: it checks each one's condition, acts (logs)
// or drops it, and acks.
type WakeupWorker struct {
	*worker.Worker
	cfg WakeupConfig
	log *slog.Logger
}

// NewWakeups validates cfg.
func NewWakeups(cfg WakeupConfig) (*WakeupWorker, error) {
	if cfg.JetStream == nil {
		return nil, errors.New("demoworker: WakeupConfig.JetStream is required")
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if cfg.Holds == nil {
		cfg.Holds = func(string, string) bool { return true }
	}
	w := &WakeupWorker{cfg: cfg, log: cfg.Logger}
	inner, err := worker.New(worker.Config{JetStream: cfg.JetStream, Layout: cfg.Layout, Name: cmp.Or(cfg.Durable, "workerdemo"), Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	if err := inner.HandleWakeup(worker.AllWorkflows, w.handle); err != nil {
		return nil, err
	}
	w.Worker = inner
	return w, nil
}

// handle checks the condition itself (instead of worker.Config's
// ConditionHolds) so that the demo can log and count the dropped ones.
func (w *WakeupWorker) handle(_ context.Context, wk worker.Wakeup) error {
	lateness := time.Since(wk.DueAt).Round(100 * time.Microsecond)
	attrs := []any{"run", wk.Run, "step", wk.Step, "workflow", wk.Workflow, "due", wk.DueAt.Format("15:04:05.000 MST"),
		"lateness", lateness, "when", wk.When, "payload", string(wk.Payload)}
	acted := true
	if wk.Condition != "" && !w.cfg.Holds(wk.Run, wk.Condition) {
		acted = false
		w.log.Info("stale wakeup dropped: the run moved on", append(attrs, "condition", wk.Condition)...)
	} else {
		w.log.Info("wakeup", attrs...)
	}
	if w.cfg.OnWakeup != nil {
		w.cfg.OnWakeup(wk.Meta, acted)
	}
	return nil
}
