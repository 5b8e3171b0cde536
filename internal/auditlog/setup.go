package auditlog

import (
	"context"
	"errors"
	"fmt"

	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/nats-io/nats.go/jetstream"
)

// Interval is how many entries a checkpoint follows.
const Interval = 100

// Setup creates the trail's stream (append-only) and its head bucket.
func Setup(ctx context.Context, js jetstream.JetStream, t audit.Trail, replicas int) error {
	t = t.WithDefaults()
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: t.Stream, Description: "jetsched audit trail (HMAC chain)", Subjects: []string{t.Subject + ".>"},
		Storage: jetstream.FileStorage, Replicas: max(replicas, 1), DenyDelete: true, DenyPurge: true,
		Retention: jetstream.LimitsPolicy, Discard: jetstream.DiscardNew,
	})
	if err != nil {
		return fmt.Errorf("auditlog: create stream %s: %w", t.Stream, err)
	}
	return setupHead(ctx, js, t, replicas)
}

// anchorHistory is how many anchored heads the head bucket keeps per
// trail.
const anchorHistory = 64

// setupHead creates the head bucket's stream: a key-value bucket with
// history that refuses deletes, purges and roll-ups, so that no one with
// write rights on its keys can erase an anchored head. An existing bucket
// is left as it is (the scheduler's account may create it, not update it).
func setupHead(ctx context.Context, js jetstream.JetStream, t audit.Trail, replicas int) error {
	name := "KV_" + t.HeadBucket
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: name, Description: "jetsched audit trail heads (anchors of " + t.Stream + ")",
		Subjects: []string{"$KV." + t.HeadBucket + ".>"}, MaxMsgsPerSubject: anchorHistory,
		Storage: jetstream.FileStorage, Replicas: max(replicas, 1), Discard: jetstream.DiscardNew,
		DenyDelete: true, DenyPurge: true, AllowRollup: false,
	})
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return fmt.Errorf("auditlog: create head bucket %s: %w", t.HeadBucket, err)
	}
	return nil
}
