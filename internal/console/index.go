package console

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// row is one schedule in the index: what the list filters and sorts on.
// Everything else a page shows comes from schedule.get for the rows on the
// page. Workflow and recurrence strings are interned.
type row struct {
	id       string
	workflow string
	recur    string
	next     int64 // unix nanoseconds of the next slot; 0 when none
	at       int64 // a one-shot's time (unix nanoseconds); 0 for others
	listed   int64 // the latest slot an ended list names for it; 0 when none
	flags    readmodel.Flags
}

// endedByList reports whether an ended list stands for the row's ended
// state record: it has no record of its own and the list names its
// one-shot's time (docs/protocol.md, "Ended lists"; a spec moved to
// another time is planned anew).
func (r *row) endedByList() bool {
	return r.flags&readmodel.FlagState == 0 && r.listed != 0 && r.listed == r.at
}

// nextAt is the row's next slot (unix nanoseconds), 0 when none.
func (r *row) nextAt() int64 {
	if r.endedByList() {
		return 0
	}
	return r.next
}

// state is the row's listing state, as the admin API names it.
func (r *row) state() string {
	f := r.flags
	if r.listed != 0 && r.listed == r.at {
		f |= readmodel.FlagListed // stands for the record while it has none (Flags.State)
	}
	return f.State()
}

// sortKey orders rows by next fire, those without one last.
func (r *row) sortKey() int64 {
	if next := r.nextAt(); next != 0 {
		return next
	}
	return math.MaxInt64
}

// stateBits is what a state record contributes to a row.
type stateBits struct {
	next  int64
	flags readmodel.Flags
}

// lease is a shard lease or an instance's membership in sched_leases.
type lease struct {
	Owner   string    `json:"owner"`
	Renewed time.Time `json:"renewed"`
	TTL     string    `json:"ttl"`
}

// expired reports whether the lease's TTL has passed at now.
func (l lease) expired(now time.Time) bool {
	d, err := time.ParseDuration(l.TTL)
	return err == nil && now.After(l.Renewed.Add(d))
}

// Topics of the live updates.
const (
	topicSchedules = "schedules"
	topicTimers    = "timers"
	topicCalendars = "calendars"
	topicFleet     = "fleet"
)

// topicSchedule is the topic of one schedule's page.
func topicSchedule(id string) string { return "schedule:" + id }

// index is the console's view of every schedule, sorted by next fire on
// demand, fed by KV watches of sched_specs and sched_state; it also
// follows sched_leases (the fleet page) and the wakeups and calendars
// buckets (only to tell their pages to refresh). Rows cost about 150 bytes
// each (docs/console.md has the measurement).
type index struct {
	store  *jsstore.Store
	model  readmodel.Model
	shards int
	log    *slog.Logger
	notify func(topic string)

	mu      sync.RWMutex
	rows    map[string]*row
	orphans map[string]stateBits // state records whose spec has not been seen
	strs    map[string]string    // interned workflow and recurrence strings
	shardOf map[int]lease
	members map[string]lease
	loaded  bool
	ready   chan struct{}

	readmodel.Runner
}

func newIndex(store *jsstore.Store, shards int, log *slog.Logger, notify func(string)) *index {
	return &index{store: store, model: readmodel.Model{Store: store, Planner: fires.Planner{}}, shards: shards, log: log, notify: notify, ready: make(chan struct{}),
		rows: map[string]*row{}, orphans: map[string]stateBits{}, strs: map[string]string{},
		shardOf: map[int]lease{}, members: map[string]lease{}}
}

// start follows the buckets until stop.
func (ix *index) start(ctx context.Context) {
	ix.Run(ctx, rewatchDelay, ix.follow, func(err error) {
		ix.log.Warn("console: lost a watch of the buckets; reloading", "err", err)
	})
}

// rewatchDelay is the pause before a failed watch is opened again.
const rewatchDelay = time.Second

// follow loads the index and keeps it current until a watch fails or ctx
// ends. The state records load first, so that the specs' backlog computes
// a planned next fire only for the schedules that have none.
func (ix *index) follow(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	layout := ix.store.Layout()
	js := ix.store.JetStream()
	ix.reset()
	state, err := ix.store.WatchState(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = state.Stop() }()
	if err := drain(ctx, state, ix.applyState); err != nil {
		return err
	}
	specs, err := ix.store.WatchSpecs(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = specs.Stop() }()
	if err := drain(ctx, specs, func(e jetstream.KeyValueEntry) { ix.applySpec(ctx, e, false) }); err != nil {
		return err
	}
	// Shard leases and members only: the window claims (window.<n>) in
	// the same bucket can be large and come often under load.
	leases, err := ix.store.Leases().WatchFiltered(ctx, []string{"shard.*", "member.*"})
	if err != nil {
		return err
	}
	defer func() { _ = leases.Stop() }()
	if err := drain(ctx, leases, ix.applyLease); err != nil {
		return err
	}
	// The ended lists after the specs: a list names rows that exist.
	lists, err := ix.store.WatchEnded(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = lists.Stop() }()
	if err := drain(ctx, lists, ix.applyList); err != nil {
		return err
	}
	others := map[string]jetstream.KeyWatcher{}
	for topic, bucket := range map[string]string{topicTimers: layout.WakeupsBucket, topicCalendars: layout.CalendarsBucket} {
		kv, err := js.KeyValue(ctx, bucket)
		if err != nil {
			return err
		}
		w, err := kv.WatchAll(ctx, jetstream.UpdatesOnly(), jetstream.MetaOnly())
		if err != nil {
			return err
		}
		defer func() { _ = w.Stop() }()
		others[topic] = w
	}
	ix.mu.Lock()
	ix.loaded = true
	ix.mu.Unlock()
	select {
	case <-ix.ready:
	default:
		close(ix.ready)
	}
	ix.notify(topicSchedules)
	ix.notify(topicFleet)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-state.Updates():
			if !ok {
				return errors.New("console: the state watch closed")
			}
			ix.applyState(e)
		case e, ok := <-specs.Updates():
			if !ok {
				return errors.New("console: the specs watch closed")
			}
			ix.applySpec(ctx, e, true)
		case e, ok := <-leases.Updates():
			if !ok {
				return errors.New("console: the leases watch closed")
			}
			ix.applyLease(e)
		case e, ok := <-lists.Updates():
			if !ok {
				return errors.New("console: the ended lists watch closed")
			}
			ix.applyList(e)
		case _, ok := <-others[topicTimers].Updates():
			if !ok {
				return errors.New("console: the wakeups watch closed")
			}
			ix.notify(topicTimers)
		case _, ok := <-others[topicCalendars].Updates():
			if !ok {
				return errors.New("console: the calendars watch closed")
			}
			ix.notify(topicCalendars)
		}
	}
}

// drain applies a watch's backlog (up to the nil entry that ends it).
func drain(ctx context.Context, w jetstream.KeyWatcher, apply func(jetstream.KeyValueEntry)) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return errors.New("console: a watch closed while loading")
			}
			if e == nil {
				return nil
			}
			apply(e)
		}
	}
}

func (ix *index) reset() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	clear(ix.rows)
	clear(ix.orphans)
	clear(ix.shardOf)
	clear(ix.members)
	ix.loaded = false
}

// intern returns the shared copy of s. Called with mu held.
func (ix *index) intern(s string) string {
	if v, ok := ix.strs[s]; ok {
		return v
	}
	ix.strs[s] = s
	return s
}

func deleted(e jetstream.KeyValueEntry) bool {
	op := e.Operation()
	return op == jetstream.KeyValueDelete || op == jetstream.KeyValuePurge
}

// applyState folds a state record into its row (or keeps it for a spec
// not seen yet).
func (ix *index) applyState(e jetstream.KeyValueEntry) {
	id := e.Key()
	var bits stateBits
	if !deleted(e) {
		bits.flags = readmodel.FlagState
		if st, err := kvstore.DecodeState(e.Value()); err == nil {
			if !st.Ended && !st.Next.IsZero() {
				bits.next = st.Next.UnixNano()
			}
			bits.flags = readmodel.StateFlags(&st)
		}
	}
	ix.mu.Lock()
	r := ix.rows[id]
	switch {
	case r != nil:
		r.flags = r.flags&readmodel.FlagInvalid | bits.flags
		if bits.flags != 0 {
			r.next = bits.next
		}
	case bits.flags != 0:
		ix.orphans[id] = bits
	default:
		delete(ix.orphans, id)
	}
	loaded := ix.loaded
	ix.mu.Unlock()
	if loaded {
		ix.notify(topicSchedules)
		ix.notify(topicSchedule(id))
		ix.notify(topicFleet)
	}
}

// applySpec folds a spec into its row (live: after the backlog, so the
// pages hear of it). A schedule without a state record gets the next
// fire schedulers plan for it.
func (ix *index) applySpec(ctx context.Context, e jetstream.KeyValueEntry, live bool) {
	id := e.Key()
	if deleted(e) {
		ix.mu.Lock()
		delete(ix.rows, id)
		ix.mu.Unlock()
		if live {
			ix.notify(topicSchedules)
			ix.notify(topicSchedule(id))
		}
		return
	}
	spec, err := kvstore.DecodeSpec(e.Value())
	if err == nil {
		err = spec.Validate(id)
	}
	ix.mu.Lock()
	r := ix.rows[id]
	if r == nil {
		r = &row{id: id}
		if bits, ok := ix.orphans[id]; ok {
			r.next, r.flags = bits.next, bits.flags
			delete(ix.orphans, id)
		}
		ix.rows[id] = r
	}
	r.workflow = ix.intern(spec.Workflow)
	r.recur = ix.intern(spec.RecurrenceString())
	r.at = 0
	if spec.At != nil {
		r.at = spec.At.UnixNano()
	}
	r.flags &^= readmodel.FlagInvalid
	if err != nil {
		r.flags |= readmodel.FlagInvalid
	}
	needsPlan := err == nil && r.flags&readmodel.FlagState == 0
	ix.mu.Unlock()
	if needsPlan {
		ix.planOne(ctx, id, spec, e.Created())
	}
	if live {
		ix.notify(topicSchedules)
		ix.notify(topicSchedule(id))
	}
}

// applyList notes the one-shots an ended list names (a list is deleted
// only once it stands for nothing: each schedule has a record, was
// removed, or was moved to another time, which the rows say already; an
// id without a row, removed, is not kept: added again it is a new
// one-shot). A list that does not decode stands for nothing.
func (ix *index) applyList(e jetstream.KeyValueEntry) {
	if deleted(e) {
		return
	}
	l, err := jsstore.DecodeEnded(e.Value())
	if err != nil {
		return
	}
	var named []string
	ix.mu.Lock()
	for _, s := range l.Slots {
		if r := ix.rows[s.Schedule]; r != nil && s.Slot.UnixNano() > r.listed {
			r.listed = s.Slot.UnixNano()
			named = append(named, r.id)
		}
	}
	loaded := ix.loaded
	ix.mu.Unlock()
	if loaded && len(named) > 0 {
		ix.notify(topicSchedules)
		for _, id := range named {
			ix.notify(topicSchedule(id))
		}
	}
}

// planOne sets the next fire of a schedule without a state record to the
// plan a scheduler keeps for it (the read model's planner: the engine's
// own code).
func (ix *index) planOne(ctx context.Context, id string, spec kvstore.Spec, written time.Time) {
	st, err := ix.model.Planner.Planned(id, spec, written, time.Now(), ix.store.CalendarSource(ctx))
	var next int64
	if err == nil && !st.Ended && !st.Next.IsZero() {
		next = st.Next.UnixNano()
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if r := ix.rows[id]; r != nil && r.flags&readmodel.FlagState == 0 {
		r.next = next
	}
}

// applyLease records a shard lease or a member.
func (ix *index) applyLease(e jetstream.KeyValueEntry) {
	key := e.Key()
	var l lease
	gone := deleted(e) || json.Unmarshal(e.Value(), &l) != nil
	ix.mu.Lock()
	if n, ok := strings.CutPrefix(key, "shard."); ok {
		if shard, err := strconv.Atoi(n); err == nil {
			if gone {
				delete(ix.shardOf, shard)
			} else {
				ix.shardOf[shard] = l
			}
		}
	} else if inst, ok := strings.CutPrefix(key, "member."); ok {
		if gone {
			delete(ix.members, inst)
		} else {
			ix.members[inst] = l
		}
	}
	loaded := ix.loaded
	ix.mu.Unlock()
	if loaded {
		ix.notify(topicFleet)
		ix.notify(topicSchedules)
	}
}

// isLoaded reports whether the index holds every schedule.
func (ix *index) isLoaded() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.loaded
}

// owner is the instance holding the lease of a schedule's shard ("" when
// none does).
func (ix *index) owner(id string) string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	l, ok := ix.shardOf[kvstore.ShardOf(id, ix.shards)]
	if !ok || l.expired(time.Now()) {
		return ""
	}
	return l.Owner
}
