package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jetsched/jetsched/internal/fires"
)

// backlogGauges are the due backlog's (fires.BacklogObserver).
type backlogGauges struct {
	waiting prometheus.Gauge
	oldest  prometheus.Gauge
}

// newBacklogGauges registers the backlog's gauges in reg, at 0.
func newBacklogGauges(reg *prometheus.Registry) backlogGauges {
	g := backlogGauges{
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{Name: "jetsched_due_backlog",
			Help: "Schedules due and not yet taken up by a worker of this instance: above 0 for more than a moment, the instance is overloaded (the overloaded and caught_up events); each takes its turn under its misfire policy."}),
		oldest: prometheus.NewGauge(prometheus.GaugeOpts{Name: "jetsched_due_backlog_seconds",
			Help: "How late the oldest schedule of the due backlog is (0: none waits)."}),
	}
	reg.MustRegister(g.waiting, g.oldest)
	return g
}

// DueBacklog implements fires.BacklogObserver.
func (m *Metrics) DueBacklog(n int, oldest time.Duration) {
	m.backlog.waiting.Set(float64(n))
	m.backlog.oldest.Set(oldest.Seconds())
}

var _ fires.BacklogObserver = (*Metrics)(nil)
