package jsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/directget"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Ended is an ended list: the value of key ended.<shard>.<token> in
// sched_leases. It stands for the ended state records of one-shots that
// fired in windows and have no record of their own: one write for up to
// a window's worth of them, where each record was one write (docs/records.md,
// "Ended lists"). A listed slot applies to its schedule while the
// schedule is the same one-shot that fired: no state record of its own,
// the spec's at equal to the slot, and the spec created no later than
// the list (EndedSlot.Applies). The owner of a shard writes its lists
// (Create: a key is never overwritten) and deletes each once no slot of
// it applies any more.
type Ended struct {
	// Shard is the shard of every listed schedule.
	Shard int `json:"shard"`
	// Owner is the instance that wrote the list; At is when, after every
	// listed fire was acknowledged.
	Owner string    `json:"owner"`
	At    time.Time `json:"at"`
	// Slots are the one-shots' fired slots.
	Slots []EndedSlot `json:"slots"`
}

// EndedSlot is one one-shot's fired slot in an ended list.
type EndedSlot struct {
	// Schedule is the schedule id; Slot its one-shot's time.
	Schedule string    `json:"schedule"`
	Slot     time.Time `json:"slot"`
	// Seq is the fire's sequence in the fire stream.
	Seq uint64 `json:"seq"`
	// Window names the window claim it fired under ("<shard>/<seq>").
	Window string `json:"window,omitempty"`
}

// EndedPrefix begins the key of every ended list.
const EndedPrefix = "ended."

// EndedKey is the key of shard's ended list named token.
func EndedKey(shard int, token string) string {
	return EndedPrefix + strconv.Itoa(shard) + "." + token
}

// endedFilter matches the keys of shard's ended lists.
func endedFilter(shard int) string { return EndedPrefix + strconv.Itoa(shard) + ".*" }

// State is the ended state record that slot s stands for: next none,
// ended, one fire, and the window's claim on the slot settled by the
// fire's sequence. plan is the schedule's compiled plan.
func (s EndedSlot) State(plan string, l Ended) kvstore.State {
	slot := s.Slot.UTC()
	return kvstore.State{Plan: plan, Ended: true, Fires: 1, UpdatedAt: l.At.UTC(), Owner: l.Owner,
		Claim: &kvstore.Claim{Slot: slot, Token: "ended", Owner: l.Owner, At: l.At.UTC(), Expires: l.At.UTC(), Seq: s.Seq, Window: s.Window}}
}

// DecodeEnded parses an ended list; every slot must name a schedule
// (a valid id) and a time.
func DecodeEnded(data []byte) (Ended, error) {
	var l Ended
	if err := json.Unmarshal(data, &l); err != nil {
		return Ended{}, fmt.Errorf("%w: ended list: %v", kvstore.ErrInvalid, err)
	}
	for i, s := range l.Slots {
		if err := kvstore.ValidateID(s.Schedule); err != nil {
			return Ended{}, fmt.Errorf("%w: ended list: slots[%d].schedule: %v", kvstore.ErrInvalid, i, err)
		}
		if s.Slot.IsZero() {
			return Ended{}, fmt.Errorf("%w: ended list: slots[%d].slot: missing", kvstore.ErrInvalid, i)
		}
	}
	return l, nil
}

// Encode returns the list's JSON.
func (l Ended) Encode() ([]byte, error) { return json.Marshal(l) }

// PutEnded writes a new ended list of l.Shard under token; it never
// replaces one (ErrConflict if the key exists).
func (s *Store) PutEnded(ctx context.Context, l Ended, token string) (uint64, error) {
	data, err := l.Encode()
	if err != nil {
		return 0, fmt.Errorf("kvstore: encode ended list: %w", err)
	}
	key := EndedKey(l.Shard, token)
	n, err := s.leases.Create(ctx, key, data)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return 0, fmt.Errorf("kvstore: write %s: %w", key, kvstore.ErrConflict)
	}
	if err != nil {
		return 0, fmt.Errorf("kvstore: write %s: %w", key, err)
	}
	return n, nil
}

// EndedEntry is a stored ended list with its key and revision.
type EndedEntry struct {
	Key      string
	Revision uint64
	List     Ended
}

// WatchEnded watches every ended list (all shards): each list's latest
// value, then a nil entry, then changes (deletes included).
func (s *Store) WatchEnded(ctx context.Context) (jetstream.KeyWatcher, error) {
	w, err := s.watch(ctx, s.leases, watchOpts{filter: EndedPrefix + ">"})
	if err != nil {
		return nil, fmt.Errorf("kvstore: watch ended lists: %w", err)
	}
	return w, nil
}

// EndedLists reads every ended list of shard. A list that does not
// decode, or names another shard, is skipped and reported through bad
// (nil: ignored); it stands for nothing.
//
// One direct get reads them (every list's last value, answered by the
// stream): an instance reads each shard's lists as it takes the shard, and
// through a watch that was a consumer made and deleted per shard, JetStream
// API requests the server answers one after another, behind any slow one
// (the specs watch's at a start: 0.7 s at a million schedules). A shard
// with more lists than one answer holds (1,024), or a bucket without direct
// gets, is read through a watch.
func (s *Store) EndedLists(ctx context.Context, shard int, bad func(key string, err error)) ([]EndedEntry, error) {
	bucket := s.leases.Bucket()
	prefix := "$KV." + bucket + "."
	var out []EndedEntry
	keep := func(key string, rev uint64, value []byte) {
		l, err := decodeEndedOf(shard, key, value)
		if err != nil {
			if bad != nil {
				bad(key, err)
			}
			return
		}
		out = append(out, EndedEntry{Key: key, Revision: rev, List: l})
	}
	// Decoded once the answer is whole, so that a list is reported bad
	// once, not again by the watch after an answer cut short.
	var got []*nats.Msg
	err := directget.LastPerSubject(ctx, s.js, "KV_"+bucket, []string{prefix + endedFilter(shard)}, func(m *nats.Msg) {
		got = append(got, m)
	})
	switch {
	case err == nil:
		for _, m := range got {
			subject := m.Header.Get(jetstream.SubjectHeader)
			rev, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
			if opOf(m.Header) != jetstream.KeyValuePut || !strings.HasPrefix(subject, prefix) || err != nil {
				continue // deleted or purged: no list
			}
			keep(subject[len(prefix):], rev, m.Data)
		}
		return out, nil
	case errors.Is(err, directget.ErrTooMany), errors.Is(err, directget.ErrNoDirect):
		if err := s.endedListsWatched(ctx, shard, keep); err != nil {
			return nil, err
		}
		return out, nil
	}
	return nil, fmt.Errorf("kvstore: read ended lists of shard %d: %w", shard, err)
}

// endedListsWatched reads every ended list of shard through a watch,
// each to keep.
func (s *Store) endedListsWatched(ctx context.Context, shard int, keep func(key string, rev uint64, value []byte)) error {
	w, err := s.watch(ctx, s.leases, watchOpts{filter: endedFilter(shard), ignoreDeletes: true})
	if err != nil {
		return fmt.Errorf("kvstore: read ended lists of shard %d: %w", shard, err)
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("kvstore: read ended lists of shard %d: %w", shard, ctx.Err())
		case e, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("kvstore: read ended lists of shard %d: watch closed", shard)
			}
			if e == nil {
				return nil
			}
			keep(e.Key(), e.Revision(), e.Value())
		}
	}
}

// EndedList reads the ended list key. ErrNotFound when there is none;
// ErrInvalid when it does not decode or names a shard other than its
// key's (it stands for nothing, as EndedLists skips it).
func (s *Store) EndedList(ctx context.Context, key string) (EndedEntry, error) {
	shard, ok := endedKeyShard(key)
	if !ok {
		return EndedEntry{}, fmt.Errorf("%w: %q is not an ended list's key", kvstore.ErrInvalid, key)
	}
	e, err := get(ctx, s.leases, "ended list", key)
	if err != nil {
		return EndedEntry{}, fmt.Errorf("kvstore: read ended list %s: %w", key, err)
	}
	l, err := decodeEndedOf(shard, key, e.Value())
	if err != nil {
		return EndedEntry{}, err
	}
	return EndedEntry{Key: key, Revision: e.Revision(), List: l}, nil
}

// decodeEndedOf decodes the ended list stored under key of shard: one
// that names another shard stands for nothing (ErrInvalid).
func decodeEndedOf(shard int, key string, data []byte) (Ended, error) {
	l, err := DecodeEnded(data)
	if err == nil && l.Shard != shard {
		err = fmt.Errorf("%w: %s names shard %d", kvstore.ErrInvalid, key, l.Shard)
	}
	return l, err
}

// endedKeyShard is the shard an ended list's key names.
func endedKeyShard(key string) (int, bool) {
	rest, ok := strings.CutPrefix(key, EndedPrefix)
	if !ok {
		return 0, false
	}
	n, token, ok := strings.Cut(rest, ".")
	shard, err := strconv.Atoi(n)
	return shard, ok && err == nil && shard >= 0 && token != ""
}

// DeleteEnded deletes the ended list key if it is still at revision rev.
func (s *Store) DeleteEnded(ctx context.Context, key string, rev uint64) error {
	if !strings.HasPrefix(key, EndedPrefix) {
		return fmt.Errorf("%w: %q is not an ended list's key", kvstore.ErrInvalid, key)
	}
	if err := s.leases.Delete(ctx, key, jetstream.LastRevision(rev)); err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return fmt.Errorf("kvstore: delete %s at revision %d: %w", key, rev, kvstore.ErrConflict)
		}
		return fmt.Errorf("kvstore: delete %s: %w", key, err)
	}
	return nil
}

// endedSlotIn is id's latest slot in lists, if one names it.
func endedSlotIn(lists []EndedEntry, id string) (slot EndedSlot, list Ended, ok bool) {
	for _, e := range lists {
		for _, sl := range e.List.Slots {
			if sl.Schedule == id && (!ok || sl.Slot.After(slot.Slot)) {
				slot, list, ok = sl, e.List, true
			}
		}
	}
	return slot, list, ok
}

// EndedReader looks schedules up in the ended lists of their shards, for
// readers that are not a shard's owner (schedule get, listings). It reads
// the fleet's shard count and each shard's lists at most once: a page of
// a listing would otherwise read a shard's every list once per schedule.
// A schedule given a hint (the list a watch of the lists last saw name it,
// Hint) is looked up in that one list first, read once for every schedule
// it names: at a million listed one-shots a page of 100 read most shards'
// every list (600 ms) where it now reads at most 100 lists. What it read
// is as of its first look at a shard or list. Safe for concurrent use;
// made per reply, not kept.
type EndedReader struct {
	store  *Store
	mu     sync.Mutex
	shards *endedRead[int]
	lists  map[int]*endedRead[[]EndedEntry]
	hints  map[string]string
	named  map[string]*endedRead[EndedEntry]
}

// endedRead is one read an EndedReader makes once.
type endedRead[T any] struct {
	once sync.Once
	v    T
	err  error
}

// NewEndedReader returns an EndedReader on s.
func (s *Store) NewEndedReader() *EndedReader {
	return &EndedReader{store: s, shards: &endedRead[int]{}, lists: map[int]*endedRead[[]EndedEntry]{},
		hints: map[string]string{}, named: map[string]*endedRead[EndedEntry]{}}
}

// Hint tells r that the ended list key names schedule id, so that SlotOf
// reads that list instead of the shard's every list. A wrong hint (a list
// deleted since, or one that does not name id) costs one read, then the
// shard's lists are read as without it.
func (r *EndedReader) Hint(id, key string) {
	r.mu.Lock()
	r.hints[id] = key
	r.mu.Unlock()
}

// SlotOf is schedule id's latest slot in the ended lists of its shard
// (with a hint: in the hinted list, if it names id); ok is false when no
// list names it.
func (r *EndedReader) SlotOf(ctx context.Context, id string) (slot EndedSlot, list Ended, ok bool, err error) {
	r.shards.once.Do(func() { r.shards.v, r.shards.err = r.store.Shards(ctx) })
	if r.shards.err != nil {
		return EndedSlot{}, Ended{}, false, r.shards.err
	}
	shard := kvstore.ShardOf(id, r.shards.v)
	r.mu.Lock()
	key, hinted := r.hints[id]
	one := r.named[key]
	if hinted && one == nil {
		one = &endedRead[EndedEntry]{}
		r.named[key] = one
	}
	r.mu.Unlock()
	if hinted {
		one.once.Do(func() { one.v, one.err = r.store.EndedList(ctx, key) })
		if one.err == nil && one.v.List.Shard == shard {
			if slot, list, ok = endedSlotIn([]EndedEntry{one.v}, id); ok {
				return slot, list, true, nil
			}
		}
	}
	r.mu.Lock()
	read, seen := r.lists[shard]
	if !seen {
		read = &endedRead[[]EndedEntry]{}
		r.lists[shard] = read
	}
	r.mu.Unlock()
	read.once.Do(func() { read.v, read.err = r.store.EndedLists(ctx, shard, nil) })
	if read.err != nil {
		return EndedSlot{}, Ended{}, false, read.err
	}
	slot, list, ok = endedSlotIn(read.v, id)
	return slot, list, ok, nil
}
