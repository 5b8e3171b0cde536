package fires

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// rawBucket is a store on a new server, and its bucket that name picks,
// to write records into as they are, unchecked.
func rawBucket(ctx context.Context, t *testing.T, name func(kvstore.Layout) string) (*jsstore.Store, jetstream.KeyValue) {
	t.Helper()
	js, store := natstest.Start(t).Store(t)
	bucket, err := js.KeyValue(ctx, name(store.Layout().WithDefaults()))
	if err != nil {
		t.Fatal(err)
	}
	return store, bucket
}

// The decoder hands a watch's entries over in watch order, in batches of
// at most loadBatch, the end of the initial values included, and reuses
// the batches handed back.
func TestSpecDecoderBatchesInOrder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, bucket := rawBucket(ctx, t, func(l kvstore.Layout) string { return l.SpecsBucket })
	const n = 3*loadBatch + 17
	for i := range n {
		value := `{"workflow":"wf","cron":"0 * * * *"}`
		if i%50 == 7 {
			value = `{"workflow":"wf","cron":` // undecodable: handed over, with its error, in its place
		}
		if _, err := bucket.Put(ctx, fmt.Sprintf("s%04d", i), []byte(value)); err != nil {
			t.Fatalf("put spec %d: %v", i, err)
		}
	}
	w, err := store.WatchSpecs(ctx)
	if err != nil {
		t.Fatalf("watch specs: %v", err)
	}
	defer func() { _ = w.Stop() }()

	d := newSpecDecoder()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	aheads := 0
	go func() {
		defer close(done)
		d.run(runCtx, w.Updates(), func(*decodedSpec) { aheads++ })
	}()
	var got []string
	batches := 0
	for ended := false; !ended; {
		select {
		case b := <-d.out:
			batches++
			if len(b) == 0 || len(b) > loadBatch {
				t.Fatalf("batch %d has %d specs, want 1 to %d", batches, len(b), loadBatch)
			}
			for i := range b {
				if b[i].kv == nil {
					ended = true
					if i != len(b)-1 {
						t.Fatalf("the end of the initial values is not the last of its batch")
					}
					continue
				}
				got = append(got, b[i].kv.Key())
				if bad := len(got)%50 == 8; bad != (b[i].err != nil) || !bad && b[i].spec.Workflow != "wf" {
					t.Errorf("%s: decoded to %+v, error %v", b[i].kv.Key(), b[i].spec, b[i].err)
				}
			}
			d.reuse(b)
		case <-ctx.Done():
			t.Fatalf("the decoder handed over %d of %d specs", len(got), n)
		}
	}
	stop()
	<-done
	if len(got) != n {
		t.Fatalf("got %d specs, want %d", len(got), n)
	}
	for i, id := range got {
		if want := fmt.Sprintf("s%04d", i); id != want {
			t.Fatalf("spec %d is %s, want %s (watch order)", i, id, want)
		}
	}
	if aheads != n+1 {
		t.Errorf("ahead saw %d entries, want %d (each spec and the end marker)", aheads, n+1)
	}
	if batches < (n+1+loadBatch-1)/loadBatch {
		t.Errorf("%d batches for %d entries of at most %d", batches, n+1, loadBatch)
	}
}

// A batch handed back is the decoder's next one, empty, holding nothing.
func TestSpecDecoderReusesBatches(t *testing.T) {
	d := newSpecDecoder()
	b := append(d.batch(), decodedSpec{spec: kvstore.Spec{Workflow: "wf"}}, decodedSpec{err: errLazyRecord})
	d.reuse(b)
	got := d.batch()
	if len(got) != 0 || cap(got) != cap(b) || &got[:1][0] != &b[0] {
		t.Fatalf("the next batch is not the one handed back, emptied")
	}
	if b[0].spec.Workflow != "" || b[1].err != nil {
		t.Fatalf("a batch handed back still holds its specs")
	}
	if other := d.batch(); len(other) != 0 || cap(other) != loadBatch {
		t.Fatalf("without one handed back, the batch is not a new empty one of %d", loadBatch)
	}
}

// takeMore takes what is ready, up to the batch, and no more than take
// wants; it tells a closed channel from one that has nothing ready.
func TestTakeMore(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ready     int
		close     bool
		stopAfter int // take refuses after this many (0: never)
		taken     int
		open      bool
	}{
		{name: "nothing ready", ready: 0, taken: 0, open: true},
		{name: "some ready", ready: 5, taken: 5, open: true},
		{name: "more than a batch", ready: 3 * loadBatch, taken: loadBatch - 1, open: true},
		{name: "closed after some", ready: 4, close: true, taken: 4, open: false},
		{name: "closed at once", close: true, taken: 0, open: false},
		{name: "take stops", ready: 10, stopAfter: 3, taken: 3, open: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := make(chan int, 4*loadBatch)
			for i := range tc.ready {
				c <- i
			}
			if tc.close {
				close(c)
			}
			var taken []int
			open := takeMore(c, func(v int) bool {
				taken = append(taken, v)
				return tc.stopAfter == 0 || len(taken) < tc.stopAfter
			})
			if len(taken) != tc.taken || open != tc.open {
				t.Fatalf("took %d, open %v; want %d, %v", len(taken), open, tc.taken, tc.open)
			}
			for i, v := range taken {
				if v != i {
					t.Fatalf("took %v: not in order", taken)
				}
			}
		})
	}
}
