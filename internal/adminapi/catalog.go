package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/pkg/admin"
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
// timer key, with what listings filter on: the workflow and, for
// schedules, the state (invalid, paused, ended, planned, active). It
// follows the specs, state and wakeups buckets with KV watches, so a page
// starts at its cursor with a binary search, and a count is a walk over
// small rows instead of a read of every value. Rows cost about 81 bytes
// per schedule or timer (docs/operations.md).
type catalog struct {
	store *jsstore.Store
	log   *slog.Logger

	mu        sync.RWMutex
	schedules sortedIndex
	timers    sortedIndex
	workflows interner
	// orphans holds the state flags (and list) of ids whose spec has not
	// been seen (the state or lists watch ran ahead, or a state record
	// outlived its spec).
	orphans map[string]orphan
	// lists are the keys of the ended lists seen, by the number a row's
	// list field holds (less one); "" for a list deleted since. listNum
	// numbers each key. Numbers are not reused until a reload: a list is
	// written per window of up to 512 one-shots.
	lists   []string
	listNum map[string]uint32
	applied [watches]uint64 // the last revision each watch applied
	// check is used by the watch goroutine only.
	check validator
	// after holds the load back until it is closed (nil: load at once);
	// begun tells listings whether the load began.
	after   <-chan struct{}
	begun   bool
	loaded  [watches]bool
	ready   chan struct{} // closed once every watch delivered its backlog
	waiters []waiter

	readmodel.Runner
}

// waiter is a listing waiting for watch w to apply revision rev.
type waiter struct {
	w   int
	rev uint64
	ch  chan struct{}
}

func newCatalog(store *jsstore.Store, log *slog.Logger) *catalog {
	return &catalog{store: store, log: log, orphans: map[string]orphan{}, listNum: map[string]uint32{}, ready: make(chan struct{})}
}

// start runs the watches until stop, which is Runner.Stop.
func (c *catalog) start(ctx context.Context) {
	c.Run(context.WithoutCancel(ctx), rewatchDelay, c.follow, func(err error) {
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

// follow loads the catalogue and keeps it current until a watch fails or
// ctx ends.
func (c *catalog) follow(ctx context.Context) error {
	if err := c.begin(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var floor [watches]uint64
	var ws [watches]jetstream.KeyWatcher
	for w := range watches {
		// Every revision up to floor is delivered by the time the watch
		// reports its backlog done.
		rev, err := c.store.LastRevision(ctx, watchBuckets[w])
		if err != nil {
			return err
		}
		floor[w] = rev
		var kw jetstream.KeyWatcher
		switch w {
		case watchSpecs:
			kw, err = c.store.WatchSpecs(ctx)
		case watchState:
			kw, err = c.store.WatchState(ctx)
		case watchLists:
			kw, err = c.store.WatchEnded(ctx)
		default:
			kw, err = c.store.WatchTimers(ctx)
		}
		if err != nil {
			return fmt.Errorf("admin: watch for listings: %w", err)
		}
		defer func() { _ = kw.Stop() }()
		ws[w] = kw
	}
	c.reset()
	for {
		var (
			e  jetstream.KeyValueEntry
			ok bool
			w  int
		)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok = <-ws[watchSpecs].Updates():
			w = watchSpecs
		case e, ok = <-ws[watchState].Updates():
			w = watchState
		case e, ok = <-ws[watchTimers].Updates():
			w = watchTimers
		case e, ok = <-ws[watchLists].Updates():
			w = watchLists
		}
		if !ok {
			return errors.New("admin: a listing watch closed")
		}
		c.apply(w, e, floor[w])
	}
}

// reset empties the catalogue for a (re)load.
func (c *catalog) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.schedules, c.timers = sortedIndex{}, sortedIndex{}
	c.orphans = map[string]orphan{}
	c.lists, c.listNum = nil, map[string]uint32{}
	c.applied, c.loaded = [watches]uint64{}, [watches]bool{}
	select {
	case <-c.ready:
		c.ready = make(chan struct{})
	default:
	}
}

// apply folds one watched entry (nil: the backlog is done) into the
// catalogue. Values are decoded before the lock is taken.
func (c *catalog) apply(w int, e jetstream.KeyValueEntry, floor uint64) {
	if e == nil {
		c.mu.Lock()
		c.loaded[w] = true
		c.applied[w] = max(c.applied[w], floor)
		if c.loaded == [watches]bool{true, true, true, true} {
			select {
			case <-c.ready:
			default:
				close(c.ready)
			}
		}
		c.wake()
		c.mu.Unlock()
		return
	}
	del := e.Operation() == jetstream.KeyValueDelete || e.Operation() == jetstream.KeyValuePurge
	// A copy: the key is a substring of the message's subject, which a
	// row would keep alive.
	key := strings.Clone(e.Key())
	switch w {
	case watchSpecs:
		var group string
		var invalid readmodel.Flags
		var at int64
		if !del {
			spec, err := kvstore.DecodeSpec(e.Value())
			if err != nil || c.check.invalid(key, spec) {
				invalid = readmodel.FlagInvalid
			}
			group = spec.Workflow
			if spec.At != nil {
				at = spec.At.UnixNano()
			}
		}
		c.mu.Lock()
		c.applySpec(key, del, group, invalid, at)
	case watchState:
		var flags readmodel.Flags
		if !del {
			flags = readmodel.RecordFlags(e.Value())
		}
		c.mu.Lock()
		c.applyState(key, del, flags)
	case watchLists:
		// A list is deleted only once it stands for nothing: its
		// schedules have records (which the state flags then say) or
		// are removed. So a delete changes no row.
		var slots []jsstore.EndedSlot
		if l, err := jsstore.DecodeEnded(e.Value()); !del && err == nil {
			slots = l.Slots
		}
		c.mu.Lock()
		if del {
			c.dropList(key)
		} else if len(slots) > 0 {
			list := c.addList(key)
			for _, s := range slots {
				c.applyListed(strings.Clone(s.Schedule), list, s.Slot.UnixNano())
			}
		}
	default:
		var t struct {
			Workflow string `json:"workflow"`
		}
		if !del {
			_ = json.Unmarshal(e.Value(), &t)
		}
		c.mu.Lock()
		if del {
			c.timers.remove(key)
		} else {
			c.timers.put(row{key: key, group: c.workflows.id(t.Workflow)})
		}
	}
	c.applied[w] = max(c.applied[w], e.Revision())
	c.wake()
	c.mu.Unlock()
}

// applySpec adds, changes or removes a schedule row; at is a one-shot's
// time (unix nanoseconds; 0 for others): a list stands for the one-shot
// only while it names that time (a spec moved to another time is planned
// anew). Called with mu held.
func (c *catalog) applySpec(id string, del bool, workflow string, invalid readmodel.Flags, at int64) {
	if del {
		c.schedules.remove(id)
		return
	}
	r := row{key: id, group: c.workflows.id(workflow)}
	if old, ok := c.schedules.get(id); ok {
		r.flags, r.list, r.listed = old.flags&^readmodel.FlagInvalid, old.list, old.listed
	} else if o, ok := c.orphans[id]; ok {
		r.flags, r.list, r.listed = o.flags, o.list, o.listed
		delete(c.orphans, id)
	}
	if r.listed != 0 {
		r.flags &^= readmodel.FlagListed
		if at == r.listed {
			r.flags |= readmodel.FlagListed
		}
	}
	r.flags |= invalid
	c.schedules.put(r)
}

// applyState sets or clears a schedule's state flags. Called with mu
// held.
func (c *catalog) applyState(id string, del bool, flags readmodel.Flags) {
	r, ok := c.schedules.get(id)
	switch {
	case ok:
		r.flags = r.flags&^readmodel.RecordBits | flags
	default:
		o := c.orphans[id]
		o.flags = o.flags&^readmodel.RecordBits | flags
		if o == (orphan{}) {
			delete(c.orphans, id)
		} else {
			c.orphans[id] = o
		}
	}
}

// orphan is what the catalogue knows of an id whose spec it has not seen.
type orphan struct {
	listed int64
	list   uint32
	flags  readmodel.Flags
}

// applyListed marks a schedule that ended list number list names at slot
// (its record's flags, if it has one, still decide its state); a reply
// looks it up in that list (listKey). A list is written after the fire of
// the one-shot's time, so it is taken to name that time until the spec
// says otherwise (applySpec). Called with mu held.
func (c *catalog) applyListed(id string, list uint32, slot int64) {
	if r, ok := c.schedules.get(id); ok {
		r.flags |= readmodel.FlagListed
		r.list, r.listed = list, slot
		return
	}
	o := c.orphans[id]
	o.flags |= readmodel.FlagListed
	o.list, o.listed = list, slot
	c.orphans[id] = o
}

// addList numbers the ended list key. Called with mu held.
func (c *catalog) addList(key string) uint32 {
	if n, ok := c.listNum[key]; ok {
		return n
	}
	c.lists = append(c.lists, key)
	n := uint32(len(c.lists))
	c.listNum[key] = n
	return n
}

// dropList forgets the ended list key, deleted: rows that name it have no
// list to look in (a reply reads their shard's lists). Called with mu
// held.
func (c *catalog) dropList(key string) {
	if n, ok := c.listNum[key]; ok {
		c.lists[n-1] = ""
		delete(c.listNum, key)
	}
}

// listOf is the key of the ended list the catalogue last saw name
// schedule id ("" for none, or before the catalogue loaded it).
func (c *catalog) listOf(id string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if r, ok := c.schedules.get(id); ok {
		return c.listKey(r.list)
	}
	return c.listKey(c.orphans[id].list)
}

// listKey is the key of ended list number n ("" for none). Called with mu
// held.
func (c *catalog) listKey(n uint32) string {
	if n == 0 || int(n) > len(c.lists) {
		return ""
	}
	return c.lists[n-1]
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
	match := func(r *row) bool {
		return (q.workflow == "" || r.group == group) && (q.state == "" || r.flags.State() == q.state)
	}
	var p page
	if q.prefix == "" && q.workflow == "" && q.state == "" {
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
	if key := c.listKey(r.list); key != "" {
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
		switch r.flags.State() {
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
