package jsstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestWatchOfABurstOfLargeValues: a watch whose initial values were small
// (so it pulls many values at a time) keeps its connection through a burst
// of values at the spec's size limit written after them, over a link
// slower than the server: it still has at most about kvstore.WatchBytes
// in flight. Pulled by count alone, 8,192 values of 256 KiB could be on
// their way at once, and the server closed the watch's connection as a
// slow consumer; every other watch and request on it went with it.
func TestWatchOfABurstOfLargeValues(t *testing.T) {
	t.Parallel()
	srv := natstest.StartTight(t)
	ctx := context.Background()
	_, js, _, specs := withSpecsOn(t, srv)
	for i := range 100 {
		if _, err := specs.Put(ctx, fmt.Sprintf("small%03d", i), []byte(`{"workflow":"w","every":"1m"}`)); err != nil {
			t.Fatal(err)
		}
	}
	nc, w := watchSpecsOverSlowLink(t, srv, 8<<10) // 8 KiB per millisecond at most
	deadline := time.After(2 * time.Minute)
	next := func(what string) jetstream.KeyValueEntry {
		t.Helper()
		select {
		case e := <-w.Updates():
			return e
		case <-deadline:
			t.Fatalf("no %s within 2 minutes", what)
			return nil
		}
	}
	for e := next("initial value"); e != nil; e = next("initial value") {
	}
	// 48 MiB in values at the size limit, six times the server's limit of
	// pending bytes for the watch's connection.
	const n, size = 192, kvstore.MaxInputBytes
	value := make([]byte, size)
	for i := range n { // as fast as the server takes them
		if _, err := js.PublishAsync(fmt.Sprintf("$KV.%s.big%03d", specs.Bucket(), i), value); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-deadline:
		t.Fatal("the large values not written within 2 minutes")
	}
	seen := map[string]bool{}
	for len(seen) < n {
		e := next(fmt.Sprintf("large value (%d of %d so far)", len(seen), n))
		if e == nil || len(e.Value()) != size {
			t.Fatalf("entry %v, want a value of %d bytes", e, size)
		}
		if seen[e.Key()] {
			t.Fatalf("%s delivered twice", e.Key())
		}
		seen[e.Key()] = true
	}
	srv.KeptUp(t, nc, "the watch")
}

// TestWatchGoesLiveWithoutALoss: values written while a watch loads and
// moves onto the consumer of its changes (Store.watch's live phase) are
// each delivered once, in stream order: the keys written before it as
// their last values, every write after the end of its initial values.
func TestWatchGoesLiveWithoutALoss(t *testing.T) {
	t.Parallel()
	_, js, store, specs := withSpecs(t)
	ctx := context.Background()
	const before, during = 3000, 3000
	put := func(key string) {
		t.Helper()
		if _, err := js.PublishAsync(fmt.Sprintf("$KV.%s.%s", specs.Bucket(), key), []byte(key)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range before {
		put(fmt.Sprintf("before%05d", i))
	}
	<-js.PublishAsyncComplete()
	w, err := store.WatchSpecs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Stop() }()
	// Written while the watch loads and goes live: new keys, and one key
	// written again (each of its writes after the initial values is a
	// change of its own; fewer than the bucket's history keeps).
	written := make(chan error, 1)
	go func() {
		for i := range during {
			key := fmt.Sprintf("during%05d", i)
			if i%300 == 0 {
				key = "again"
			}
			if _, err := js.PublishAsync(fmt.Sprintf("$KV.%s.%s", specs.Bucket(), key), []byte(key)); err != nil {
				written <- err
				return
			}
		}
		<-js.PublishAsyncComplete()
		written <- nil
	}()
	seen := map[uint64]bool{}
	var last uint64
	keys := map[string]bool{}
	loaded := false
	deadline := time.After(time.Minute)
	for len(keys) < before+during-during/300+1 {
		var e jetstream.KeyValueEntry
		select {
		case e = <-w.Updates():
		case <-deadline:
			t.Fatalf("%d of %d keys delivered in a minute", len(keys), before+during-during/300+1)
		}
		if e == nil {
			if loaded {
				t.Fatal("a second end of the initial values")
			}
			loaded = true
			continue
		}
		if seen[e.Revision()] || e.Revision() <= last {
			t.Fatalf("%s at revision %d after revision %d: sent twice or out of order", e.Key(), e.Revision(), last)
		}
		// After the initial values (the last value of each key when the
		// watch began, the stream's last message among them) every
		// message is a change of its own: none may be skipped.
		if loaded && e.Revision() != last+1 {
			t.Fatalf("%s at revision %d after revision %d: a change lost", e.Key(), e.Revision(), last)
		}
		seen[e.Revision()], last = true, e.Revision()
		keys[e.Key()] = true
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if !loaded {
		t.Fatal("no end of the initial values")
	}
	// Every write after the last initial value came: the last revision of
	// the stream is the last one delivered.
	info, err := specs.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for last < info.(*jetstream.KeyValueBucketStatus).StreamInfo().State.LastSeq {
		select {
		case e := <-w.Updates():
			if e.Revision() != last+1 {
				t.Fatalf("%s at revision %d after revision %d", e.Key(), e.Revision(), last)
			}
			last = e.Revision()
		case <-deadline:
			t.Fatalf("revision %d last delivered of %d", last, info.(*jetstream.KeyValueBucketStatus).StreamInfo().State.LastSeq)
		}
	}
}
