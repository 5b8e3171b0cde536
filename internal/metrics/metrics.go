// Package metrics exposes a scheduler's measurements to Prometheus on
// /metrics, with /healthz and /readyz: fires, fire lateness, claims and
// conflicts, slots not fired by reason, leases held, pending timers, a
// per-schedule dead-man signal, and audit trail rollbacks.
package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/jetsched/jetsched/internal/fires"
)

// Metrics implements fires.Observer with Prometheus collectors in its own
// registry.
type Metrics struct {
	reg      *prometheus.Registry
	fires    *prometheus.CounterVec
	lateness *prometheus.HistogramVec
	claims   *prometheus.CounterVec
	notFired *prometheus.CounterVec
	leases   prometheus.Gauge
	rollback prometheus.Counter
}

// New creates the collectors, with Go and process metrics.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		fires: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jetsched_fires_total",
			Help: "Slots published, by workflow and Sched-Reason (\"\" regular)."}, []string{"workflow", "reason"}),
		lateness: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "jetsched_fire_lateness_seconds",
			Help:    "Publish time minus the slot's scheduled time.",
			Buckets: LatenessBuckets()}, []string{"workflow"}),
		claims: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jetsched_claims_total",
			Help: "Claim compare-and-swaps, by result (won, conflict)."}, []string{"result"}),
		notFired: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jetsched_slots_not_fired_total",
			Help: "Slots recorded without firing, by kind (missed, skipped) and reason (misfire, paused, operator, overlap, calendar)."}, []string{"kind", "reason"}),
		leases: prometheus.NewGauge(prometheus.GaugeOpts{Name: "jetsched_leases_held", Help: "Shard leases this instance holds."}),
		rollback: prometheus.NewCounter(prometheus.CounterOpts{Name: "jetsched_audit_rollbacks_total",
			Help: "Audit trail rollbacks this instance reported: the trail no longer extends a head it had (recreated, cut back, replaced) or an anchored head is forged."}),
	}
	m.reg.MustRegister(m.fires, m.lateness, m.claims, m.notFired, m.leases, m.rollback,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// LatenessBuckets are the upper bounds, in seconds, of the
// jetsched_fire_lateness_seconds histogram's buckets (the console's
// lateness histogram uses the same).
func LatenessBuckets() []float64 {
	return []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
}

// Fired implements fires.Observer.
func (m *Metrics) Fired(workflow string, lateness time.Duration, reason string) {
	m.fires.WithLabelValues(workflow, reason).Inc()
	m.lateness.WithLabelValues(workflow).Observe(lateness.Seconds())
}

// Claimed implements fires.Observer.
func (m *Metrics) Claimed(conflict bool) {
	result := "won"
	if conflict {
		result = "conflict"
	}
	m.claims.WithLabelValues(result).Inc()
}

// NotFired implements fires.Observer.
func (m *Metrics) NotFired(kind, reason string, n int) {
	m.notFired.WithLabelValues(kind, reason).Add(float64(n))
}

// Leases implements fires.Observer.
func (m *Metrics) Leases(n int) { m.leases.Set(float64(n)) }

// AuditRollback implements auditor.Observer.
func (m *Metrics) AuditRollback() { m.rollback.Inc() }

// Sources are what the scrape-time collectors ask.
type Sources struct {
	// Overdue lists schedules late beyond Tolerance (fires.Engine.Overdue).
	Overdue   func(ctx context.Context, tolerance time.Duration) ([]fires.Overdue, error)
	Tolerance time.Duration
	// Pending is the number of pending timers (timers.Engine.Pending).
	Pending func() int
}

// Watch registers the scrape-time collectors: the dead-man gauge
// jetsched_schedule_overdue_seconds{schedule,workflow} (one series per
// schedule whose expected fire has not been seen within the tolerance) and
// jetsched_timers_pending.
func (m *Metrics) Watch(s Sources) {
	m.reg.MustRegister(&snapshot{src: s,
		overdue: prometheus.NewDesc("jetsched_schedule_overdue_seconds",
			"How late a schedule's next slot is, for schedules late beyond the dead-man tolerance (none: all on time).",
			[]string{"schedule", "workflow"}, nil),
		pending: prometheus.NewDesc("jetsched_timers_pending", "Timers pending in this instance's index.", nil, nil),
	})
}

type snapshot struct {
	src              Sources
	overdue, pending *prometheus.Desc
}

func (s *snapshot) Describe(ch chan<- *prometheus.Desc) { ch <- s.overdue; ch <- s.pending }

func (s *snapshot) Collect(ch chan<- prometheus.Metric) {
	if s.src.Overdue != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if list, err := s.src.Overdue(ctx, s.src.Tolerance); err == nil {
			for _, o := range list {
				ch <- prometheus.MustNewConstMetric(s.overdue, prometheus.GaugeValue, o.Late.Seconds(), o.ID, o.Workflow)
			}
		}
	}
	if s.src.Pending != nil {
		ch <- prometheus.MustNewConstMetric(s.pending, prometheus.GaugeValue, float64(s.src.Pending()))
	}
}

// Server serves /metrics, /healthz and /readyz.
type Server struct {
	srv *http.Server
	ln  net.Listener
	err chan error
}

// Serve listens on addr. ready reports why the scheduler is not ready
// (nil: ready) for /readyz.
func (m *Metrics) Serve(addr string, ready func() error) (*Server, error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, ln: ln, err: make(chan error, 1)}
	go func() { s.err <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the listening address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Shutdown stops the server and waits for it.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if serr := <-s.err; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}
