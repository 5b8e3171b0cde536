package faulttest

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// OpenStore opens jetsched's buckets (created by a running scheduler or by
// kvstore.Setup), retrying for up to 30s while JetStream settles.
func OpenStore(t testing.TB, js jetstream.JetStream) *jsstore.Store {
	t.Helper()
	var store *jsstore.Store
	err := testwait.Until(30*time.Second, "the jetsched buckets", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var err error
		store, err = jsstore.Open(ctx, js, kvstore.Layout{})
		return err
	})
	if err != nil {
		t.Fatalf("open jetsched buckets: %v", err)
	}
	return store
}
