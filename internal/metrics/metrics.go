// Package metrics exposes a scheduler's measurements to Prometheus on
// /metrics, with /healthz and /readyz: fires, fire lateness, claims and
// conflicts, slots not fired by reason, leases held and those whose guard
// is closed, pending timers, a per-schedule dead-man signal, invalid and
// stalled schedules, observer events by kind, failed publish attempts,
// and audit trail rollbacks.
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

	"github.com/jetsched/jetsched/internal/eventfilter"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/labelcap"
	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/internal/timers"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Metrics implements fires.Observer with Prometheus collectors in its own
// registry.
type Metrics struct {
	reg         *prometheus.Registry
	fires       *prometheus.CounterVec
	lateness    *prometheus.HistogramVec
	claims      *prometheus.CounterVec
	notFired    *prometheus.CounterVec
	leases      prometheus.Gauge
	guards      prometheus.Gauge
	rollback    prometheus.Counter
	appendFails prometheus.Counter
	events      *prometheus.CounterVec
	pubErrs     *prometheus.CounterVec
	blocked     *prometheus.GaugeVec
	undeliv     *prometheus.CounterVec
	backlog     backlogGauges
	// workflows caps the workflow label of fires and lateness.
	workflows *labelcap.Cap
}

// Config configures Metrics.
type Config struct {
	// WorkflowLimit caps the distinct values of the workflow label: the
	// first WorkflowLimit workflows seen keep their own series, later ones
	// are counted under workflow="other". Default 100 (labelcap.DefaultMax);
	// negative: every workflow is "other".
	WorkflowLimit int
}

// New creates the collectors, with Go and process metrics.
func New(cfg Config) *Metrics {
	m := &Metrics{
		reg:       prometheus.NewRegistry(),
		workflows: labelcap.New(cfg.WorkflowLimit),
		fires: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jetsched_fires_total",
			Help: "Slots published, by workflow (the first --metrics-workflow-limit seen; the rest \"other\") and Sched-Reason (\"\" regular)."}, []string{"workflow", "reason"}),
		lateness: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "jetsched_fire_lateness_seconds",
			Help:    "Publish time minus the slot's scheduled time.",
			Buckets: LatenessBuckets()}, []string{"workflow"}),
		claims: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jetsched_claims_total",
			Help: "Claim compare-and-swaps, by result (won, conflict)."}, []string{"result"}),
		notFired: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jetsched_slots_not_fired_total",
			Help: "Slots recorded without firing, by kind (missed, skipped) and reason (misfire, paused, operator, overlap, calendar)."}, []string{"kind", "reason"}),
		leases: prometheus.NewGauge(prometheus.GaugeOpts{Name: "jetsched_leases_held", Help: "Shard leases this instance holds."}),
		guards: prometheus.NewGauge(prometheus.GaugeOpts{Name: "jetsched_lease_guards_closed",
			Help: "Shard leases this instance holds whose guard is closed: no renewal for 90% of the TTL, so their schedules and timers are not dispatched until one succeeds (the guard_closed and guard_opened events)."}),
		rollback: prometheus.NewCounter(prometheus.CounterOpts{Name: "jetsched_audit_rollbacks_total",
			Help: "Audit trail rollbacks this instance reported: the trail no longer extends a head it had (recreated, cut back, replaced) or an anchored head is forged."}),
		appendFails: prometheus.NewCounter(prometheus.CounterOpts{Name: "jetsched_audit_append_failures_total",
			Help: "Audit trail appends this instance could not make (the trail full, unreachable or refusing): each refused a change (audit_unavailable) or left an intent without its abandoned record or checkpoint."}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jetsched_events_total",
			Help: "Observer events raised, published or not (--events), by source (schedules, timers) and kind (invalid, stalled, failed, lease_gained, lease_lost, missed, skipped...)."}, []string{"source", "kind"}),
		pubErrs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jetsched_publish_errors_total",
			Help: "Failed attempts to publish a claimed fire or wakeup, by stream (fires, wakeups) and reason (stream_full, account_limit, unacknowledged, too_large, other); each but too_large is retried until shortly before its claim expires, then taken over."}, []string{"stream", "reason"}),
		blocked: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "jetsched_publish_blocked",
			Help: "1 while a stream does not take this instance's publishes, by stream (fires, wakeups) and reason (stream_full, account_limit, unacknowledged): from the first refusal to the next acknowledgement."}, []string{"stream", "reason"}),
		undeliv: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jetsched_undeliverable_total",
			Help: "Fires and wakeups a consumer delivered max_deliver times without an ack and gave up on (the server's MAX_DELIVERIES advisories, one scheduler of the fleet counting each), by stream (fires, wakeups) and consumer."}, []string{"stream", "consumer"}),
	}
	m.reg.MustRegister(m.fires, m.lateness, m.claims, m.notFired, m.leases, m.guards, m.rollback, m.appendFails, m.events, m.pubErrs, m.blocked, m.undeliv,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.backlog = newBacklogGauges(m.reg)
	m.zero()
	return m
}

// timerEvents are the event kinds the wakeup engine raises.
var timerEvents = []kvstore.EventKind{kvstore.EventInvalid, kvstore.EventFailed, kvstore.EventStalled,
	kvstore.EventWakeupExpired, kvstore.EventStale, kvstore.EventStreamFull, kvstore.EventAccountLimit, kvstore.EventUnacknowledged,
	kvstore.EventUndeliverable}

// zero creates the series of every known label value at 0, so that a
// rate() or an alert on them sees a value before the first occurrence
// (a counter born at 1 hides its first increase).
func (m *Metrics) zero() {
	m.claims.WithLabelValues("won")
	m.claims.WithLabelValues("conflict")
	for _, k := range eventfilter.SchedulerEvents() {
		if k != kvstore.EventWakeupExpired && k != kvstore.EventStale {
			m.events.WithLabelValues("schedules", string(k))
		}
	}
	for _, k := range timerEvents {
		m.events.WithLabelValues("timers", string(k))
	}
	for _, stream := range []string{"fires", "wakeups"} {
		for _, r := range natserr.Refusals() {
			m.pubErrs.WithLabelValues(stream, string(r))
		}
		for _, r := range []natserr.Refusal{natserr.StreamFull, natserr.AccountLimit, natserr.Unacknowledged} {
			m.blocked.WithLabelValues(stream, string(r))
		}
	}
	for _, kr := range [][2]string{{"missed", "misfire"}, {"missed", "other"}, {"skipped", "other"}, {"skipped", "paused"}, {"skipped", "operator"},
		{"skipped", "overlap"}, {"skipped", "calendar"}, {"failed", "publish"}} {
		m.notFired.WithLabelValues(kr[0], kr[1])
	}
}

// LatenessBuckets are the upper bounds, in seconds, of the
// jetsched_fire_lateness_seconds histogram's buckets (the console's
// lateness histogram uses the same).
func LatenessBuckets() []float64 {
	return []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
}

// Fired implements fires.Observer.
func (m *Metrics) Fired(workflow string, lateness time.Duration, reason string) {
	workflow = m.workflows.Value(workflow)
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

// GuardsClosed implements fires.Observer.
func (m *Metrics) GuardsClosed(n int) { m.guards.Set(float64(n)) }

// Event implements fires.Observer.
func (m *Metrics) Event(kind kvstore.EventKind) {
	m.events.WithLabelValues("schedules", string(kind)).Inc()
}

// PublishError implements fires.Observer.
func (m *Metrics) PublishError(reason string) { m.pubErrs.WithLabelValues("fires", reason).Inc() }

// PublishBlocked implements fires.Observer.
func (m *Metrics) PublishBlocked(reason string, on bool) {
	m.blocked.WithLabelValues("fires", reason).Set(b2f(on))
}

func b2f(on bool) float64 {
	if on {
		return 1
	}
	return 0
}

// Undeliverable counts a fire or wakeup (stream "fires", "wakeups") that
// consumer gave up on (undelivered.Config.Observer).
func (m *Metrics) Undeliverable(stream, consumer string) {
	m.undeliv.WithLabelValues(stream, consumer).Inc()
}

// SourceEvent counts an event of kind raised about source ("schedules",
// "timers") outside the engines (undelivered.Config.Event).
func (m *Metrics) SourceEvent(source string, kind kvstore.EventKind) {
	m.events.WithLabelValues(source, string(kind)).Inc()
}

// Wakeups is the wakeup engine's observer (timers.Observer), counted
// apart from the fire engine's.
func (m *Metrics) Wakeups() timers.Observer { return wakeupObserver{m} }

type wakeupObserver struct{ m *Metrics }

func (w wakeupObserver) Event(kind kvstore.EventKind) {
	w.m.events.WithLabelValues("timers", string(kind)).Inc()
}

func (w wakeupObserver) PublishError(reason string) {
	w.m.pubErrs.WithLabelValues("wakeups", reason).Inc()
}

func (w wakeupObserver) PublishBlocked(reason string, on bool) {
	w.m.blocked.WithLabelValues("wakeups", reason).Set(b2f(on))
}

// AuditRollback implements auditor.Observer.
func (m *Metrics) AuditRollback() { m.rollback.Inc() }

// AuditAppendFailure implements auditor.Observer.
func (m *Metrics) AuditAppendFailure() { m.appendFails.Inc() }

// Sources are what the scrape-time collectors ask.
type Sources struct {
	// Health tells the schedules late beyond Tolerance, invalid and
	// stalled (fires.Engine.Health).
	Health    func(ctx context.Context, tolerance time.Duration) (fires.Health, error)
	Tolerance time.Duration
	// Pending is the number of pending timers (timers.Engine.Pending).
	Pending func() int
}

// Watch registers the scrape-time collectors: the dead-man gauge
// jetsched_schedule_overdue_seconds{schedule,workflow} (one series per
// schedule whose expected fire has not been seen within the tolerance),
// jetsched_schedules_invalid, jetsched_schedules_stalled (of this
// instance's shards), jetsched_specs_uncompiled, jetsched_shards and
// jetsched_timers_pending.
func (m *Metrics) Watch(s Sources) {
	m.reg.MustRegister(&snapshot{src: s,
		overdue: prometheus.NewDesc("jetsched_schedule_overdue_seconds",
			"How late a schedule's next slot is, for schedules late beyond the dead-man tolerance (none: all on time).",
			[]string{"schedule", "workflow"}, nil),
		invalid: prometheus.NewDesc("jetsched_schedules_invalid",
			"Schedules of this instance's shards whose spec is invalid: they do not fire until fixed (see the invalid events).", nil, nil),
		stalled: prometheus.NewDesc("jetsched_schedules_stalled",
			"Schedules of this instance's shards whose steps failed several times in a row; they are still retried.", nil, nil),
		uncompiled: prometheus.NewDesc("jetsched_specs_uncompiled",
			"Specs left uncompiled at the start, to be compiled as their slot approaches or by the pass after the index is ready: 0 soon after ready.", nil, nil),
		shards: prometheus.NewDesc("jetsched_shards",
			"The fleet's shard count: sum(jetsched_leases_held) below it means shards no instance holds, whose schedules do not fire.", nil, nil),
		pending: prometheus.NewDesc("jetsched_timers_pending", "Timers pending in this instance's index.", nil, nil),
	})
}

type snapshot struct {
	src                                                    Sources
	overdue, invalid, stalled, uncompiled, shards, pending *prometheus.Desc
}

func (s *snapshot) Describe(ch chan<- *prometheus.Desc) {
	ch <- s.overdue
	ch <- s.invalid
	ch <- s.stalled
	ch <- s.uncompiled
	ch <- s.shards
	ch <- s.pending
}

func (s *snapshot) Collect(ch chan<- prometheus.Metric) {
	if s.src.Health != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if h, err := s.src.Health(ctx, s.src.Tolerance); err == nil {
			for _, o := range h.Overdue {
				ch <- prometheus.MustNewConstMetric(s.overdue, prometheus.GaugeValue, o.Late.Seconds(), o.ID, o.Workflow)
			}
			ch <- prometheus.MustNewConstMetric(s.invalid, prometheus.GaugeValue, float64(h.Invalid))
			ch <- prometheus.MustNewConstMetric(s.stalled, prometheus.GaugeValue, float64(h.Stalled))
			ch <- prometheus.MustNewConstMetric(s.uncompiled, prometheus.GaugeValue, float64(h.Uncompiled))
			if h.Shards > 0 {
				ch <- prometheus.MustNewConstMetric(s.shards, prometheus.GaugeValue, float64(h.Shards))
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
	// served is closed when Serve has returned, serveErr (written by the
	// serving goroutine before it closes served) is what it returned.
	served   chan struct{}
	serveErr error
}

// Serve listens on addr. ready reports why the scheduler is not ready
// (nil: ready) for /readyz. profiling adds Go's profiles under
// /debug/pprof/ (net/http/pprof): CPU, heap, goroutines, for an operator
// who asks for them; not the command line, and no profile longer than
// MaxProfileSeconds (profiles).
func (m *Metrics) Serve(addr string, ready func() error, profiling bool) (*Server, error) {
	mux := http.NewServeMux()
	if profiling {
		mux.Handle("/debug/pprof/", profiles())
	}
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
	s := &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, ln: ln, served: make(chan struct{})}
	go func() {
		defer close(s.served)
		s.serveErr = s.srv.Serve(ln)
	}()
	return s, nil
}

// Addr is the listening address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Shutdown stops the server and waits for it, at most until ctx ends. It
// may be called more than once.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	select {
	case <-s.served:
	case <-ctx.Done():
		return ctx.Err()
	}
	if s.serveErr != nil && !errors.Is(s.serveErr, http.ErrServerClosed) {
		return s.serveErr
	}
	return err
}
