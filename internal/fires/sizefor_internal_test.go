package fires

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// A watch's first initial value says how many follow it: the entries map
// is sized for them once, keeping the entries it has, and neither a later
// value nor a read outside the watch sizes it again.
func TestEntriesSizedForTheWatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, bucket := rawBucket(ctx, t, func(l kvstore.Layout) string { return l.StateBucket })
	const n = 1000
	for i := range n {
		if _, err := bucket.Put(ctx, fmt.Sprintf("s%04d", i), []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bucket.Put(ctx, "s0001", []byte(`{"plan":"again"}`)); err != nil { // a second revision: still one key
		t.Fatal(err)
	}
	w, err := bucket.WatchAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Stop() }()
	take := func() jetstream.KeyValueEntry {
		select {
		case kv := <-w.Updates():
			return kv
		case <-ctx.Done():
			t.Fatal("no watched value")
			return nil
		}
	}
	var l loop
	l.entries = map[string]*entry{}
	l.newEntry("before")
	l.scan = &healthScan{}
	l.sizeFor(take()) // a health walk holds the map: not now
	if l.sized != 0 {
		t.Fatalf("sized for %d during a health walk", l.sized)
	}
	l.scan = nil
	l.sizeFor(take())
	if l.sized != n-1 {
		t.Fatalf("sized for %d, want %d (the watch's keys after the first)", l.sized, n-1)
	}
	if l.entries["before"] == nil || len(l.entries) != 1 {
		t.Fatalf("the entries before the sizing are not kept: %v", l.entries)
	}
	m := l.entries
	take()
	l.sizeFor(take())
	got, err := bucket.Get(ctx, "s0500")
	if err != nil {
		t.Fatal(err)
	}
	l.sizeFor(got)
	if l.sized != n-1 || fmt.Sprintf("%p", l.entries) != fmt.Sprintf("%p", m) {
		t.Fatalf("sized again (for %d) by a later value or a get", l.sized)
	}
	for kv := take(); kv != nil; kv = take() { // to the end of the initial values: the watch's callback must not be left blocked
	}
}
