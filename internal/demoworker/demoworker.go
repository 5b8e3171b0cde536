// Package demoworker is the example worker behind `scheduler demo` and
// cmd/workerdemo, built on pkg/worker: it logs each fire with its lateness
// (or fails some on purpose, to show redelivery with backoff and the dead
// letter; or works a while, to show concurrent handlers, timeouts and
// cancel_other), and plays the approval side of wakeups.
package demoworker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/worker"
)

// Config configures a Worker.
type Config struct {
	// JetStream is the connection. Required.
	JetStream jetstream.JetStream
	// Layout names the fire stream and subjects. Zero value: defaults.
	Layout kvstore.Layout
	// Durable names the consumer ("<durable>-fire-<workflow>"). Default
	// "workerdemo".
	Durable string
	// Workflow narrows the worker to one workflow. Default: all.
	Workflow string
	// FailRate is the fraction of deliveries (0 to 1) that fail on purpose
	// and are redelivered with backoff (1s, 2s, 4s...). Default 0.
	FailRate float64
	// MaxDeliver bounds deliveries per fire. Default 5.
	MaxDeliver int
	// MaxWorkers bounds the fires handled at once (worker.Config's).
	// Default worker.DefaultMaxWorkers.
	MaxWorkers int
	// Work is how long each fire's simulated work takes; it ends early
	// when the handler's context ends (a Timeout, a cancel request of
	// overlap cancel_other, a stop). Default 0: none.
	Work time.Duration
	// Timeout bounds each fire's handler (worker.Config's). Default 0: no
	// limit.
	Timeout time.Duration
	// Registerer, if set, gets the worker's Prometheus collectors.
	Registerer prometheus.Registerer
	// Logger receives one line per fire. Default: discard.
	Logger *slog.Logger
	// TracerProvider, when set, runs each handler in a span, the child of
	// the fire's dispatch span (worker.Config.TracerProvider).
	TracerProvider trace.TracerProvider
	// OnFire, if set, is called for every fire the worker acks.
	OnFire func(kvstore.FireMeta, time.Duration)
}

// Worker consumes fires until Stop.
type Worker struct {
	*worker.Worker
	cfg Config
	log *slog.Logger

	randMu sync.Mutex
	rand   *rand.Rand
}

// New validates cfg.
func New(cfg Config) (*Worker, error) {
	if cfg.JetStream == nil {
		return nil, errors.New("demoworker: Config.JetStream is required")
	}
	if cfg.FailRate < 0 || cfg.FailRate > 1 {
		return nil, fmt.Errorf("demoworker: fail rate %v: must be between 0 and 1", cfg.FailRate)
	}
	if cfg.Work < 0 {
		return nil, fmt.Errorf("demoworker: work %s: must not be negative", cfg.Work)
	}
	wf := cmp.Or(cfg.Workflow, worker.AllWorkflows)
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.NewTextHandler(io.Discard, nil)))
	w := &Worker{cfg: cfg, log: cfg.Logger, rand: rand.New(rand.NewPCG(rand.Uint64(), 0))}
	inner, err := worker.New(worker.Config{
		JetStream: cfg.JetStream, Layout: cfg.Layout, Name: cmp.Or(cfg.Durable, "workerdemo"), MaxDeliver: cfg.MaxDeliver,
		BackOff:    []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second},
		MaxWorkers: cfg.MaxWorkers, Timeout: cfg.Timeout, Registerer: cfg.Registerer, Logger: cfg.Logger,
		TracerProvider: cfg.TracerProvider,
	})
	if err != nil {
		return nil, fmt.Errorf("demoworker: %w", err)
	}
	if err := inner.Handle(wf, w.handle); err != nil {
		return nil, fmt.Errorf("demoworker: %w", err)
	}
	w.Worker = inner
	return w, nil
}

func (w *Worker) handle(ctx context.Context, f worker.Fire) error {
	lateness := time.Since(f.ScheduledAt)
	attrs := []any{
		"schedule", f.ScheduleID, "workflow", f.Workflow,
		"scheduled", f.ScheduledAt.Format("15:04:05.000 MST"), "lateness", lateness.Round(100 * time.Microsecond),
		"slot", f.SlotID, "delivery", f.Delivery, "input", string(f.Input),
	}
	if f.Reason != "" {
		attrs = append(attrs, "reason", f.Reason)
	}
	if w.cfg.Work > 0 {
		t := time.NewTimer(w.cfg.Work)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			w.log.Warn("fire's work ended early", append(attrs, "cause", context.Cause(ctx))...)
			return context.Cause(ctx)
		}
	}
	if w.fail() {
		w.log.Warn("fire failed (simulated)", attrs...)
		return errors.New("simulated failure")
	}
	w.log.Info("fire", attrs...)
	if w.cfg.OnFire != nil {
		w.cfg.OnFire(f.FireMeta, lateness)
	}
	return nil
}

func (w *Worker) fail() bool {
	if w.cfg.FailRate == 0 {
		return false
	}
	w.randMu.Lock()
	defer w.randMu.Unlock()
	return w.rand.Float64() < w.cfg.FailRate
}
