package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/fire"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/wakeup"
	"github.com/jetsched/jetsched/pkg/worker"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type env struct {
	t     *testing.T
	nc    *nats.Conn
	js    jetstream.JetStream
	dones chan doneMsg
	dead  chan *nats.Msg
}

// doneMsg is a completion report and the subject it came on.
type doneMsg struct {
	fire.DoneReport
	subject string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv := natstest.Start(t)
	nc, js := srv.Connect(t)
	if err := kvstore.Setup(context.Background(), js, kvstore.SetupConfig{}); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, nc: nc, js: js, dones: make(chan doneMsg, 16), dead: make(chan *nats.Msg, 4)}
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
	at := time.Now().Truncate(time.Millisecond)
	id := kvstore.SlotID(schedule, at)
	m := nats.NewMsg("sched.fire." + workflow)
	m.Header.Set(fire.HeaderScheduleID, schedule)
	m.Header.Set(fire.HeaderWorkflow, workflow)
	m.Header.Set(fire.HeaderScheduledAt, at.Format(time.RFC3339Nano))
	m.Data = []byte(`{"n":1}`)
	if _, err := e.js.PublishMsg(context.Background(), m, jetstream.WithMsgID(id)); err != nil {
		e.t.Fatal(err)
	}
	return id
}

func (e *env) worker(cfg worker.Config, setup func(*worker.Worker)) *worker.Worker {
	e.t.Helper()
	cfg.JetStream = e.js
	w, err := worker.New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	setup(w)
	if err := w.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(w.Stop)
	return w
}

func (e *env) done(timeout time.Duration) doneMsg {
	e.t.Helper()
	select {
	case d := <-e.dones:
		return d
	case <-time.After(timeout):
		e.t.Fatal("no completion report")
	}
	return doneMsg{}
}

func TestAckAndCompletion(t *testing.T) {
	e := newEnv(t)
	got := make(chan worker.Fire, 1)
	e.worker(worker.Config{Name: "svc"}, func(w *worker.Worker) {
		_ = w.Handle("billing", func(_ context.Context, f worker.Fire) error { got <- f; return nil })
	})
	id := e.publishFire("bill", "billing")
	f := <-got
	if f.SlotID != id || string(f.Input) != `{"n":1}` || f.Delivery != 1 || f.Subject != "sched.fire.billing" {
		t.Fatalf("fire %+v", f)
	}
	// The report's subject carries the workflow, so that permissions can
	// scope a worker to its workflows.
	if d := e.done(5 * time.Second); d.SlotID != id || d.Outcome != fire.OutcomeCompleted || d.Worker != "svc" || d.subject != "sched.done.billing.bill" {
		t.Fatalf("report %+v", d)
	}
}

func TestRetryPermanentAndDeadLetter(t *testing.T) {
	e := newEnv(t)
	var calls atomic.Int32
	e.worker(worker.Config{Name: "svc", MaxDeliver: 3, BackOff: []time.Duration{100 * time.Millisecond}}, func(w *worker.Worker) {
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
	if d := e.done(5 * time.Second); d.SlotID != retryID || d.Outcome != fire.OutcomeCompleted {
		t.Fatalf("retried fire: %+v", d)
	}
	permID := e.publishFire("p", "perm")
	if d := e.done(5 * time.Second); d.SlotID != permID || d.Outcome != fire.OutcomeFailed || d.Error == "" {
		t.Fatalf("permanent failure: %+v", d)
	}
	flakyID := e.publishFire("f", "flaky")
	d := e.done(10 * time.Second)
	if d.SlotID != flakyID || d.Outcome != fire.OutcomeFailed || calls.Load() != 3 {
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

// TestLongHandlerIsKeptAlive: a handler running longer than AckWait is not
// redelivered, thanks to the in-progress pings.
func TestLongHandlerIsKeptAlive(t *testing.T) {
	e := newEnv(t)
	var calls atomic.Int32
	e.worker(worker.Config{Name: "svc", AckWait: time.Second}, func(w *worker.Worker) {
		_ = w.Handle("slow", func(context.Context, worker.Fire) error {
			calls.Add(1)
			time.Sleep(2500 * time.Millisecond)
			return nil
		})
	})
	e.publishFire("s", "slow")
	e.done(10 * time.Second)
	if n := calls.Load(); n != 1 {
		t.Fatalf("handler ran %d times, want 1", n)
	}
}

// TestStaleWakeupIsDropped: a wakeup whose condition no longer holds is
// acked without calling the handler.
func TestStaleWakeupIsDropped(t *testing.T) {
	e := newEnv(t)
	handled := make(chan string, 4)
	e.worker(worker.Config{Name: "svc", ConditionHolds: func(_ context.Context, run, cond string) bool { return run == "order-1" && cond == "waiting" }},
		func(w *worker.Worker) {
			_ = w.HandleWakeup("approvals", func(_ context.Context, wk worker.Wakeup) error { handled <- wk.Run; return nil })
		})
	for _, run := range []string{"order-2", "order-1"} {
		m := nats.NewMsg("sched.wakeup.approvals")
		m.Header.Set(wakeup.HeaderRun, run)
		m.Header.Set(wakeup.HeaderStep, "escalate")
		m.Header.Set(wakeup.HeaderWorkflow, "approvals")
		m.Header.Set(wakeup.HeaderDueAt, time.Now().Format(time.RFC3339Nano))
		m.Header.Set(wakeup.HeaderCondition, "waiting")
		if _, err := e.js.PublishMsg(context.Background(), m, jetstream.WithMsgID("w-"+run)); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case run := <-handled:
		if run != "order-1" {
			t.Fatalf("handled %s, a stale wakeup", run)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no wakeup handled")
	}
	select {
	case run := <-handled:
		t.Fatalf("also handled %s", run)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestWakeupDeadLetterCarriesWorkflow: a wakeup given up on is kept on
// sched.event.dead_letter.<workflow>.<wakeup id as one token>, inside the
// workflow's scope like a fire's.
func TestWakeupDeadLetterCarriesWorkflow(t *testing.T) {
	e := newEnv(t)
	e.worker(worker.Config{Name: "svc", MaxDeliver: 1}, func(w *worker.Worker) {
		_ = w.HandleWakeup("approvals", func(context.Context, worker.Wakeup) error { return errors.New("boom") })
	})
	m := nats.NewMsg("sched.wakeup.approvals")
	m.Header.Set(wakeup.HeaderRun, "order-1")
	m.Header.Set(wakeup.HeaderStep, "escalate")
	m.Header.Set(wakeup.HeaderWorkflow, "approvals")
	m.Header.Set(wakeup.HeaderDueAt, time.Now().Format(time.RFC3339Nano))
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
