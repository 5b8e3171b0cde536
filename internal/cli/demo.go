package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/demoworker"
	"github.com/jetsched/jetsched/pkg/kvstore"
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

func startDemoWorker(ctx context.Context, js jetstream.JetStream, log *slog.Logger) (*demoworker.Worker, error) {
	w, err := demoworker.New(demoworker.Config{
		JetStream: js,
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
