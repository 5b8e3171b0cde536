package adminapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/labels"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// The catalogue's watches.
const (
	watchSpecs = iota
	watchState
	watchTimers
	watchLists // the ended lists in the leases bucket
	watches
)

var watchBuckets = [watches]jsstore.Bucket{jsstore.BucketSpecs, jsstore.BucketState, jsstore.BucketWakeups, jsstore.BucketLeases}

const (
	// loadWait is how long a listing waits for the catalogue's first load
	// before answering "unavailable".
	loadWait = 5 * time.Second
	// syncWait bounds how long a listing waits for the catalogue to catch
	// up with writes made before it.
	syncWait = 2 * time.Second
	// rewatchDelay is the pause before a failed watch is opened again.
	rewatchDelay = time.Second
)

// catalog is the admin service's sorted view of every schedule id and
// timer key, with what listings filter on: the workflow, the labels and,
// for schedules, the state (invalid, paused, ended, planned, active). A
// readmodel.Follower keeps its schedule rows current from the specs, state
// and ended lists (it also follows the wakeups bucket for the timers), so
// a page starts at its cursor with a binary search, and a count is a walk
// over small rows instead of a read of every value. Rows cost about 97
// bytes per schedule or timer (docs/operations.md).
type catalog struct {
	store *jsstore.Store
	log   *slog.Logger

	mu        sync.RWMutex
	schedules sortedIndex
	timers    sortedIndex
	workflows interner
	labelSets labels.Sets     // of schedules and timers
	applied   [watches]uint64 // the last revision each watch applied
	// check is used by the watch goroutine only.
	check validator
	// after holds the load back until it is closed (nil: load at once);
	// begun tells listings whether the load began.
	after   <-chan struct{}
	begun   bool
	ready   chan struct{} // closed once every watch delivered its backlog
	waiters []waiter

	rows readmodel.Follower
	readmodel.Runner
}

// waiter is a listing waiting for watch w to apply revision rev.
type waiter struct {
	w   int
	rev uint64
	ch  chan struct{}
}

func newCatalog(store *jsstore.Store, log *slog.Logger) *catalog {
	c := &catalog{store: store, log: log, ready: make(chan struct{})}
	c.rows = readmodel.Follower{Store: store, Table: (*scheduleRows)(c), Lock: &c.mu,
		Invalid: c.check.invalid, Begin: c.begin, Loaded: c.loaded, Applied: c.apply,
		Extra: []readmodel.Watch{{Bucket: jsstore.BucketWakeups, Open: store.WatchTimers, Apply: c.applyTimer}}}
	return c
}

// start runs the watches until stop, which is Runner.Stop.
func (c *catalog) start(ctx context.Context) {
	c.Run(context.WithoutCancel(ctx), rewatchDelay, c.rows.Follow, func(err error) {
		c.log.WarnContext(ctx, "admin: listing catalogue lost its watch; reloading", "err", err)
	})
}

// begin waits until the load may begin (after), and notes that it did.
func (c *catalog) begin(ctx context.Context) error {
	if c.after != nil {
		select {
		case <-c.after:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c.mu.Lock()
	c.begun = true
	c.mu.Unlock()
	return nil
}

// loaded notes that every watch delivered its backlog.
func (c *catalog) loaded() {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.ready:
	default:
		close(c.ready)
	}
}

// apply notes that bucket b's revision rev has been applied, and releases
// the listings waiting for it. Called with mu held.
func (c *catalog) apply(b jsstore.Bucket, rev uint64) {
	for w, wb := range watchBuckets {
		if wb == b {
			c.applied[w] = max(c.applied[w], rev)
		}
	}
	c.wake()
}

// applyTimer folds one timer into the catalogue.
func (c *catalog) applyTimer(e jetstream.KeyValueEntry) {
	del := e.Operation() == jetstream.KeyValueDelete || e.Operation() == jetstream.KeyValuePurge
	// A copy: the key is a substring of the message's subject, which a
	// row would keep alive.
	key := strings.Clone(e.Key())
	var t struct {
		Workflow string            `json:"workflow"`
		Labels   map[string]string `json:"labels"`
	}
	if !del {
		_ = json.Unmarshal(e.Value(), &t)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if del {
		c.timers.remove(key)
	} else {
		c.timers.put(row{key: key, group: c.workflows.id(t.Workflow), labels: c.labelSets.ID(t.Labels)})
	}
}

// scheduleRows is the catalogue as the Follower's table of schedule rows,
// in key order.
type scheduleRows catalog

// Row is the row of schedule id, nil when none.
func (t *scheduleRows) Row(id string) *readmodel.Row {
	if r, ok := t.schedules.get(id); ok {
		return &r.Row
	}
	return nil
}

// Put adds or replaces the row of schedule id.
func (t *scheduleRows) Put(id string, spec kvstore.Spec, r readmodel.Row) {
	t.schedules.put(row{key: id, group: t.workflows.id(spec.Workflow), labels: t.labelSets.ID(spec.Labels), Row: r})
}

// Remove drops the row of schedule id.
func (t *scheduleRows) Remove(id string) { t.schedules.remove(id) }

// Reset empties the catalogue for a (re)load.
func (t *scheduleRows) Reset() {
	t.schedules, t.timers = sortedIndex{}, sortedIndex{}
	t.applied = [watches]uint64{}
	select {
	case <-t.ready:
		t.ready = make(chan struct{})
	default:
	}
}

// listOf is the key of the ended list the catalogue last saw name
// schedule id ("" for none, or before the catalogue loaded it).
func (c *catalog) listOf(id string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rows.ListOf(id)
}

// wake releases the waiters whose revision has been applied. Called with
// mu held.
func (c *catalog) wake() {
	if len(c.waiters) == 0 {
		return
	}
	kept := c.waiters[:0]
	for _, wt := range c.waiters {
		if c.applied[wt.w] >= wt.rev {
			close(wt.ch)
		} else {
			kept = append(kept, wt)
		}
	}
	c.waiters = kept
}

// sync waits until the catalogue is loaded and has applied every write
// made to the buckets of ws before the call, so that a listing shows what
// the caller just wrote. Loading longer than loadWait gives
// errUnavailable; catching up longer than syncWait gives up the wait and
// lists what is there.
func (c *catalog) sync(ctx context.Context, ws ...int) error {
	c.mu.RLock()
	ready := c.ready
	c.mu.RUnlock()
	t := time.NewTimer(loadWait)
	defer t.Stop()
	select {
	case <-ready:
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		c.mu.RLock()
		n, begun := c.schedules.Len(), c.begun
		c.mu.RUnlock()
		if !begun {
			return fmt.Errorf("%w: the listing catalogue loads once the scheduler's index is complete; try again shortly", errUnavailable)
		}
		return fmt.Errorf("%w: the listing catalogue is still loading (%d schedules so far); try again shortly", errUnavailable, n)
	}
	t.Reset(syncWait)
	for _, w := range ws {
		rev, err := c.store.LastRevision(ctx, watchBuckets[w])
		if err != nil {
			return err
		}
		c.mu.Lock()
		if c.applied[w] >= rev {
			c.mu.Unlock()
			continue
		}
		ch := make(chan struct{})
		c.waiters = append(c.waiters, waiter{w: w, rev: rev, ch: ch})
		c.mu.Unlock()
		select {
		case <-ch:
			continue
		case <-ctx.Done():
		case <-t.C:
		}
		c.dropWaiter(ch)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return nil // late: list what there is
	}
	return nil
}

func (c *catalog) dropWaiter(ch chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, wt := range c.waiters {
		if wt.ch == ch {
			c.waiters = append(c.waiters[:i], c.waiters[i+1:]...)
			return
		}
	}
}

// query selects rows of an index.
type query struct {
	prefix, after string
	// workflow, when set, keeps the rows of that workflow only.
	workflow string
	// state, when set, keeps the schedules in that state only.
	state string
	// sel keeps the rows whose labels it matches (all when empty).
	sel   labels.Selector
	limit int
}

// page is what a query found: up to limit keys after the cursor, the
// count of every matching row, and whether rows follow the page.
type page struct {
	keys  []string
	total int
	more  bool
	// lists maps a schedule of the page to the ended list that names it
	// (only schedules that one does).
	lists map[string]string
}

// find runs q over the schedules or the timers.
func (c *catalog) find(timers bool, q query) page {
	c.mu.RLock()
	defer c.mu.RUnlock()
	x := &c.schedules
	if timers {
		x = &c.timers
	}
	var group uint32
	if q.workflow != "" {
		var ok bool
		if group, ok = c.workflows.lookup(q.workflow); !ok {
			return page{}
		}
	}
	labelled := c.labelSets.Matcher(q.sel)
	match := func(r *row) bool {
		return (q.workflow == "" || r.group == group) && (q.state == "" || r.State() == q.state) && labelled(r.labels)
	}
	var p page
	if q.prefix == "" && q.workflow == "" && q.state == "" && q.sel.Empty() {
		// Nothing to filter: the count is known, and the walk stops after
		// the page.
		p.total = x.Len()
		x.ascend("", q.after, func(r *row) bool {
			if len(p.keys) == q.limit {
				p.more = true
				return false
			}
			c.addToPage(&p, r)
			return true
		})
		return p
	}
	x.ascend(q.prefix, "", func(r *row) bool {
		if !match(r) {
			return true
		}
		p.total++
		if q.after != "" && r.key <= q.after {
			return true
		}
		if len(p.keys) < q.limit {
			c.addToPage(&p, r)
		} else {
			p.more = true
		}
		return true
	})
	return p
}

// addToPage adds r to p, with the ended list that names it. Called with
// mu held.
func (c *catalog) addToPage(p *page, r *row) {
	p.keys = append(p.keys, r.key)
	if key := c.rows.ListKey(r.List); key != "" {
		if p.lists == nil {
			p.lists = map[string]string{}
		}
		p.lists[r.key] = key
	}
}

// summary counts the catalogue's schedules by state.
func (c *catalog) summary() admin.Summary {
	c.mu.RLock()
	defer c.mu.RUnlock()
	s := admin.Summary{Schedules: c.schedules.Len(), Timers: c.timers.Len()}
	c.schedules.ascend("", "", func(r *row) bool {
		switch r.State() {
		case admin.StateActive:
			s.Active++
		case admin.StatePaused:
			s.Paused++
		case admin.StateEnded:
			s.Ended++
		case admin.StateInvalid:
			s.Invalid++
		case admin.StatePlanned:
			s.Planned++
		}
		return true
	})
	return s
}
