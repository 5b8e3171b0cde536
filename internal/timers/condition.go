package timers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/textcut"
)

// conditionState is what a condition key was found to hold.
type conditionState int

const (
	conditionValue     conditionState = iota // a value (in found)
	conditionNoKey                           // no value: never put, deleted or purged
	conditionNoBucket                        // the bucket does not exist
	conditionUnchecked                       // the read failed; nothing is known
)

// conditions reads condition keys, keeping one KV handle per bucket (its
// first use costs a stream info request; every read after is one get).
type conditions struct {
	js jetstream.JetStream

	mu      sync.Mutex
	buckets map[string]jetstream.KeyValue
}

// read returns what bucket/key holds. An error leaves the state
// conditionUnchecked: the caller must not decide on it.
func (cs *conditions) read(ctx context.Context, bucket, key string) ([]byte, conditionState, error) {
	kv, err := cs.bucket(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, conditionNoBucket, nil
	}
	if err != nil {
		return nil, conditionUnchecked, err
	}
	e, err := kv.Get(ctx, key)
	switch {
	case err == nil:
		return e.Value(), conditionValue, nil
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return nil, conditionNoKey, nil
	}
	// A direct get on a deleted bucket finds no responders: ask whether
	// the bucket is still there before deciding anything.
	cs.forget(bucket)
	if _, err2 := cs.bucket(ctx, bucket); errors.Is(err2, jetstream.ErrBucketNotFound) {
		return nil, conditionNoBucket, nil
	}
	return nil, conditionUnchecked, fmt.Errorf("wakeup: read condition %s/%s: %w", bucket, key, err)
}

func (cs *conditions) bucket(ctx context.Context, name string) (jetstream.KeyValue, error) {
	cs.mu.Lock()
	kv := cs.buckets[name]
	cs.mu.Unlock()
	if kv != nil {
		return kv, nil
	}
	kv, err := cs.js.KeyValue(ctx, name)
	if err != nil {
		return nil, err
	}
	cs.mu.Lock()
	if cs.buckets == nil {
		cs.buckets = map[string]jetstream.KeyValue{}
	}
	cs.buckets[name] = kv
	cs.mu.Unlock()
	return kv, nil
}

func (cs *conditions) forget(name string) {
	cs.mu.Lock()
	delete(cs.buckets, name)
	cs.mu.Unlock()
}

// staleReason says why a timer's condition does not hold, naming what was
// found; "" when it holds.
func staleReason(conditionKey, want string, found []byte, st conditionState) string {
	switch st {
	case conditionNoKey:
		return fmt.Sprintf("condition %s has no value (want %q)", conditionKey, want)
	case conditionNoBucket:
		bucket, _, _ := strings.Cut(conditionKey, "/")
		return fmt.Sprintf("condition %s: bucket %s does not exist (want %q)", conditionKey, bucket, want)
	case conditionValue:
		if string(found) != want {
			return fmt.Sprintf("condition %s holds %q, not %q", conditionKey, textcut.Cut(string(found), 256, "…"), want)
		}
	}
	return ""
}
