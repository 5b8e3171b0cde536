package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jetsched/jetsched/internal/testlog"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/worker"
)

// TestErrorTypes: the errors handlers return are exported types that
// errors.As finds through wrapping.
func TestErrorTypes(t *testing.T) {
	t.Parallel()
	cause := errors.New("db down")
	var re *worker.RetryError
	if err := fmt.Errorf("sync: %w", worker.Retry(cause, 3*time.Second)); !errors.As(err, &re) || re.After != 3*time.Second || !errors.Is(err, cause) {
		t.Fatalf("Retry: errors.As found %+v in %v", re, err)
	}
	var pe *worker.PermanentError
	if err := fmt.Errorf("sync: %w", worker.Permanent(cause)); !errors.As(err, &pe) || pe.Err != cause {
		t.Fatalf("Permanent: errors.As found %+v in %v", pe, err)
	}
	if worker.Retry(nil, time.Second).Error() == "" || worker.Permanent(nil).Error() == "" {
		t.Fatal("nil causes give empty messages")
	}
}

// TestPanicIsAFailedDelivery: a panicking handler does not kill the
// process: the delivery fails (retried with the backoff, dead-lettered at
// MaxDeliver), the ErrorHandler sees a *PanicError, and the stack is
// logged with the slot and the delivery number.
func TestPanicIsAFailedDelivery(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	reg := prometheus.NewRegistry()
	var logs testlog.Buffer
	seen := make(chan error, 8)
	e.worker(worker.Config{MaxDeliver: 2, BackOff: []time.Duration{50 * time.Millisecond}, Registerer: reg,
		Logger:       slog.New(slog.NewJSONHandler(&logs, nil)),
		ErrorHandler: func(_ context.Context, _ worker.Delivery, err error) { seen <- err },
	}, func(w *worker.Worker) {
		_ = w.Handle("crashy", func(_ context.Context, f worker.Fire) error {
			if f.ScheduleID == "once" && f.Delivery > 1 {
				return nil
			}
			var m map[string]int
			m["boom"]++ // a nil map write: a runtime panic
			return nil
		})
	})
	once := e.publishFire("once", "crashy")
	var pe *worker.PanicError
	if err := testwait.Receive(t, 5*time.Second, "the panic", seen); !errors.As(err, &pe) || len(pe.Stack) == 0 {
		t.Fatalf("ErrorHandler got %v, want a *PanicError with a stack", err)
	}
	if d := e.done(5 * time.Second); d.SlotID != once || d.Outcome != kvstore.OutcomeCompleted {
		t.Fatalf("report %+v, want completed on the second delivery", d)
	}
	always := e.publishFire("always", "crashy")
	testwait.Receive(t, 5*time.Second, "the first panic", seen)
	testwait.Receive(t, 5*time.Second, "the last panic", seen)
	if d := e.done(5 * time.Second); d.SlotID != always || d.Outcome != kvstore.OutcomeFailed || !strings.Contains(d.Error, "dead-lettered after 2 deliveries: handler panicked") {
		t.Fatalf("report %+v, want failed: dead-lettered", d)
	}
	if dl := testwait.Receive(t, 5*time.Second, "the dead letter", e.dead); dl.Header.Get("Sched-Original-Id") != always {
		t.Fatalf("dead letter %v", dl.Header)
	}
	// The log line of a panic names the slot and the delivery, with the stack.
	found := false
	for line := range strings.Lines(logs.String()) {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["slot"] != always {
			continue
		}
		if rec["delivery"] == float64(2) && strings.Contains(fmt.Sprint(rec["stack"]), "runtime/debug.Stack") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no log line with slot %s, delivery 2 and the stack:\n%s", always, logs.String())
	}
	for name, want := range map[string]float64{"failed": 3, "retried": 2, "dead_lettered": 1, "handled": 1} {
		if got := counter(t, reg, "jetsched_worker_"+name+"_total", "crashy"); got != want {
			t.Errorf("jetsched_worker_%s_total{workflow=crashy} = %v, want %v", name, got, want)
		}
	}
	if n := histogramCount(t, reg, "jetsched_worker_handler_duration_seconds", "crashy"); n != 4 {
		t.Errorf("%d handler durations observed, want 4", n)
	}
}

// counter reads a counter of a workflow's fires from reg.
func counter(t *testing.T, reg *prometheus.Registry, name, workflow string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "workflow" && l.GetValue() == workflow {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

// histogramCount reads how many observations a workflow's histogram has.
func histogramCount(t *testing.T, reg *prometheus.Registry, name, workflow string) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if mf.GetName() == name && l.GetName() == "workflow" && l.GetValue() == workflow {
					return m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return 0
}

// TestSettleErrorsAreCountedAndPassedOn: an ack that cannot be sent (the
// connection is gone) is logged, counted and given to the ErrorHandler as
// a *SettleError, never dropped.
func TestSettleErrorsAreCountedAndPassedOn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	nc, err := nats.Connect(e.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	started, release, settleErrs := make(chan struct{}), make(chan struct{}), make(chan *worker.SettleError, 64)
	e.worker(worker.Config{JetStream: js, Registerer: reg, ErrorHandler: func(_ context.Context, _ worker.Delivery, err error) {
		var se *worker.SettleError
		if errors.As(err, &se) {
			select {
			case settleErrs <- se:
			default:
			}
		}
	}}, func(w *worker.Worker) {
		_ = w.Handle("jobs", func(context.Context, worker.Fire) error {
			close(started)
			<-release
			return nil
		})
	})
	e.publishFire("s", "jobs")
	testwait.Done(t, 5*time.Second, "the handler", started)
	nc.Close()
	close(release)
	for {
		se := testwait.Receive(t, 5*time.Second, "the failed ack", settleErrs)
		if se.Op == "ack" {
			if !errors.Is(se, nats.ErrConnectionClosed) {
				t.Fatalf("ack error %v, want ErrConnectionClosed", se)
			}
			break
		}
	}
	if got := counter(t, reg, "jetsched_worker_settle_errors_total", "jobs"); got < 1 {
		t.Fatalf("settle errors counted: %v", got)
	}
}

// TestInFlightGauge: the in-flight gauge counts running handlers.
func TestInFlightGauge(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	reg := prometheus.NewRegistry()
	started, release := make(chan struct{}, 2), make(chan struct{})
	e.worker(worker.Config{Registerer: reg}, func(w *worker.Worker) {
		_ = w.Handle("jobs", func(context.Context, worker.Fire) error {
			started <- struct{}{}
			<-release
			return nil
		})
	})
	e.publishFireAt("a", "jobs", time.Now())
	e.publishFireAt("b", "jobs", time.Now())
	testwait.Receive(t, 5*time.Second, "handler a", started)
	testwait.Receive(t, 5*time.Second, "handler b", started)
	gauge := func() float64 {
		mfs, _ := reg.Gather()
		for _, mf := range mfs {
			if mf.GetName() == "jetsched_worker_in_flight" {
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		return -1
	}
	if g := gauge(); g != 2 {
		t.Fatalf("in flight %v, want 2", g)
	}
	close(release)
	e.done(5 * time.Second)
	e.done(5 * time.Second)
	if g := gauge(); g != 0 {
		t.Fatalf("in flight %v after both returned, want 0", g)
	}
}

// TestConfigValidation: bad settings are refused naming the field.
func TestConfigValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		cfg  worker.Config
		want string
	}{
		{worker.Config{}, "Config.JetStream"},
		{worker.Config{JetStream: e.js, AckWait: time.Millisecond}, "Config.AckWait"},
		{worker.Config{JetStream: e.js, MaxWorkers: -1}, "Config.MaxWorkers"},
		{worker.Config{JetStream: e.js, MaxWorkers: 20, MaxWorkersTotal: 10}, "Config.MaxWorkers 20: must not exceed MaxWorkersTotal 10"},
		{worker.Config{JetStream: e.js, Timeout: -time.Second}, "Config.Timeout"},
		{worker.Config{JetStream: e.js, Name: "a.b"}, "Config.Name"},
	} {
		if _, err := worker.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v): %v, want an error naming %s", tc.cfg, err, tc.want)
		}
	}
	w, err := worker.New(worker.Config{JetStream: e.js, MaxWorkersTotal: 4})
	if err != nil {
		t.Fatal(err)
	}
	h := func(context.Context, worker.Fire) error { return nil }
	for _, tc := range []struct {
		opt  worker.HandlerOption
		want string
	}{
		{worker.WithMaxWorkers(0), "WithMaxWorkers(0)"},
		{worker.WithMaxWorkers(5), "must not exceed MaxWorkersTotal 4"},
		{worker.WithTimeout(-1), "WithTimeout"},
	} {
		if err := w.Handle("jobs", h, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Handle with an option: %v, want %q", err, tc.want)
		}
	}
	if err := w.Handle("a.b", h); err == nil {
		t.Error("workflow a.b accepted")
	}
}
