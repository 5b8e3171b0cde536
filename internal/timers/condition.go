package timers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
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

// found is what a condition key was read to hold: its value and revision.
type found struct {
	value []byte
	rev   uint64
}

// read returns what bucket/key holds. An error leaves the state
// conditionUnchecked: the caller must not decide on it.
func (cs *conditions) read(ctx context.Context, bucket, key string) (found, conditionState, error) {
	kv, err := cs.bucket(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return found{}, conditionNoBucket, nil
	}
	if err != nil {
		return found{}, conditionUnchecked, err
	}
	e, err := kv.Get(ctx, key)
	switch {
	case err == nil:
		return found{value: e.Value(), rev: e.Revision()}, conditionValue, nil
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return found{}, conditionNoKey, nil
	}
	// A direct get on a deleted bucket finds no responders: ask whether
	// the bucket is still there before deciding anything.
	cs.forget(bucket)
	if _, err2 := cs.bucket(ctx, bucket); errors.Is(err2, jetstream.ErrBucketNotFound) {
		return found{}, conditionNoBucket, nil
	}
	return found{}, conditionUnchecked, fmt.Errorf("wakeup: read condition %s/%s: %w", bucket, key, err)
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

// staleReason says why a timer's condition does not hold; "" when it
// holds. It never repeats the value found, which the ledger and the
// events would carry to whoever reads them: it names the key's revision
// and size instead (`nats kv get BUCKET KEY --revision N` shows the value
// to whoever may read the bucket).
func staleReason(conditionKey, want string, f found, st conditionState) string {
	switch st {
	case conditionNoKey:
		return fmt.Sprintf("condition %s has no value (want %q)", conditionKey, want)
	case conditionNoBucket:
		bucket, _, _ := strings.Cut(conditionKey, "/")
		return fmt.Sprintf("condition %s: bucket %s does not exist (want %q)", conditionKey, bucket, want)
	case conditionValue:
		if string(f.value) != want {
			return fmt.Sprintf("condition %s holds another value than %q (revision %d, %d bytes)", conditionKey, want, f.rev, len(f.value))
		}
	}
	return ""
}
