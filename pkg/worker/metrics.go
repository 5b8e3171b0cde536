package worker

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jetsched/jetsched/internal/labelcap"
)

// metrics are a Worker's collectors, labelled by worker name, workflow
// (the message's, from its subject; capped by workflows) and kind (fire or
// wakeup). They count whether or not a Registerer was given.
type metrics struct {
	workflows *labelcap.Cap

	handled, failed, retried, deadLettered, cancelled, released *prometheus.CounterVec
	settleErrors                                                *prometheus.CounterVec
	duration                                                    *prometheus.HistogramVec
	inFlight                                                    *prometheus.GaugeVec
}

var labels = []string{"worker", "workflow", "kind"}

func newMetrics(reg prometheus.Registerer, workflowLimit int) (*metrics, error) {
	counter := func(name, help string, extra ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jetsched_worker_" + name, Help: help}, append(labels, extra...))
	}
	m := &metrics{
		workflows:    labelcap.New(workflowLimit),
		handled:      counter("handled_total", "Deliveries whose handler succeeded (acked)."),
		failed:       counter("failed_total", "Deliveries whose handler failed: an error, a panic or a timeout."),
		retried:      counter("retried_total", "Failed deliveries nak'ed for redelivery."),
		deadLettered: counter("dead_lettered_total", "Deliveries given up on after the last allowed one, copied to the dead letter subject."),
		cancelled:    counter("cancelled_total", "Fires whose handler a scheduler's cancel request ended (cancel_other)."),
		released:     counter("released_total", "Deliveries handed back (nak'ed at once) because the worker stopped."),
		settleErrors: counter("settle_errors_total", "Failed acks, naks, terms, in-progress pings, completion reports, dead letters and fetches, by op.", "op"),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "jetsched_worker_handler_duration_seconds",
			Help:    "How long handlers ran.",
			Buckets: []float64{.0005, .001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}}, labels),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "jetsched_worker_in_flight",
			Help: "Handlers running now."}, labels),
	}
	if reg == nil {
		return m, nil
	}
	// Several workers of one process may share a registry: they share
	// the collectors (their "worker" label tells them apart).
	var err error
	for _, c := range []**prometheus.CounterVec{&m.handled, &m.failed, &m.retried, &m.deadLettered, &m.cancelled, &m.released, &m.settleErrors} {
		if *c, err = register(reg, *c); err != nil {
			return nil, fmt.Errorf("worker: register metrics: %w", err)
		}
	}
	if m.duration, err = register(reg, m.duration); err != nil {
		return nil, fmt.Errorf("worker: register metrics: %w", err)
	}
	if m.inFlight, err = register(reg, m.inFlight); err != nil {
		return nil, fmt.Errorf("worker: register metrics: %w", err)
	}
	return m, nil
}

// register registers c, or returns the collector already registered
// under its name.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}
