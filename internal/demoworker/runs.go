package demoworker

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// RunsBucket is the KV bucket in which the approval demo's workflow keeps
// each run's current activity: the key its timers' condition names, so
// that the scheduler itself drops a wakeup whose run has moved on.
const RunsBucket = "demo_runs"

// Runs is the approval demo's workflow state: run -> current activity.
type Runs struct {
	kv jetstream.KeyValue
}

// OpenRuns creates (or opens) RunsBucket.
func OpenRuns(ctx context.Context, js jetstream.JetStream) (*Runs, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: RunsBucket,
		Description: "jetsched demo: each approval run's current activity (timers' condition keys)"})
	if err != nil {
		return nil, fmt.Errorf("demoworker: bucket %s: %w", RunsBucket, err)
	}
	return &Runs{kv: kv}, nil
}

// Set records that run is now in activity.
func (r *Runs) Set(ctx context.Context, run, activity string) error {
	if _, err := r.kv.PutString(ctx, run, activity); err != nil {
		return fmt.Errorf("demoworker: run %s -> %s: %w", run, activity, err)
	}
	return nil
}

// Activity is run's current activity ("" when it has none).
func (r *Runs) Activity(ctx context.Context, run string) (string, error) {
	e, err := r.kv.Get(ctx, run)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("demoworker: run %s: %w", run, err)
	}
	return string(e.Value()), nil
}

// ConditionKey is the condition key of run's timers: "demo_runs/<run>".
func (r *Runs) ConditionKey(run string) string { return RunsBucket + "/" + run }
