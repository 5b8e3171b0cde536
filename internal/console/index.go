package console

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/labels"
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
	labels   uint32 // the numbered label set (index.labelSets)
	readmodel.Row
}

// sortKey orders rows by next fire, those without one last.
func (r *row) sortKey() int64 {
	if next := r.NextAt(); next != 0 {
		return next
	}
	return math.MaxInt64
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
// demand, kept by a readmodel.Follower from sched_specs, sched_state and
// the ended lists (with the next fire schedulers plan for a schedule
// without a record); it also follows sched_leases (the fleet page) and the
// wakeups and calendars buckets (only to tell their pages to refresh).
// Rows cost about 150 bytes each (docs/console.md has the measurement).
type index struct {
	store  *jsstore.Store
	shards int
	log    *slog.Logger
	notify func(topic string)

	mu   sync.RWMutex
	rows map[string]*row
	strs map[string]string // interned workflow and recurrence strings
	// labelSets numbers the rows' label sets.
	labelSets labels.Sets
	shardOf   map[int]lease
	members   map[string]lease
	loaded    bool
	ready     chan struct{}

	follower readmodel.Follower
	readmodel.Runner
}

func newIndex(store *jsstore.Store, shards int, log *slog.Logger, notify func(string)) *index {
	ix := &index{store: store, shards: shards, log: log, notify: notify, ready: make(chan struct{}),
		rows: map[string]*row{}, strs: map[string]string{},
		shardOf: map[int]lease{}, members: map[string]lease{}}
	layout := store.Layout()
	ix.follower = readmodel.Follower{Store: store, Table: (*scheduleRows)(ix), Lock: &ix.mu, Planner: fires.Planner{},
		Loaded: ix.markLoaded, Changed: ix.changed,
		Extra: []readmodel.Watch{
			// Shard leases and members only: the window claims (window.<n>)
			// in the same bucket can be large and come often under load.
			{Bucket: jsstore.BucketLeases, Apply: ix.applyLease, Open: func(ctx context.Context) (jetstream.KeyWatcher, error) {
				return store.Leases().WatchFiltered(ctx, []string{"shard.*", "member.*"})
			}},
			ix.refresh(jsstore.BucketWakeups, layout.WakeupsBucket, topicTimers),
			ix.refresh(jsstore.BucketCalendars, layout.CalendarsBucket, topicCalendars),
		}}
	return ix
}

// refresh is a watch of bucket (named name) that tells topic's pages to
// refresh on each update.
func (ix *index) refresh(b jsstore.Bucket, name, topic string) readmodel.Watch {
	return readmodel.Watch{Bucket: b, Live: true, Apply: func(jetstream.KeyValueEntry) { ix.notify(topic) },
		Open: func(ctx context.Context) (jetstream.KeyWatcher, error) {
			kv, err := ix.store.JetStream().KeyValue(ctx, name)
			if err != nil {
				return nil, err
			}
			return kv.WatchAll(ctx, jetstream.UpdatesOnly(), jetstream.MetaOnly())
		}}
}

// start follows the buckets until stop.
func (ix *index) start(ctx context.Context) {
	ix.Run(ctx, rewatchDelay, ix.follower.Follow, func(err error) {
		ix.log.Warn("console: lost a watch of the buckets; reloading", "err", err)
	})
}

// rewatchDelay is the pause before a failed watch is opened again.
const rewatchDelay = time.Second

// markLoaded notes that the index holds every schedule, and tells the
// pages.
func (ix *index) markLoaded() {
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
}

// changed tells the pages of the schedules whose rows a record changed
// (a state record also moves the fleet page's counts).
func (ix *index) changed(kind readmodel.Record, ids ...string) {
	ix.notify(topicSchedules)
	for _, id := range ids {
		ix.notify(topicSchedule(id))
	}
	if kind == readmodel.RecordState {
		ix.notify(topicFleet)
	}
}

// scheduleRows is the index as the Follower's table of schedule rows.
type scheduleRows index

// Row is the row of schedule id, nil when none.
func (t *scheduleRows) Row(id string) *readmodel.Row {
	if r := t.rows[id]; r != nil {
		return &r.Row
	}
	return nil
}

// Put adds or replaces the row of schedule id.
func (t *scheduleRows) Put(id string, spec kvstore.Spec, r readmodel.Row) {
	t.rows[id] = &row{id: id, workflow: t.intern(spec.Workflow), recur: t.intern(spec.RecurrenceString()), labels: t.labelSets.ID(spec.Labels), Row: r}
}

// Remove drops the row of schedule id.
func (t *scheduleRows) Remove(id string) { delete(t.rows, id) }

// Reset empties the index for a (re)load.
func (t *scheduleRows) Reset() {
	clear(t.rows)
	clear(t.shardOf)
	clear(t.members)
	t.loaded = false
}

// intern returns the shared copy of s. Called with mu held.
func (t *scheduleRows) intern(s string) string {
	if v, ok := t.strs[s]; ok {
		return v
	}
	t.strs[s] = s
	return s
}

func deleted(e jetstream.KeyValueEntry) bool {
	op := e.Operation()
	return op == jetstream.KeyValueDelete || op == jetstream.KeyValuePurge
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
