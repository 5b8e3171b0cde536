package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/demoworker"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// demoSchedules registers the demo's sample schedules.
func demoSchedules(ctx context.Context, store *jsstore.Store, now time.Time) error {
	once := now.Add(3 * time.Second).Truncate(time.Second)
	specs := []struct {
		id   string
		spec kvstore.Spec
	}{
		{"demo-every-5s", kvstore.Spec{
			Workflow: "demo-heartbeat", Every: "5s",
			Input:       json.RawMessage(`{"message":"every 5 seconds"}`),
			Description: "fires on every 5-second mark (UTC)",
		}},
		{"demo-cron-minute", kvstore.Spec{
			Workflow: "demo-report", Cron: "* * * * *", TZ: "America/New_York",
			Input:       json.RawMessage(`{"message":"every minute, New York time"}`),
			Description: "cron every minute, read in America/New_York",
		}},
		{"demo-once", kvstore.Spec{
			Workflow: "demo-once", At: &once,
			Input:       json.RawMessage(`{"message":"a one-shot, 3 seconds after start"}`),
			Description: "fires once",
		}},
	}
	for _, s := range specs {
		if _, err := store.PutSpec(ctx, s.id, s.spec); err != nil {
			return fmt.Errorf("demo schedule %s: %w", s.id, err)
		}
	}
	return nil
}

func startDemoWorker(ctx context.Context, js jetstream.JetStream, layout kvstore.Layout, log *slog.Logger) (*demoworker.Worker, error) {
	w, err := demoworker.New(demoworker.Config{
		JetStream: js,
		Layout:    layout,
		Durable:   "demo",
		Logger:    log.With("component", "demo-worker"),
	})
	if err != nil {
		return nil, err
	}
	// Not the signal's context: the demo stops its workers itself.
	if err := w.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, err
	}
	return w, nil
}

// stopDemoWorker stops a demo worker within 5 seconds.
func stopDemoWorker(log *slog.Logger, stop func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := stop(ctx); err != nil {
		log.Warn("demo worker still has handlers running", "err", err)
	}
}

// approvalDemo plays "escalate unless approved": each order gets an
// escalation timer whose condition key is the order's current activity in
// the demo_runs bucket, which the demo's workflow keeps current. Order 42
// is never approved and escalates; order 43 is approved and its timer
// cancelled; order 44 is approved but its cancel is lost (as when the
// workflow crashes between the two), and the scheduler itself drops its
// wakeup as stale. Under an account config (--server-config) whose
// scheduler user may not create demo_runs, the conditions are the
// worker's to check instead.
type approvalDemo struct {
	worker *demoworker.WakeupWorker
	sub    *nats.Subscription
	stop   context.CancelFunc
	done   chan struct{}
}

// demoOrders are the approval demo's runs.
var demoOrders = []string{"order-42", "order-43", "order-44"}

func startApprovalDemo(ctx context.Context, d *daemon.Daemon, kvChecked bool, log *slog.Logger) (*approvalDemo, error) {
	var mu sync.Mutex
	activity := map[string]string{}
	var runs *demoworker.Runs
	if kvChecked {
		r, err := demoworker.OpenRuns(ctx, d.JetStream())
		if err != nil {
			return nil, err
		}
		runs = r
	}
	setActivity := func(ctx context.Context, run, a string) error {
		mu.Lock()
		activity[run] = a
		mu.Unlock()
		if runs == nil {
			return nil
		}
		return runs.Set(ctx, run, a)
	}
	w, err := demoworker.NewWakeups(demoworker.WakeupConfig{
		JetStream: d.JetStream(), Layout: d.Store().Layout(), Durable: "demo-wakeups", Logger: log.With("component", "demo-worker"),
		Holds: func(run, condition string) bool {
			mu.Lock()
			defer mu.Unlock()
			return activity[run] == condition
		},
	})
	if err != nil {
		return nil, err
	}
	if err := w.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, err
	}
	a := &approvalDemo{worker: w, done: make(chan struct{})}
	if runs != nil {
		a.sub, err = d.JetStream().Conn().Subscribe(d.Store().Layout().WithDefaults().Prefix+".event."+string(kvstore.EventStale)+".*", func(m *nats.Msg) {
			var ev kvstore.Event
			if json.Unmarshal(m.Data, &ev) == nil {
				log.Info("approval demo: the scheduler dropped a stale escalation unpublished", "run", ev.Run, "step", ev.Step, "reason", ev.Reason)
			}
		})
		if err != nil {
			_ = w.StopAndCancel(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	client := wakeups.Client{Store: d.Store()}
	for _, order := range demoOrders {
		req := wakeups.Request{
			Run: order, Step: "escalate", Workflow: "approvals", When: "8s", Condition: "awaiting_approval",
			Payload: json.RawMessage(`{"order":"` + order + `","action":"escalate to a manager"}`),
		}
		if runs != nil {
			req.ConditionKey = runs.ConditionKey(order)
		}
		err := setActivity(ctx, order, "awaiting_approval")
		if err == nil {
			_, err = client.Register(ctx, req)
		}
		if err != nil {
			_ = a.close(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("demo timer %s: %w", order, err)
		}
	}
	if runs != nil {
		log.Info("approval demo: orders 42, 43 and 44 await approval; escalation timers in 8s, each checked by the scheduler against demo_runs/<order>")
	} else {
		log.Info("approval demo: orders 42, 43 and 44 await approval; escalation timers in 8s (conditions checked by the worker: this account may not create demo_runs)")
	}
	actx, cancel := context.WithCancel(context.Background())
	a.stop = cancel
	go func() {
		defer close(a.done)
		select {
		case <-actx.Done():
			return
		case <-time.After(3 * time.Second):
		}
		err := setActivity(actx, "order-43", "approved")
		n, cerr := client.CancelRun(actx, "order-43")
		log.Info("approval demo: order-43 approved; its escalation timer is cancelled", "cancelled", n, "err", errors.Join(err, cerr))
		err = setActivity(actx, "order-44", "approved")
		log.Info("approval demo: order-44 approved, but its cancel is lost; the condition check drops its escalation", "err", err)
	}()
	return a, nil
}

// close stops the worker (cancelling its handlers) and the event
// subscription.
func (a *approvalDemo) close(ctx context.Context) error {
	if a.sub != nil {
		_ = a.sub.Unsubscribe()
	}
	return a.worker.StopAndCancel(ctx)
}

// Stop ends the demo's goroutine and worker.
func (a *approvalDemo) Stop(ctx context.Context) error {
	a.stop()
	<-a.done
	return a.close(ctx)
}
