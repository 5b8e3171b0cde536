package demoworker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/demoworker"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/internal/timers"
	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func publishFire(t *testing.T, js jetstream.JetStream, id string, at time.Time) {
	t.Helper()
	m := nats.NewMsg("sched.fire.wf." + id)
	m.Header.Set(kvstore.HeaderScheduleID, id)
	m.Header.Set(kvstore.HeaderWorkflow, "wf")
	m.Header.Set(kvstore.HeaderScheduledAt, at.Format(time.RFC3339Nano))
	m.Data = []byte(`{"n":1}`)
	if _, err := js.PublishMsg(context.Background(), m, jetstream.WithMsgID(kvstore.SlotID(id, at))); err != nil {
		t.Fatal(err)
	}
}

func TestWorkerAcksAndMeasuresLateness(t *testing.T) {
	t.Parallel()
	got := make(chan kvstore.FireMeta, 1)
	var lateness time.Duration
	js := start(t, demoworker.Config{OnFire: func(m kvstore.FireMeta, l time.Duration) {
		lateness = l
		got <- m
	}})
	at := time.Now().Add(-time.Second).Truncate(time.Millisecond)
	publishFire(t, js, "s1", at)
	if m := testwait.Receive(t, 10*time.Second, "the fire handled", got); m.ScheduleID != "s1" || !m.ScheduledAt.Equal(at) {
		t.Fatalf("meta %+v", m)
	}
	if lateness < time.Second {
		t.Fatalf("lateness %v, want >= 1s (scheduled 1s ago)", lateness)
	}
}

// start runs a demo worker with cfg against a new server, until the test
// ends, and returns the server's connection.
func start(t *testing.T, cfg demoworker.Config) jetstream.JetStream {
	t.Helper()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	ctx := context.Background()
	if err := jsstore.Setup(ctx, js, jsstore.SetupConfig{}); err != nil {
		t.Fatal(err)
	}
	cfg.JetStream = js
	w, err := demoworker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.StopAndCancel(context.Background()) })
	return js
}

func TestWorkerFailsAndRedelivers(t *testing.T) {
	t.Parallel()
	js := start(t, demoworker.Config{FailRate: 1, MaxDeliver: 2, Durable: "failing"})
	publishFire(t, js, "s1", time.Now())
	// The first delivery naks with a 1s delay; the second (the last
	// allowed) terminates the message, so nothing is left pending.
	waitSettled(t, js, "failing-fire-all", 2)
}

// waitSettled waits until the consumer has delivered at least n times and
// has nothing pending.
func waitSettled(t *testing.T, js jetstream.JetStream, consumer string, n uint64) {
	t.Helper()
	ctx := context.Background()
	cons, err := js.Consumer(ctx, "SCHED_FIRES", consumer)
	if err != nil {
		t.Fatal(err)
	}
	err = testwait.Until(15*time.Second, "consumer "+consumer+" settled after "+fmt.Sprint(n)+" deliveries", func() error {
		info, err := cons.Info(ctx)
		if err == nil && (info.Delivered.Consumer < n || info.NumAckPending != 0 || info.NumRedelivered != 0) {
			err = fmt.Errorf("delivered %d, ack pending %d, redelivered %d",
				info.Delivered.Consumer, info.NumAckPending, info.NumRedelivered)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWorkEndsWithTheTimeout: the simulated work ends with the handler's
// context; past its Timeout on its only delivery, the fire is given up.
func TestWorkEndsWithTheTimeout(t *testing.T) {
	t.Parallel()
	js := start(t, demoworker.Config{Work: time.Hour, Timeout: 100 * time.Millisecond, MaxDeliver: 1, MaxWorkers: 2, Durable: "slow"})
	publishFire(t, js, "s1", time.Now())
	waitSettled(t, js, "slow-fire-all", 1)
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	if _, err := demoworker.New(demoworker.Config{}); err == nil {
		t.Error("nil JetStream accepted")
	}
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	if _, err := demoworker.New(demoworker.Config{JetStream: js, FailRate: 2}); err == nil {
		t.Error("fail rate 2 accepted")
	}
	if _, err := demoworker.New(demoworker.Config{JetStream: js, Workflow: "a.b"}); err == nil {
		t.Error("workflow a.b accepted")
	}
	if _, err := demoworker.New(demoworker.Config{JetStream: js, Work: -time.Second}); err == nil {
		t.Error("negative work accepted")
	}
}

// TestRunsAreTheSchedulersCondition: the approval demo's workflow state is
// the KV key its timers name; the scheduler drops the wakeup of a run
// that moved on (stale in the ledger) and publishes the other's.
func TestRunsAreTheSchedulersCondition(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	js, store := srv.Store(t)
	ctx := context.Background()
	runs, err := demoworker.OpenRuns(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	client := wakeups.Client{Store: store}
	due := time.Now().Add(time.Second).Truncate(time.Millisecond)
	for _, run := range []string{"order-42", "order-44"} {
		if err := runs.Set(ctx, run, "awaiting_approval"); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Register(ctx, wakeups.Request{Run: run, Step: "escalate", Workflow: "approvals", At: due,
			Condition: "awaiting_approval", ConditionKey: runs.ConditionKey(run)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := runs.Set(ctx, "order-44", "approved"); err != nil {
		t.Fatal(err)
	}
	if a, err := runs.Activity(ctx, "order-44"); err != nil || a != "approved" {
		t.Fatalf("Activity = %q, %v", a, err)
	}
	fe, err := fires.New(fires.Config{Store: store, Instance: "a", LeaseTTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := fe.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer fe.Stop(context.Background())
	we, err := timers.New(timers.Config{Store: store, Owner: fe, Instance: "a", ConditionBuckets: []string{demoworker.RunsBucket}})
	if err != nil {
		t.Fatal(err)
	}
	if err := we.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer we.Stop(context.Background())
	want := map[string]kvstore.TickStatus{"order-42": kvstore.TickFired, "order-44": kvstore.TickStale}
	for run, status := range want {
		var tick kvstore.Tick
		err := testwait.Until(15*time.Second, "the ledger entry of "+run, func() error {
			var err error
			tick, err = store.GetTick(ctx, kvstore.WakeupID(kvstore.TimerKey(run, "escalate"), due))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if tick.Status != status {
			t.Fatalf("%s: %+v, want %s", run, tick, status)
		}
	}
}
