package jsstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestWatchStaysWithinTheServersPendingLimit: a watch loading a bucket
// far larger than the server's per-connection pending limit, over a link
// slower than the server (a busy client's read loop, or a slow network),
// keeps its connection: it has at most kvstore.WatchBytes in flight. A
// nats.go KeyValue watch, a push consumer whose flow control lets it run
// up to 32 MiB ahead, had the server close the connection as a slow
// consumer here (and at a million schedules with the default 64 MiB).
func TestWatchStaysWithinTheServersPendingLimit(t *testing.T) {
	t.Parallel()
	srv := natstest.StartTight(t)
	ctx := context.Background()
	_, _, _, specs := withSpecsOn(t, srv)
	// 40 MiB of values, five times the limit (a watch does not decode them).
	const n, size = 2560, 16 << 10
	value := make([]byte, size)
	for i := range n {
		if _, err := specs.Put(ctx, fmt.Sprintf("s%05d", i), value); err != nil {
			t.Fatal(err)
		}
	}
	nc, w := watchSpecsOverSlowLink(t, srv, 32<<10) // 32 KiB per millisecond at most
	seen := map[string]bool{}
	deadline := time.After(2 * time.Minute)
	for loaded := false; !loaded; {
		select {
		case e := <-w.Updates():
			if e == nil {
				loaded = true
				break
			}
			if len(e.Value()) != size {
				t.Fatalf("%s: %d bytes, want %d", e.Key(), len(e.Value()), size)
			}
			seen[e.Key()] = true
		case <-deadline:
			t.Fatalf("the watch delivered %d of %d values in 2 minutes", len(seen), n)
		}
	}
	if len(seen) != n {
		t.Fatalf("the watch delivered %d values before its end of the initial values, want %d", len(seen), n)
	}
	srv.KeptUp(t, nc, "the watch")
}

// TestWatchDeliversEveryValue: a store watch delivers the last value of
// every key once, in many pulls (values of mixed sizes, deletes among
// them), then a nil entry, then each change with its operation. Pulled a
// byte limit at a time, nats-server 2.15.3 skipped a value at the end of
// each pull (kvstore.watchBatch): 19 of 2,560 went missing.
func TestWatchDeliversEveryValue(t *testing.T) {
	t.Parallel()
	_, js, store, specs := withSpecs(t)
	ctx := context.Background()
	const n = 2560
	want := map[string]int{} // key: size of its last value (-1: deleted)
	for i := range n {
		key := fmt.Sprintf("s%05d", i)
		size := (i % 7) * 5 << 10 // 0 to 30 KiB
		if _, err := specs.Put(ctx, key, make([]byte, size)); err != nil {
			t.Fatal(err)
		}
		want[key] = size
		if i%10 == 3 { // a second revision: only the last is delivered
			if _, err := specs.Put(ctx, key, []byte("v2")); err != nil {
				t.Fatal(err)
			}
			want[key] = 2
		}
		if i%100 == 7 {
			if err := specs.Delete(ctx, key); err != nil {
				t.Fatal(err)
			}
			want[key] = -1
		}
	}
	w, err := store.WatchSpecs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Stop() }()
	next := func() jetstream.KeyValueEntry {
		t.Helper()
		return testwait.Receive(t, 30*time.Second, "the watch's next entry", w.Updates())
	}
	got := map[string]int{}
	var last uint64
	for e := next(); e != nil; e = next() {
		if _, dup := got[e.Key()]; dup {
			t.Fatalf("%s delivered twice", e.Key())
		}
		if e.Revision() <= last {
			t.Fatalf("%s at revision %d after revision %d: out of order", e.Key(), e.Revision(), last)
		}
		last = e.Revision()
		switch e.Operation() {
		case jetstream.KeyValuePut:
			got[e.Key()] = len(e.Value())
		case jetstream.KeyValueDelete:
			got[e.Key()] = -1
		default:
			t.Fatalf("%s: operation %v", e.Key(), e.Operation())
		}
		if e.Bucket() != specs.Bucket() || e.Created().IsZero() {
			t.Fatalf("%s: bucket %q, created %v", e.Key(), e.Bucket(), e.Created())
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d keys delivered before the end of the initial values, want %d", len(got), len(want))
	}
	for k, size := range want {
		if got[k] != size {
			t.Fatalf("%s: delivered as %d bytes, want %d (-1: deleted)", k, got[k], size)
		}
	}
	// Changes after the initial values, each with its operation.
	if _, err := specs.Put(ctx, "new", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := specs.Purge(ctx, "s00000"); err != nil {
		t.Fatal(err)
	}
	// Its delta counts the purge if the purge was in the stream by the
	// time it was sent.
	if e := next(); e.Key() != "new" || e.Operation() != jetstream.KeyValuePut || e.Delta() > 1 {
		t.Fatalf("first change: %s %v delta %d, want new put at delta 0 or 1", e.Key(), e.Operation(), e.Delta())
	}
	if e := next(); e.Key() != "s00000" || e.Operation() != jetstream.KeyValuePurge {
		t.Fatalf("second change: %s %v, want s00000 purged", e.Key(), e.Operation())
	}
	if err := w.Stop(); err != nil {
		t.Fatal(err)
	}
	for range w.Updates() { // closed by Stop
	}
	// Its consumer is gone with it, not left for the server to expire.
	st, err := js.Stream(ctx, "KV_"+specs.Bucket())
	if err != nil {
		t.Fatal(err)
	}
	for name := range st.ConsumerNames(ctx).Name() {
		t.Fatalf("consumer %s left on %s after the watch stopped", name, st.CachedInfo().Config.Name)
	}
}

// TestWatchOfAnEmptyBucket: a watch of a bucket with no value says so at
// once (the nil entry), then delivers the first value written.
func TestWatchOfAnEmptyBucket(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	ctx := context.Background()
	_, js := srv.Connect(t)
	store := newStore(t, js)
	w, err := store.WatchTimers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Stop() }()
	if e := <-w.Updates(); e != nil {
		t.Fatalf("first entry %s, want nil (no value)", e.Key())
	}
	kv, err := js.KeyValue(ctx, kvstore.Layout{}.WithDefaults().WakeupsBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "t1", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if e := testwait.Receive(t, 30*time.Second, "t1", w.Updates()); e == nil || e.Key() != "t1" {
		t.Fatalf("entry %v, want t1", e)
	}
}

// TestWatchOutlivesItsConsumer: a watch whose consumer an operator
// deletes (`nats consumer rm`), or whose server restarts (its consumer, in
// memory, gone with it), goes on from where it was: the next change comes,
// and no value comes twice.
func TestWatchOutlivesItsConsumer(t *testing.T) {
	t.Parallel()
	srv, js, store, specs := withSpecs(t)
	ctx := context.Background()
	if _, err := specs.Put(ctx, "before", []byte("1")); err != nil {
		t.Fatal(err)
	}
	w, err := store.WatchSpecs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Stop() }()
	// next is the next entry (nil: the end of the initial values).
	next := func(what string) jetstream.KeyValueEntry {
		t.Helper()
		return testwait.Receive(t, 30*time.Second, what, w.Updates())
	}
	if e := next("before"); e == nil || e.Key() != "before" {
		t.Fatalf("first entry %v, want before", e)
	}
	if e := next("the end of the initial values"); e != nil {
		t.Fatalf("entry %s, want nil", e.Key())
	}
	stream, err := js.Stream(ctx, "KV_"+specs.Bucket())
	if err != nil {
		t.Fatal(err)
	}
	// Once its initial values are in, the watch goes on with a consumer
	// of the changes after them (its only one, from a start sequence):
	// that is the one deleted.
	var live string
	testwait.Eventually(t, 30*time.Second, "the watch's consumer of its changes alone", func() bool {
		var names []string
		for ci := range stream.ListConsumers(ctx).Info() {
			names = append(names, ci.Name)
			if ci.Config.DeliverPolicy == jetstream.DeliverByStartSequencePolicy {
				live = ci.Name
			}
		}
		return len(names) == 1 && live == names[0]
	})
	if err := stream.DeleteConsumer(ctx, live); err != nil {
		t.Fatal(err)
	}
	if _, err := specs.Put(ctx, "after-delete", []byte("2")); err != nil {
		t.Fatal(err)
	}
	if e := next("a put after the consumer was deleted"); e == nil || e.Key() != "after-delete" {
		t.Fatalf("entry %v, want after-delete", e)
	}
	srv.Restart()
	// The put waits for the test's connection to come back.
	testwait.Eventually(t, 30*time.Second, "a put after the restart", func() bool {
		_, err := specs.Put(ctx, "after-restart", []byte("3"))
		return err == nil
	})
	if e := next("a put after the server restarted"); e == nil || e.Key() != "after-restart" {
		t.Fatalf("entry %v, want after-restart (no value again)", e)
	}
}

// withSpecs starts a server with the default layout set up, and returns
// it, a connection's JetStream, the store on it and the specs bucket.
func withSpecs(t *testing.T) (*natstest.Server, jetstream.JetStream, *jsstore.Store, jetstream.KeyValue) {
	t.Helper()
	return withSpecsOn(t, natstest.Start(t))
}

// withSpecsOn is withSpecs on a server already started.
func withSpecsOn(t *testing.T, srv *natstest.Server) (*natstest.Server, jetstream.JetStream, *jsstore.Store, jetstream.KeyValue) {
	t.Helper()
	_, js := srv.Connect(t)
	store := newStore(t, js)
	specs, err := js.KeyValue(context.Background(), kvstore.Layout{}.WithDefaults().SpecsBucket)
	if err != nil {
		t.Fatal(err)
	}
	return srv, js, store, specs
}

// watchSpecsOverSlowLink watches the specs of srv on a connection of its
// own over a link of rate bytes per millisecond at most.
func watchSpecsOverSlowLink(t *testing.T, srv *natstest.Server, rate int) (*nats.Conn, jetstream.KeyWatcher) {
	t.Helper()
	nc, sjs := natstest.Dial(t, natstest.SlowLink(t, srv.URL(), rate))
	w, err := newStore(t, sjs).WatchSpecs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Stop() })
	return nc, w
}

// newStore sets the default layout up (again, if it is) and opens it.
func newStore(t testing.TB, js jetstream.JetStream) *jsstore.Store {
	t.Helper()
	ctx := context.Background()
	if err := jsstore.Setup(ctx, js, jsstore.SetupConfig{}); err != nil {
		t.Fatal(err)
	}
	store, err := jsstore.Open(ctx, js, kvstore.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// BenchmarkWatchMetadata compares what a watch reads of each delivered
// message's reply subject: jetstream's Metadata (the fields and more,
// into a struct of its own) and the store watch's own reading of the
// three fields it uses.
func BenchmarkWatchMetadata(b *testing.B) {
	srv := natstest.Start(b)
	ctx := context.Background()
	_, js := srv.Connect(b)
	store := newStore(b, js)
	if _, err := store.CreateState(ctx, "a", kvstore.State{Plan: "p", Next: time.Now().UTC()}); err != nil {
		b.Fatal(err)
	}
	cons, err := js.OrderedConsumer(ctx, "KV_"+kvstore.Layout{}.WithDefaults().StateBucket, jetstream.OrderedConsumerConfig{})
	if err != nil {
		b.Fatal(err)
	}
	m, err := cons.Next()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("jetstream", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.Metadata(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("store", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !jsstore.DeliveryOK(m.Reply()) {
				b.Fatal(m.Reply())
			}
		}
	})
}
