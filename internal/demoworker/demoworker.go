// Package demoworker is the example worker behind `scheduler demo` and
// cmd/workerdemo: a durable pull consumer on the fire stream that logs each
// fire with its lateness and acks it, or fails some on purpose to show
// redelivery with backoff.
package demoworker

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/pkg/fire"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Config configures a Worker.
type Config struct {
	// JetStream is the connection. Required.
	JetStream jetstream.JetStream
	// Layout names the fire stream and subjects. Zero value: defaults.
	Layout kvstore.Layout
	// Durable is the consumer name. Default "workerdemo".
	Durable string
	// Workflow narrows the consumer to sched.fire.<Workflow>. Default: all.
	Workflow string
	// FailRate is the fraction of deliveries (0 to 1) that fail on purpose
	// and are redelivered with backoff. Default 0.
	FailRate float64
	// MaxDeliver bounds deliveries per fire. Default 5.
	MaxDeliver int
	// Logger receives one line per fire. Default: discard.
	Logger *slog.Logger
	// OnFire, if set, is called for every fire the worker acks.
	OnFire func(fire.Meta, time.Duration)
}

// Worker consumes fires until Stop.
type Worker struct {
	cfg Config
	log *slog.Logger

	randMu sync.Mutex
	rand   *rand.Rand

	consumer
}

// New validates cfg.
func New(cfg Config) (*Worker, error) {
	if cfg.JetStream == nil {
		return nil, errors.New("demoworker: Config.JetStream is required")
	}
	if cfg.FailRate < 0 || cfg.FailRate > 1 {
		return nil, fmt.Errorf("demoworker: fail rate %v: must be between 0 and 1", cfg.FailRate)
	}
	if cfg.Workflow != "" {
		if err := kvstore.ValidateWorkflow(cfg.Workflow); err != nil {
			return nil, fmt.Errorf("demoworker: %w", err)
		}
	}
	cfg.Layout = cfg.Layout.WithDefaults()
	cfg.Durable = cmp.Or(cfg.Durable, "workerdemo")
	cfg.MaxDeliver = cmp.Or(cfg.MaxDeliver, 5)
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return &Worker{cfg: cfg, log: cfg.Logger, rand: rand.New(rand.NewPCG(rand.Uint64(), 0))}, nil
}

// Start creates or updates the durable consumer and starts consuming.
func (w *Worker) Start(ctx context.Context) error {
	filter := w.cfg.Layout.FireSubjects()
	if w.cfg.Workflow != "" {
		filter = w.cfg.Layout.FireSubject(w.cfg.Workflow)
	}
	err := w.start(ctx, w.cfg.JetStream, w.cfg.Layout.FiresStream, jetstream.ConsumerConfig{
		Durable:       w.cfg.Durable,
		Description:   "jetsched demo worker",
		FilterSubject: filter,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       30 * time.Second,
		MaxDeliver:    w.cfg.MaxDeliver,
		DeliverPolicy: jetstream.DeliverNewPolicy,
	}, w.handle)
	if err != nil {
		return err
	}
	w.log.Info("worker consuming", "stream", w.cfg.Layout.FiresStream, "consumer", w.cfg.Durable, "filter", filter)
	return nil
}

func (w *Worker) handle(msg jetstream.Msg) {
	received := time.Now()
	meta, err := fire.ParseMeta(msg.Headers())
	if err != nil {
		w.log.Warn("not a fire message; terminating it", "subject", msg.Subject(), "err", err)
		_ = msg.TermWithReason("not a jetsched fire")
		return
	}
	md, _ := msg.Metadata()
	delivered := uint64(1)
	if md != nil {
		delivered = md.NumDelivered
	}
	lateness := received.Sub(meta.ScheduledAt)
	attrs := []any{
		"schedule", meta.ScheduleID, "workflow", meta.Workflow,
		"scheduled", meta.ScheduledAt.Format("15:04:05.000 MST"), "lateness", lateness.Round(100 * time.Microsecond),
		"slot", meta.SlotID, "delivery", delivered, "input", string(msg.Data()),
	}
	if meta.Reason != "" {
		attrs = append(attrs, "reason", meta.Reason)
	}
	if w.fail() {
		if int(delivered) >= w.cfg.MaxDeliver {
			w.log.Error("fire failed on its last delivery; giving up", attrs...)
			_ = msg.TermWithReason("demo worker: simulated failure, out of deliveries")
			w.done(meta, fire.OutcomeFailed, "simulated failure, out of deliveries")
			return
		}
		delay := time.Duration(1<<min(delivered-1, 5)) * time.Second
		w.log.Warn("fire failed (simulated); redelivery with backoff", append(attrs, "retry_in", delay)...)
		_ = msg.NakWithDelay(delay)
		return
	}
	if err := msg.Ack(); err != nil {
		w.log.Warn("ack", "slot", meta.SlotID, "err", err)
		return
	}
	w.log.Info("fire", attrs...)
	w.done(meta, fire.OutcomeCompleted, "")
	if w.cfg.OnFire != nil {
		w.cfg.OnFire(meta, lateness)
	}
}

// done reports the outcome on sched.done.<schedule id>, for the ledger
// and the overlap policies.
func (w *Worker) done(meta fire.Meta, outcome, errText string) {
	data, _ := json.Marshal(fire.DoneReport{SlotID: meta.SlotID, Outcome: outcome, Error: errText, Worker: w.cfg.Durable})
	if err := w.cfg.JetStream.Conn().Publish(w.cfg.Layout.DoneSubject(meta.ScheduleID), data); err != nil {
		w.log.Warn("report completion", "slot", meta.SlotID, "err", err)
	}
}

func (w *Worker) fail() bool {
	if w.cfg.FailRate == 0 {
		return false
	}
	w.randMu.Lock()
	defer w.randMu.Unlock()
	return w.rand.Float64() < w.cfg.FailRate
}
