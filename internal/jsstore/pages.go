package jsstore

import (
	"container/heap"
	"context"
	"fmt"

	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/nats-io/nats.go/jetstream"
)

// Bucket names one of the store's buckets, for the listing helpers.
type Bucket int

// The buckets.
const (
	BucketSpecs Bucket = iota
	BucketState
	BucketTicks
	BucketCalendars
	BucketWakeups
	// BucketLeases is sched_leases (shard leases, window claims, ended
	// lists).
	BucketLeases
)

func (s *Store) bucket(b Bucket) (jetstream.KeyValue, error) {
	switch b {
	case BucketSpecs:
		return s.specs, nil
	case BucketState:
		return s.state, nil
	case BucketTicks:
		return s.ticks, nil
	case BucketCalendars:
		return s.calendars, nil
	case BucketWakeups:
		return s.wakeups, nil
	case BucketLeases:
		return s.leases, nil
	}
	return nil, fmt.Errorf("kvstore: no bucket %d", b)
}

// LastRevision is the latest revision of bucket b (its stream's last
// sequence): a watch of b that has delivered this revision has seen every
// write made before the call.
func (s *Store) LastRevision(ctx context.Context, b Bucket) (uint64, error) {
	kv, err := s.bucket(b)
	if err != nil {
		return 0, err
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return 0, fmt.Errorf("kvstore: status of %s: %w", kv.Bucket(), err)
	}
	bs, ok := st.(*jetstream.KeyValueBucketStatus)
	if !ok {
		return 0, fmt.Errorf("kvstore: status of %s: unexpected type %T", kv.Bucket(), st)
	}
	return bs.StreamInfo().State.LastSeq, nil
}

// KeyPage is one page of a key listing.
type KeyPage struct {
	// Keys are the page's keys, in the listing's order.
	Keys []string
	// Total counts every key that matches, on every page.
	Total int
	// More is set when keys follow the last one of the page.
	More bool
}

// PageKeys lists the keys of bucket b that match filter (">" for all, or a
// key pattern such as "report.*") and that keep accepts (nil: all), and
// returns, in the order of cmp, the first limit keys after the key after
// ("" for the first page), with the count of every matching key. It reads
// keys only, never values, and holds at most limit+1 of them, so its
// memory is bounded whatever the bucket holds; its time grows with the
// number of matching keys (about 5 µs each).
func (s *Store) PageKeys(ctx context.Context, b Bucket, filter string, cmp func(x, y string) int, after string, limit int, keep func(key string) bool) (KeyPage, error) {
	kv, err := s.bucket(b)
	if err != nil {
		return KeyPage{}, err
	}
	if limit < 1 {
		return KeyPage{}, fmt.Errorf("%w: limit %d", kvstore.ErrInvalid, limit)
	}
	lister, err := s.watch(ctx, kv, watchOpts{filter: filter, ignoreDeletes: true, keysOnly: true})
	if err != nil {
		return KeyPage{}, fmt.Errorf("kvstore: list keys of %s matching %s: %w", kv.Bucket(), filter, err)
	}
	defer func() { _ = lister.Stop() }()
	// best holds the limit+1 smallest keys after `after`, largest on top.
	best := &keyHeap{cmp: cmp}
	var page KeyPage
	for {
		select {
		case <-ctx.Done():
			return KeyPage{}, ctx.Err()
		case e, ok := <-lister.Updates():
			if !ok {
				return KeyPage{}, fmt.Errorf("kvstore: list keys of %s matching %s: the watch ended", kv.Bucket(), filter)
			}
			if e == nil {
				return page.finish(best, limit), nil
			}
			key := e.Key()
			if keep != nil && !keep(key) {
				continue
			}
			page.Total++
			if after != "" && cmp(key, after) <= 0 {
				continue
			}
			if best.Len() <= limit {
				heap.Push(best, key)
			} else if cmp(key, best.keys[0]) < 0 {
				best.keys[0] = key
				heap.Fix(best, 0)
			}
		}
	}
}

// finish orders the kept keys and cuts the page.
func (p KeyPage) finish(h *keyHeap, limit int) KeyPage {
	keys := make([]string, h.Len())
	for i := len(keys) - 1; i >= 0; i-- {
		keys[i] = heap.Pop(h).(string)
	}
	if len(keys) > limit {
		keys, p.More = keys[:limit], true
	}
	p.Keys = keys
	return p
}

// keyHeap is a max-heap of keys under cmp.
type keyHeap struct {
	keys []string
	cmp  func(x, y string) int
}

func (h *keyHeap) Len() int           { return len(h.keys) }
func (h *keyHeap) Less(i, j int) bool { return h.cmp(h.keys[i], h.keys[j]) > 0 }
func (h *keyHeap) Swap(i, j int)      { h.keys[i], h.keys[j] = h.keys[j], h.keys[i] }
func (h *keyHeap) Push(x any)         { h.keys = append(h.keys, x.(string)) }
func (h *keyHeap) Pop() any {
	k := h.keys[len(h.keys)-1]
	h.keys = h.keys[:len(h.keys)-1]
	return k
}
