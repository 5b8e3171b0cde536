package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/worker"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type env struct {
	t     *testing.T
	srv   *natstest.Server
	nc    *nats.Conn
	js    jetstream.JetStream
	dones chan doneMsg
	dead  chan *nats.Msg
}

// doneMsg is a completion report and the subject it came on.
type doneMsg struct {
	kvstore.DoneReport
	subject string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvOn(t, natstest.Start(t))
}

// newEnvOn is newEnv on srv.
func newEnvOn(t *testing.T, srv *natstest.Server) *env {
	t.Helper()
	nc, js := srv.Connect(t)
	if err := jsstore.Setup(context.Background(), js, jsstore.SetupConfig{}); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, srv: srv, nc: nc, js: js, dones: make(chan doneMsg, 64), dead: make(chan *nats.Msg, 4)}
	sub, err := nc.Subscribe("sched.done.>", func(m *nats.Msg) {
		d := doneMsg{subject: m.Subject}
		if json.Unmarshal(m.Data, &d.DoneReport) == nil {
			e.dones <- d
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	dsub, err := nc.Subscribe("sched.event.dead_letter.>", func(m *nats.Msg) { e.dead <- m })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe(); _ = dsub.Unsubscribe() })
	return e
}

func (e *env) publishFire(schedule, workflow string) string {
	e.t.Helper()
	return e.publishFireAt(schedule, workflow, time.Now())
}

func (e *env) publishFireAt(schedule, workflow string, at time.Time) string {
	e.t.Helper()
	m, id := fireMsg(schedule, workflow, at, []byte(`{"n":1}`))
	if _, err := e.js.PublishMsg(context.Background(), m, jetstream.WithMsgID(id)); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// fireMsg is the fire of schedule's slot at with input, and its slot id.
func fireMsg(schedule, workflow string, at time.Time, input []byte) (*nats.Msg, string) {
	at = at.Truncate(time.Millisecond)
	m := nats.NewMsg("sched.fire." + workflow + "." + schedule)
	m.Header.Set(kvstore.HeaderScheduleID, schedule)
	m.Header.Set(kvstore.HeaderWorkflow, workflow)
	m.Header.Set(kvstore.HeaderScheduledAt, at.Format(time.RFC3339Nano))
	m.Data = input
	return m, kvstore.SlotID(schedule, at)
}

// worker starts a worker on the env's connection (Name "svc" unless
// cfg says); it is stopped, its handlers cancelled, when the test ends.
func (e *env) worker(cfg worker.Config, setup func(*worker.Worker)) *worker.Worker {
	e.t.Helper()
	if cfg.JetStream == nil {
		cfg.JetStream = e.js
	}
	if cfg.Name == "" {
		cfg.Name = "svc"
	}
	w, err := worker.New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	setup(w)
	if err := w.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { stop(e.t, w) })
	return w
}

// stop stops w, cancelling its handlers, within 10s.
func stop(t *testing.T, w *worker.Worker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.StopAndCancel(ctx); err != nil {
		t.Errorf("StopAndCancel: %v", err)
	}
}

// settled waits until the consumer (on SCHED_FIRES; "SCHED_WAKEUPS/name"
// for the wakeups') has no delivery pending, and returns its info.
func (e *env) settled(consumer string, timeout time.Duration) *jetstream.ConsumerInfo {
	e.t.Helper()
	stream := "SCHED_FIRES"
	if s, c, ok := strings.Cut(consumer, "/"); ok {
		stream, consumer = s, c
	}
	cons, err := e.js.Consumer(context.Background(), stream, consumer)
	if err != nil {
		e.t.Fatal(err)
	}
	var info *jetstream.ConsumerInfo
	err = testwait.Until(timeout, "consumer "+consumer+" settled", func() error {
		var err error
		if info, err = cons.Info(context.Background()); err != nil {
			return err
		}
		if info.NumAckPending != 0 || info.NumPending != 0 || info.NumRedelivered != 0 {
			return fmt.Errorf("%d pending, %d ack pending, %d redelivered; delivered %+v, ack floor %+v",
				info.NumPending, info.NumAckPending, info.NumRedelivered, info.Delivered, info.AckFloor)
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return info
}

// done waits for the next completion report.
func (e *env) done(timeout time.Duration) doneMsg {
	e.t.Helper()
	return testwait.Receive(e.t, timeout, "a completion report", e.dones)
}

func TestAckAndCompletion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	got := make(chan worker.Fire, 1)
	e.worker(worker.Config{}, func(w *worker.Worker) {
		_ = w.Handle("billing", func(_ context.Context, f worker.Fire) error { got <- f; return nil })
	})
	id := e.publishFire("bill", "billing")
	f := testwait.Receive(t, 5*time.Second, "the fire", got)
	if f.SlotID != id || string(f.Input) != `{"n":1}` || f.Delivery != 1 || f.Subject != "sched.fire.billing.bill" {
		t.Fatalf("fire %+v", f)
	}
	// The report's subject carries the workflow, so that permissions can
	// scope a worker to its workflows.
	if d := e.done(5 * time.Second); d.SlotID != id || d.Outcome != kvstore.OutcomeCompleted || d.Worker != "svc" || d.subject != "sched.done.billing.bill" {
		t.Fatalf("report %+v", d)
	}
}

func TestRetryPermanentAndDeadLetter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var calls atomic.Int32
	e.worker(worker.Config{MaxDeliver: 3, BackOff: []time.Duration{100 * time.Millisecond}}, func(w *worker.Worker) {
		_ = w.Handle("retry", func(_ context.Context, f worker.Fire) error {
			if f.Delivery == 1 {
				return worker.Retry(errors.New("not ready"), 200*time.Millisecond)
			}
			return nil
		})
		_ = w.Handle("perm", func(context.Context, worker.Fire) error { return worker.Permanent(errors.New("bad input")) })
		_ = w.Handle("flaky", func(context.Context, worker.Fire) error { calls.Add(1); return errors.New("boom") })
	})
	retryID := e.publishFire("r", "retry")
	if d := e.done(5 * time.Second); d.SlotID != retryID || d.Outcome != kvstore.OutcomeCompleted {
		t.Fatalf("retried fire: %+v", d)
	}
	permID := e.publishFire("p", "perm")
	if d := e.done(5 * time.Second); d.SlotID != permID || d.Outcome != kvstore.OutcomeFailed || d.Error == "" {
		t.Fatalf("permanent failure: %+v", d)
	}
	flakyID := e.publishFire("f", "flaky")
	d := e.done(10 * time.Second)
	if d.SlotID != flakyID || d.Outcome != kvstore.OutcomeFailed || calls.Load() != 3 {
		t.Fatalf("dead letter: %+v after %d calls", d, calls.Load())
	}
	select {
	case m := <-e.dead:
		if m.Subject != "sched.event.dead_letter.flaky.f" || m.Header.Get("Sched-Original-Id") != flakyID ||
			m.Header.Get("Sched-Deliveries") != "3" || string(m.Data) != `{"n":1}` {
			t.Fatalf("dead letter on %s: %v %s", m.Subject, m.Header, m.Data)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no dead letter")
	}
}

// TestStaleWakeupIsDropped: a wakeup whose condition no longer holds is
// acked without calling the handler.
func TestStaleWakeupIsDropped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	handled, checked := make(chan string, 4), make(chan string, 4)
	e.worker(worker.Config{ConditionHolds: func(_ context.Context, run, cond string) bool {
		checked <- run
		return run == "order-1" && cond == "waiting"
	}}, func(w *worker.Worker) {
		_ = w.HandleWakeup("approvals", func(_ context.Context, wk worker.Wakeup) error { handled <- wk.Run; return nil })
	})
	for _, run := range []string{"order-2", "order-1"} {
		m := nats.NewMsg("sched.wakeup.approvals")
		m.Header.Set(kvstore.HeaderRun, run)
		m.Header.Set(kvstore.HeaderStep, "escalate")
		m.Header.Set(kvstore.HeaderWorkflow, "approvals")
		m.Header.Set(kvstore.HeaderDueAt, time.Now().Format(time.RFC3339Nano))
		m.Header.Set(kvstore.HeaderCondition, "waiting")
		if _, err := e.js.PublishMsg(context.Background(), m, jetstream.WithMsgID("w-"+run)); err != nil {
			t.Fatal(err)
		}
	}
	testwait.Receive(t, 5*time.Second, "a condition check", checked)
	testwait.Receive(t, 5*time.Second, "the second condition check", checked)
	if run := testwait.Receive(t, 5*time.Second, "the live wakeup", handled); run != "order-1" {
		t.Fatalf("handled %s, a stale wakeup", run)
	}
	e.settled("SCHED_WAKEUPS/svc-wakeup-approvals", 5*time.Second) // both acked
	if len(handled) != 0 {
		t.Fatalf("also handled %s", <-handled)
	}
}

// TestWakeupDeadLetterCarriesWorkflow: a wakeup given up on is kept on
// sched.event.dead_letter.<workflow>.<wakeup id as one token>, inside the
// workflow's scope like a fire's.
func TestWakeupDeadLetterCarriesWorkflow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.worker(worker.Config{MaxDeliver: 1}, func(w *worker.Worker) {
		_ = w.HandleWakeup("approvals", func(context.Context, worker.Wakeup) error { return errors.New("boom") })
	})
	m := nats.NewMsg("sched.wakeup.approvals")
	m.Header.Set(kvstore.HeaderRun, "order-1")
	m.Header.Set(kvstore.HeaderStep, "escalate")
	m.Header.Set(kvstore.HeaderWorkflow, "approvals")
	m.Header.Set(kvstore.HeaderDueAt, time.Now().Format(time.RFC3339Nano))
	id := "wakeup.order-1.escalate.1796025876000"
	if _, err := e.js.PublishMsg(context.Background(), m, jetstream.WithMsgID(id)); err != nil {
		t.Fatal(err)
	}
	select {
	case dl := <-e.dead:
		if want := "sched.event.dead_letter.approvals.wakeup%2Eorder-1%2Eescalate%2E1796025876000"; dl.Subject != want || dl.Header.Get("Sched-Original-Id") != id {
			t.Fatalf("dead letter on %s (%v), want %s", dl.Subject, dl.Header, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no dead letter")
	}
}
