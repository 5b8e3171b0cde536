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
	l.load.l = &l
	l.entries = map[string]*entry{}
	l.newEntry("before")
	l.health.scan = &healthScan{}
	l.load.sizeFor(take()) // a health walk holds the map: not now
	if l.load.sized != 0 {
		t.Fatalf("sized for %d during a health walk", l.load.sized)
	}
	l.health.scan = nil
	l.load.resized = make(chan map[string]*entry, 1)
	l.load.sizeFor(take())
	if l.load.sized != n-1 {
		t.Fatalf("sized for %d, want %d (the watch's keys after the first)", l.load.sized, n-1)
	}
	l.newEntry("meanwhile") // indexed while the map is made
	var sized map[string]*entry
	select {
	case sized = <-l.load.resized:
	case <-ctx.Done():
		t.Fatal("the sized map never came")
	}
	l.load.sizing.Wait()
	l.load.takeSized(sized)
	if l.entries["before"] == nil || l.entries["meanwhile"] == nil || len(l.entries) != 2 {
		t.Fatalf("the entries before the sizing are not kept: %v", l.entries)
	}
	m := l.entries
	if fmt.Sprintf("%p", m) != fmt.Sprintf("%p", sized) {
		t.Fatal("the sized map was not taken in")
	}
	take()
	l.load.sizeFor(take())
	got, err := bucket.Get(ctx, "s0500")
	if err != nil {
		t.Fatal(err)
	}
	l.load.sizeFor(got)
	if l.load.sized != n-1 || fmt.Sprintf("%p", l.entries) != fmt.Sprintf("%p", m) {
		t.Fatalf("sized again (for %d) by a later value or a get", l.load.sized)
	}
	for kv := take(); kv != nil; kv = take() { // to the end of the initial values: the watch's callback must not be left blocked
	}
}

// A sized map that comes during a health walk is not taken in (the walk
// iterates the entries map), and a watch's count that comes while a map is
// on its way makes no second one: the map grows by itself.
func TestSizedMapLeftDuringAHealthWalk(t *testing.T) {
	l := loop{entries: map[string]*entry{}, load: loader{resized: make(chan map[string]*entry, 1)}}
	l.load.l = &l
	l.newEntry("a")
	l.load.sizeFor(counted(100))
	l.load.sizeFor(counted(1000)) // a map is on its way
	sized := <-l.load.resized
	l.load.sizing.Wait()
	if l.load.sized != 100 || len(l.load.resized) != 0 {
		t.Fatalf("sized for %d with %d more maps made, want one map for 100", l.load.sized, len(l.load.resized))
	}
	l.health.scan = &healthScan{}
	m := l.entries
	l.load.takeSized(sized)
	if fmt.Sprintf("%p", l.entries) != fmt.Sprintf("%p", m) || l.entries["a"] == nil {
		t.Fatal("a sized map replaced the entries map during a health walk")
	}
	l.health.scan = nil
	l.load.sizeFor(counted(1000)) // the next count sizes it again
	l.load.takeSized(<-l.load.resized)
	l.load.sizing.Wait()
	if l.load.sized != 1000 || l.entries["a"] == nil || len(l.entries) != 1 {
		t.Fatalf("sized for %d with entries %v, want 1000 with a", l.load.sized, l.entries)
	}
}

// counted is a watched value with n values after it.
type counted uint64

func (c counted) Bucket() string                  { return "b" }
func (c counted) Key() string                     { return "k" }
func (c counted) Value() []byte                   { return nil }
func (c counted) Revision() uint64                { return 1 }
func (c counted) Created() time.Time              { return time.Time{} }
func (c counted) Delta() uint64                   { return uint64(c) - 1 }
func (c counted) Operation() jetstream.KeyValueOp { return jetstream.KeyValuePut }
