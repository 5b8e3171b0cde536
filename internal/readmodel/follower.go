package readmodel

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Record names the kind of record that changed a schedule's row.
type Record int

// The records a Follower applies.
const (
	RecordSpec  Record = iota // a spec put or removed
	RecordState               // a state record put or removed
	RecordList                // an ended list that names the schedule
)

// Watch is a watch a listing follows besides the schedules': its records
// are the listing's own (timers, leases, buckets whose pages refresh).
type Watch struct {
	// Bucket is the watched bucket, as Follower.Applied names it.
	Bucket jsstore.Bucket
	// Open opens the watch.
	Open func(context.Context) (jetstream.KeyWatcher, error)
	// Apply folds one entry in; the follower does not hold Lock.
	Apply func(jetstream.KeyValueEntry)
	// Live: the watch sends updates only (no backlog to load).
	Live bool
}

// Follower keeps a listing's rows (Table) current: one per schedule,
// from the specs, the state records and the ended lists, followed with
// KV watches. It loads the state records first, then the specs (so that
// only a schedule without a record is planned), then the ended lists (so
// that a list names rows that exist), then the listing's own watches
// (Extra); then it applies every watch's updates as they come. Run it
// with a Runner: Follow returns when a watch fails, and the next call
// loads the rows anew. A state record or an ended list whose spec has not
// been seen (the spec removed, or not written yet) is kept aside until
// its spec comes.
//
// The fields are set before the first Follow and not changed after.
type Follower struct {
	// Store holds the watched buckets.
	Store *jsstore.Store
	// Table keeps the rows; Lock guards it (the listing's lock).
	Table Table
	Lock  sync.Locker
	// Planner, when set, keeps each row's next slot: the state record's,
	// or without one the plan a scheduler keeps for it. Without one, a
	// state record is read for its flags only (RecordFlags).
	Planner Planner
	// Invalid tells whether a decoded spec is invalid (nil:
	// compile.Validate).
	Invalid func(id string, spec kvstore.Spec) bool
	// Extra are the listing's own watches.
	Extra []Watch
	// Begin, when set, is called at the start of each load; an error
	// ends it.
	Begin func(context.Context) error
	// Loaded, when set, is called once every watch has delivered its
	// backlog.
	Loaded func()
	// Changed, when set, is called once loaded, without Lock, after a
	// record of kind changed the rows of ids.
	Changed func(kind Record, ids ...string)
	// Applied, when set, is called with Lock held once the follower
	// applied revision rev of bucket b: each update's revision, and at
	// the end of a backlog, the bucket's last revision before its watch
	// opened (every write before it has been applied). The ended lists
	// are the leases bucket's.
	Applied func(b jsstore.Bucket, rev uint64)

	// Used by the following goroutine only (and, for orphans and lists,
	// with Lock held).
	live    bool
	orphans map[string]Row // the state and list of ids whose spec has not been seen
	// lists are the keys of the ended lists seen, by Row.List (less one);
	// "" for a list deleted since. Numbers are not reused until a reload:
	// a list is written per window of up to 512 one-shots.
	lists   []string
	listNum map[string]uint32
}

// ListKey is the key of ended list number n (Row.List; "" for none, or a
// list deleted since). Called with Lock held.
func (f *Follower) ListKey(n uint32) string {
	if n == 0 || int(n) > len(f.lists) {
		return ""
	}
	return f.lists[n-1]
}

// Follow loads the rows and keeps them current until a watch fails or ctx
// ends.
func (f *Follower) Follow(ctx context.Context) error {
	if f.Begin != nil {
		if err := f.Begin(ctx); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f.reset()
	watches := append([]Watch{
		{Bucket: jsstore.BucketState, Open: f.Store.WatchState, Apply: f.applyState},
		{Bucket: jsstore.BucketSpecs, Open: f.Store.WatchSpecs, Apply: func(e jetstream.KeyValueEntry) { f.applySpec(ctx, e) }},
		{Bucket: jsstore.BucketLeases, Open: f.Store.WatchEnded, Apply: f.applyList},
	}, f.Extra...)
	open := make([]jetstream.KeyWatcher, len(watches))
	for i, w := range watches {
		kw, err := f.load(ctx, w)
		if err != nil {
			return err
		}
		defer func() { _ = kw.Stop() }()
		open[i] = kw
	}
	f.live = true
	if f.Loaded != nil {
		f.Loaded()
	}
	type update struct {
		w  int
		e  jetstream.KeyValueEntry
		ok bool
	}
	updates := make(chan update)
	for i, kw := range open {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				var u update
				select {
				case <-ctx.Done():
					return
				case u.e, u.ok = <-kw.Updates():
				}
				u.w = i
				select {
				case updates <- u:
				case <-ctx.Done():
					return
				}
				if !u.ok {
					return
				}
			}
		}()
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case u := <-updates:
			switch {
			case !u.ok:
				return fmt.Errorf("readmodel: the watch of bucket %d closed", watches[u.w].Bucket)
			case u.e != nil:
				f.apply(watches[u.w], u.e)
			}
		}
	}
}

// load opens watch w and applies its backlog.
func (f *Follower) load(ctx context.Context, w Watch) (jetstream.KeyWatcher, error) {
	var floor uint64
	if f.Applied != nil && !w.Live {
		// Every revision up to floor is delivered by the time the watch
		// reports its backlog done.
		rev, err := f.Store.LastRevision(ctx, w.Bucket)
		if err != nil {
			return nil, fmt.Errorf("readmodel: last revision of bucket %d: %w", w.Bucket, err)
		}
		floor = rev
	}
	kw, err := w.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("readmodel: watch bucket %d: %w", w.Bucket, err)
	}
	if w.Live {
		return kw, nil
	}
	for {
		select {
		case <-ctx.Done():
			_ = kw.Stop()
			return nil, ctx.Err()
		case e, ok := <-kw.Updates():
			switch {
			case !ok:
				_ = kw.Stop()
				return nil, fmt.Errorf("readmodel: the watch of bucket %d closed while loading", w.Bucket)
			case e == nil:
				f.applied(w.Bucket, floor)
				return kw, nil
			}
			f.apply(w, e)
		}
	}
}

// apply folds entry e of watch w in.
func (f *Follower) apply(w Watch, e jetstream.KeyValueEntry) {
	w.Apply(e)
	f.applied(w.Bucket, e.Revision())
}

// applied reports revision rev of bucket b applied.
func (f *Follower) applied(b jsstore.Bucket, rev uint64) {
	if f.Applied == nil {
		return
	}
	f.Lock.Lock()
	f.Applied(b, rev)
	f.Lock.Unlock()
}

// changed tells the listing, once loaded, that the rows of ids changed.
func (f *Follower) changed(kind Record, ids ...string) {
	if f.live && f.Changed != nil && len(ids) > 0 {
		f.Changed(kind, ids...)
	}
}

// reset empties the rows for a (re)load.
func (f *Follower) reset() {
	f.Lock.Lock()
	defer f.Lock.Unlock()
	f.live = false
	f.Table.Reset()
	f.orphans = map[string]Row{}
	f.lists, f.listNum = nil, map[string]uint32{}
}

func deleted(e jetstream.KeyValueEntry) bool {
	op := e.Operation()
	return op == jetstream.KeyValueDelete || op == jetstream.KeyValuePurge
}

// key is a copy of e's key: the key is a substring of the message's
// subject, which a row would keep alive.
func key(e jetstream.KeyValueEntry) string { return strings.Clone(e.Key()) }

// applyState folds a state record into its row, or keeps it aside for a
// spec not seen yet. A record that does not decode is a record all the
// same.
func (f *Follower) applyState(e jetstream.KeyValueEntry) {
	id := key(e)
	var bits Row
	switch {
	case deleted(e):
	case f.Planner == nil:
		bits.Flags = RecordFlags(e.Value())
	default:
		bits.Flags = FlagState
		if st, err := kvstore.DecodeState(e.Value()); err == nil {
			if !st.Ended && !st.Next.IsZero() {
				bits.Next = st.Next.UnixNano()
			}
			bits.Flags = StateFlags(&st)
		}
	}
	f.Lock.Lock()
	switch r := f.Table.Row(id); {
	case r != nil:
		r.Flags = r.Flags&FlagInvalid | bits.Flags
		if bits.Flags != 0 {
			r.Next = bits.Next
		}
	default:
		o := f.orphans[id]
		o.Flags, o.Next = bits.Flags, bits.Next
		f.keep(id, o)
	}
	f.Lock.Unlock()
	f.changed(RecordState, id)
}

// keep sets aside o, what is known of id without its spec (nothing:
// forgotten). Called with Lock held.
func (f *Follower) keep(id string, o Row) {
	if o == (Row{}) {
		delete(f.orphans, id)
	} else {
		f.orphans[id] = o
	}
}

// ListOf is the key of the ended list that last named schedule id ("" for
// none), whether its spec has been seen or not. Called with Lock held.
func (f *Follower) ListOf(id string) string {
	if r := f.Table.Row(id); r != nil {
		return f.ListKey(r.List)
	}
	return f.ListKey(f.orphans[id].List)
}

// applySpec adds, changes or removes a schedule's row. A new row takes
// the state kept aside for it; one without a state record gets the next
// slot a scheduler plans for it (with a Planner).
func (f *Follower) applySpec(ctx context.Context, e jetstream.KeyValueEntry) {
	id := key(e)
	if deleted(e) {
		f.Lock.Lock()
		f.Table.Remove(id)
		f.Lock.Unlock()
		f.changed(RecordSpec, id)
		return
	}
	// Decoded before the lock is taken.
	spec, err := kvstore.DecodeSpec(e.Value())
	invalid := err != nil || f.invalid(id, spec)
	f.Lock.Lock()
	var r Row
	if old := f.Table.Row(id); old != nil {
		r = *old
	} else if o, ok := f.orphans[id]; ok {
		r = o
		delete(f.orphans, id)
	}
	r.At = 0
	if spec.At != nil {
		r.At = spec.At.UnixNano()
	}
	r.Flags &^= FlagInvalid
	if invalid {
		r.Flags |= FlagInvalid
	}
	f.Table.Put(id, spec, r)
	plan := f.Planner != nil && !invalid && r.Flags&FlagState == 0
	f.Lock.Unlock()
	if plan {
		f.plan(ctx, id, spec, e.Created())
	}
	f.changed(RecordSpec, id)
}

func (f *Follower) invalid(id string, spec kvstore.Spec) bool {
	if f.Invalid != nil {
		return f.Invalid(id, spec)
	}
	return compile.Validate(spec, id, nil) != nil
}

// plan sets the next slot of a schedule without a state record to the
// plan a scheduler keeps for it (the engine's own decision).
func (f *Follower) plan(ctx context.Context, id string, spec kvstore.Spec, written time.Time) {
	st, err := f.Planner.Planned(id, spec, written, time.Now(), f.Store.CalendarSource(ctx))
	var next int64
	if err == nil && !st.Ended && !st.Next.IsZero() {
		next = st.Next.UnixNano()
	}
	f.Lock.Lock()
	defer f.Lock.Unlock()
	if r := f.Table.Row(id); r != nil && r.Flags&FlagState == 0 {
		r.Next = next
	}
}

// applyList notes the one-shots an ended list names, with the list that
// names them (a list ahead of a spec is kept aside until the spec comes).
// A list is deleted only once it stands for nothing (each of its
// schedules has a record, was removed, or was moved to another time,
// which the rows say already): its rows keep no list to look in. A list
// that does not decode stands for nothing.
func (f *Follower) applyList(e jetstream.KeyValueEntry) {
	k := key(e)
	if deleted(e) {
		f.Lock.Lock()
		if n, ok := f.listNum[k]; ok {
			f.lists[n-1] = ""
			delete(f.listNum, k)
		}
		f.Lock.Unlock()
		return
	}
	l, err := jsstore.DecodeEnded(e.Value())
	if err != nil || len(l.Slots) == 0 {
		return
	}
	var named []string
	f.Lock.Lock()
	n, ok := f.listNum[k]
	if !ok {
		f.lists = append(f.lists, k)
		n = uint32(len(f.lists))
		f.listNum[k] = n
	}
	for _, s := range l.Slots {
		slot := s.Slot.UnixNano()
		r := f.Table.Row(s.Schedule)
		if r == nil {
			// A list ahead of the spec: kept aside until it comes.
			o := f.orphans[s.Schedule]
			if slot >= o.Listed {
				o.Listed, o.List = slot, n
				f.keep(s.Schedule, o)
			}
			continue
		}
		if slot > r.Listed || slot == r.Listed && n != r.List {
			r.Listed, r.List = slot, n
			named = append(named, s.Schedule)
		}
	}
	f.Lock.Unlock()
	f.changed(RecordList, named...)
}
