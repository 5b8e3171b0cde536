package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/demoworker"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/wakeup"
)

// demoSchedules registers the demo's sample schedules.
func demoSchedules(ctx context.Context, store *kvstore.Store, now time.Time) error {
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
	if err := w.Start(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

// approvalDemo plays "escalate unless approved": each order gets an
// escalation timer; approving an order moves its run on and cancels the
// timer, and a wakeup that races the approval is dropped by the worker's
// condition check.
type approvalDemo struct {
	worker *demoworker.WakeupWorker
	stop   context.CancelFunc
	done   chan struct{}
}

func startApprovalDemo(ctx context.Context, d *daemon.Daemon, log *slog.Logger) (*approvalDemo, error) {
	var mu sync.Mutex
	activity := map[string]string{"order-42": "awaiting_approval", "order-43": "awaiting_approval"}
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
	if err := w.Start(ctx); err != nil {
		return nil, err
	}
	client := wakeup.Client{Store: d.Store()}
	for _, order := range []string{"order-42", "order-43"} {
		_, err := client.Register(ctx, wakeup.Request{
			Run: order, Step: "escalate", Workflow: "approvals", When: "8s", Condition: "awaiting_approval",
			Payload: json.RawMessage(`{"order":"` + order + `","action":"escalate to a manager"}`),
		})
		if err != nil {
			w.Stop()
			return nil, fmt.Errorf("demo timer %s: %w", order, err)
		}
	}
	log.Info("approval demo: orders 42 and 43 await approval; escalation timers in 8s")
	actx, cancel := context.WithCancel(context.Background())
	a := &approvalDemo{worker: w, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		select {
		case <-actx.Done():
			return
		case <-time.After(3 * time.Second):
		}
		mu.Lock()
		activity["order-43"] = "approved"
		mu.Unlock()
		n, err := client.CancelRun(actx, "order-43")
		log.Info("approval demo: order-43 approved; its escalation timer is cancelled", "cancelled", n, "err", err)
	}()
	return a, nil
}

// Stop ends the demo's goroutine and worker.
func (a *approvalDemo) Stop() {
	a.stop()
	<-a.done
	a.worker.Stop()
}
