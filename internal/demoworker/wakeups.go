package demoworker

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/wakeup"
)

// WakeupConfig configures a WakeupWorker.
type WakeupConfig struct {
	// JetStream is the connection. Required.
	JetStream jetstream.JetStream
	// Layout names the wakeup stream. Zero value: defaults.
	Layout kvstore.Layout
	// Durable is the consumer name. Default "workerdemo-wakeups".
	Durable string
	// Holds reports whether run is still in the activity a wakeup's
	// condition names; a wakeup whose condition no longer holds is acked
	// and dropped, never advancing the run. Default: every condition holds.
	Holds func(run, condition string) bool
	// Logger receives one line per wakeup. Default: discard.
	Logger *slog.Logger
	// OnWakeup, if set, is called for every wakeup handled, with whether
	// it was acted on (false: stale, dropped).
	OnWakeup func(m wakeup.Meta, acted bool)
}

// WakeupWorker consumes wakeups: it checks each one's condition, acts (logs)
// or drops it, and acks.
type WakeupWorker struct {
	cfg WakeupConfig
	log *slog.Logger
	consumer
}

// NewWakeups validates cfg.
func NewWakeups(cfg WakeupConfig) (*WakeupWorker, error) {
	if cfg.JetStream == nil {
		return nil, errors.New("demoworker: WakeupConfig.JetStream is required")
	}
	cfg.Layout = cfg.Layout.WithDefaults()
	cfg.Durable = cmp.Or(cfg.Durable, "workerdemo-wakeups")
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if cfg.Holds == nil {
		cfg.Holds = func(string, string) bool { return true }
	}
	return &WakeupWorker{cfg: cfg, log: cfg.Logger}, nil
}

// Start creates the durable consumer and starts consuming.
func (w *WakeupWorker) Start(ctx context.Context) error {
	return w.start(ctx, w.cfg.JetStream, w.cfg.Layout.WakeupsStream, jetstream.ConsumerConfig{
		Durable: w.cfg.Durable, FilterSubject: w.cfg.Layout.WakeupSubjects(), AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: 30 * time.Second, MaxDeliver: 5, DeliverPolicy: jetstream.DeliverNewPolicy,
	}, w.handle)
}

func (w *WakeupWorker) handle(msg jetstream.Msg) {
	m, err := wakeup.ParseMeta(msg.Headers())
	if err != nil {
		_ = msg.TermWithReason("not a jetsched wakeup")
		return
	}
	lateness := time.Since(m.DueAt).Round(100 * time.Microsecond)
	attrs := []any{"run", m.Run, "step", m.Step, "workflow", m.Workflow, "due", m.DueAt.Format("15:04:05.000 MST"),
		"lateness", lateness, "when", m.When, "payload", string(msg.Data())}
	acted := true
	if m.Condition != "" && !w.cfg.Holds(m.Run, m.Condition) {
		acted = false
		w.log.Info("stale wakeup dropped: the run moved on", append(attrs, "condition", m.Condition)...)
	} else {
		w.log.Info("wakeup", attrs...)
	}
	if err := msg.Ack(); err != nil {
		w.log.Warn("ack wakeup", "id", m.ID, "err", err)
		return
	}
	if w.cfg.OnWakeup != nil {
		w.cfg.OnWakeup(m, acted)
	}
}
