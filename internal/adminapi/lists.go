package adminapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/jetsched/jetsched/calendars"
	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/labels"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Page sizes and reply bounds of the listings.
const (
	// maxReplyBytes bounds the items of one reply (half the default max
	// payload, and at most half the connection's): a page whose items
	// would pass it ends early, with next_cursor at its last item.
	maxReplyBytes = 512 << 10
	// maxListedBytes is the largest input, payload or inline calendar a
	// listing item carries; larger ones are omitted from the item (get
	// returns them) and named in its "omitted" list.
	maxListedBytes = 1 << 10
	// maxItemBytes bounds one listing item; a record larger than this
	// even without its omitted fields (only a record written straight into
	// a bucket can be) is listed as a stub.
	maxItemBytes = 64 << 10
	// fetchers is how many records a page reads at once.
	fetchers = 16
)

// limitOf checks a request's limit and applies the default.
func limitOf(n int) (int, error) {
	switch {
	case n == 0:
		return admin.DefaultLimit, nil
	case n < 0 || n > admin.MaxLimit:
		return 0, &kvstore.FieldError{Field: "limit", Value: strconv.Itoa(n), Reason: fmt.Sprintf("must be 1 to %d", admin.MaxLimit)}
	}
	return n, nil
}

// scheduleQuery checks a ListRequest.
func scheduleQuery(r admin.ListRequest) (query, error) {
	q := query{prefix: r.Prefix, after: r.Cursor, workflow: r.Workflow, state: r.State}
	var err error
	if q.limit, err = limitOf(r.Limit); err != nil {
		return q, err
	}
	if r.Cursor != "" {
		if err := kvstore.ValidateID(r.Cursor); err != nil {
			return q, &kvstore.FieldError{Field: "cursor", Value: r.Cursor, Reason: "not a cursor from a previous page"}
		}
	}
	if r.Prefix != "" {
		if err := kvstore.ValidateID(r.Prefix); err != nil {
			return q, &kvstore.FieldError{Field: "prefix", Value: r.Prefix, Reason: "an id prefix has the characters of an id", Err: err}
		}
	}
	if r.Workflow != "" {
		if err := kvstore.ValidateWorkflow(r.Workflow); err != nil {
			return q, err
		}
	}
	if r.State != "" && !slices.Contains(admin.States, r.State) {
		return q, &kvstore.FieldError{Field: "state", Value: r.State, Reason: "want one of " + strings.Join(admin.States, ", ")}
	}
	q.sel, err = labels.Parse("selector", r.Selector)
	return q, err
}

// schedulePage decodes and checks a ListRequest, waits for the catalogue
// to catch up with the buckets of ws, finds the page and reads its
// schedules, with conv applied to each.
func schedulePage[T any](ctx context.Context, h handlers, body []byte, conv func(admin.ScheduleInfo) T, ws ...int) ([]keyed[T], page, error) {
	r, err := decode[admin.ListRequest](body)
	if err != nil {
		return nil, page{}, err
	}
	q, err := scheduleQuery(r)
	if err != nil {
		return nil, page{}, err
	}
	if err := h.cat.sync(ctx, ws...); err != nil {
		return nil, page{}, err
	}
	p := h.cat.find(false, q)
	lists := h.store.NewEndedReader() // each shard's ended lists read once for the page
	for id, key := range p.lists {
		lists.Hint(id, key) // only the list the catalogue saw name it
	}
	items := fetch(ctx, p.keys, func(ctx context.Context, id string) (T, bool) {
		e, err := h.store.GetSpec(ctx, id)
		if err != nil && e.ID == "" {
			var zero T
			return zero, false // removed since the page was cut
		}
		return conv(h.model.Info(ctx, lists, e, err)), true
	})
	return items, p, nil
}

func (h handlers) scheduleList(ctx context.Context, body []byte) (any, error) {
	infos, p, err := schedulePage(ctx, h, body, listed, watchSpecs, watchState)
	if err != nil {
		return nil, err
	}
	return cutPage(infos, p, h.replyBudget, func(v admin.ScheduleInfo) admin.ScheduleInfo {
		return admin.ScheduleInfo{ID: v.ID, Revision: v.Revision, Invalid: "record too large to list; get it by id", Omitted: []string{"spec", "state"}}
	})
}

// listed is a schedule as a listing shows it: large fields omitted.
func listed(v admin.ScheduleInfo) admin.ScheduleInfo {
	if len(v.Spec.Input) > maxListedBytes {
		v.Spec.Input, v.Omitted = nil, append(v.Omitted, "input")
	}
	if len(v.Spec.CalendarInline) > maxListedBytes {
		v.Spec.CalendarInline, v.Omitted = nil, append(v.Omitted, "calendar_inline")
	}
	return v
}

func (h handlers) status(ctx context.Context, body []byte) (any, error) {
	shards, err := h.store.Shards(ctx)
	if err != nil {
		return nil, err
	}
	owners := h.store.LeaseOwners(ctx)
	rows, p, err := schedulePage(ctx, h, body, func(v admin.ScheduleInfo) admin.StatusRow { return statusRow(v, shards, owners) },
		watchSpecs, watchState, watchTimers)
	if err != nil {
		return nil, err
	}
	sum := h.cat.summary()
	sum.Shards, sum.Instances = shards, map[string]int{}
	for _, o := range owners {
		sum.Instances[o]++
	}
	return cutPage(rows, p, h.replyBudget-summaryBudget, func(v admin.StatusRow) admin.StatusRow {
		return admin.StatusRow{ID: v.ID, Workflow: v.Workflow, Shard: v.Shard, Owner: v.Owner, Invalid: "record too large to list; get it by id"}
	}, "summary", sum)
}

// summaryBudget is what status keeps of the reply budget for its summary
// (one line per scheduler instance, at most one per shard).
const summaryBudget = 64 << 10

func (h handlers) scheduleHistory(ctx context.Context, body []byte) (any, error) {
	r, err := decodeID(body, func(r admin.HistoryRequest) string { return r.ID })
	if err != nil {
		return nil, err
	}
	limit, err := limitOf(r.Limit)
	if err != nil {
		return nil, err
	}
	order := func(x, y string) int { return compareSlots(x, y) }
	switch r.Order {
	case "", "newest":
		order = func(x, y string) int { return compareSlots(y, x) }
	case "oldest":
	default:
		return nil, &kvstore.FieldError{Field: "order", Value: r.Order, Reason: "want newest or oldest"}
	}
	prefix := r.ID + "."
	if r.Cursor != "" {
		if _, ok := slotMillis(strings.TrimPrefix(r.Cursor, prefix)); !ok || !strings.HasPrefix(r.Cursor, prefix) {
			return nil, &kvstore.FieldError{Field: "cursor", Value: r.Cursor, Reason: "not a cursor from a previous page of this schedule's history"}
		}
	}
	// The ledger: the schedule's entries in sched_ticks merged with its
	// fires in the stream (the stream is the ledger of dispatched slots).
	ledger, err := h.store.Ledger(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	keys := jsstore.KeyPage{}
	for k := range ledger {
		if _, ok := slotMillis(k[len(prefix):]); !ok || !strings.HasPrefix(k, prefix) {
			continue
		}
		keys.Total++
		if r.Cursor == "" || order(k, r.Cursor) > 0 {
			keys.Keys = append(keys.Keys, k)
		}
	}
	slices.SortFunc(keys.Keys, order)
	if len(keys.Keys) > limit {
		keys.Keys, keys.More = keys.Keys[:limit], true
	}
	items := fetch(ctx, keys.Keys, func(ctx context.Context, key string) (admin.HistoryItem, bool) {
		t := ledger[key]
		it := admin.HistoryItem{Tick: t}
		var cut bool
		if t.Outcome, cut = clip(t.Outcome); cut {
			it.Clipped = append(it.Clipped, "outcome")
		}
		if t.Reason, cut = clip(t.Reason); cut {
			it.Clipped = append(it.Clipped, "reason")
		}
		it.Tick = t
		return it, true
	})
	return cutPage(items, page{keys: keys.Keys, total: keys.Total, more: keys.More}, h.replyBudget, func(v admin.HistoryItem) admin.HistoryItem {
		return admin.HistoryItem{Tick: kvstore.Tick{Schedule: v.Schedule, Slot: v.Slot, SlotID: v.SlotID, Status: v.Status}, Clipped: []string{"record"}}
	})
}

// slotMillis reads the unix milliseconds of a slot id's last part: "<ms>"
// for a regular slot, "<kind>-<ms>" for an extra one.
func slotMillis(suffix string) (int64, bool) {
	if i := strings.LastIndexByte(suffix, '-'); i >= 0 {
		suffix = suffix[i+1:]
	}
	ms, err := strconv.ParseInt(suffix, 10, 64)
	return ms, err == nil
}

// compareSlots orders tick keys of one schedule by slot time, then key.
func compareSlots(x, y string) int {
	mx, _ := slotMillis(x[strings.IndexByte(x, '.')+1:])
	my, _ := slotMillis(y[strings.IndexByte(y, '.')+1:])
	return cmp.Or(cmp.Compare(mx, my), strings.Compare(x, y))
}

// clip cuts text longer than maxListedBytes.
func clip(s string) (string, bool) {
	if len(s) <= maxListedBytes {
		return s, false
	}
	return strings.ToValidUTF8(s[:maxListedBytes], "") + "…", true
}

func (h handlers) wakeupList(ctx context.Context, body []byte) (any, error) {
	r, err := decode[admin.WakeupListRequest](body)
	if err != nil {
		return nil, err
	}
	q := query{after: r.Cursor, workflow: r.Workflow}
	if q.limit, err = limitOf(r.Limit); err != nil {
		return nil, err
	}
	if r.Run != "" {
		if err := fieldcheck.TimerID("run", r.Run); err != nil {
			return nil, &kvstore.FieldError{Field: "run", Err: err}
		}
		q.prefix = kvstore.EscapeTimerID(r.Run) + "."
	}
	if r.Workflow != "" {
		if err := kvstore.ValidateWorkflow(r.Workflow); err != nil {
			return nil, err
		}
	}
	if q.sel, err = labels.Parse("selector", r.Selector); err != nil {
		return nil, err
	}
	if r.Cursor != "" && !timerKey(r.Cursor) {
		return nil, &kvstore.FieldError{Field: "cursor", Value: r.Cursor, Reason: "not a cursor from a previous page"}
	}
	if err := h.cat.sync(ctx, watchTimers); err != nil {
		return nil, err
	}
	p := h.cat.find(true, q)
	items := fetch(ctx, p.keys, func(ctx context.Context, key string) (admin.TimerItem, bool) {
		e, err := h.store.GetTimer(ctx, key)
		if err != nil && e.Revision == 0 {
			return admin.TimerItem{}, false // fired or cancelled since the page was cut
		}
		it := admin.TimerItem{Key: key, Timer: e.Timer}
		if err == nil {
			err = kvstore.ValidateTimer(key, e.Timer)
		}
		if err != nil {
			// Listed, not left out: a record nobody can see is one
			// nobody removes.
			it.Invalid = usererr.Message(err)
		}
		if len(it.Payload) > maxListedBytes {
			it.Payload, it.Omitted = nil, []string{"payload"}
		}
		return it, true
	})
	return cutPage(items, p, h.replyBudget, func(v admin.TimerItem) admin.TimerItem {
		return admin.TimerItem{Key: v.Key, Timer: kvstore.Timer{Run: v.Run, Step: v.Step, Workflow: v.Workflow, Due: v.Due}, Omitted: []string{"record"}, Invalid: v.Invalid}
	})
}

func (h handlers) calendarList(ctx context.Context, body []byte) (any, error) {
	r, err := decode[admin.CalendarListRequest](body)
	if err != nil {
		return nil, err
	}
	limit, err := limitOf(r.Limit)
	if err != nil {
		return nil, err
	}
	if r.Cursor != "" {
		if err := jsstore.CheckCalendarRef(r.Cursor); err != nil {
			return nil, &kvstore.FieldError{Field: "cursor", Value: r.Cursor, Reason: "not a cursor from a previous page"}
		}
	}
	keys, err := h.store.PageKeys(ctx, jsstore.BucketCalendars, ">", strings.Compare, r.Cursor, limit, nil)
	if err != nil {
		return nil, err
	}
	keys = withBuiltins(keys, r.Cursor, limit)
	rows := fetch(ctx, keys.Keys, func(ctx context.Context, name string) (admin.CalendarRow, bool) {
		e, err := h.store.GetCalendar(ctx, name)
		if errors.Is(err, kvstore.ErrNotFound) {
			return admin.CalendarRow{}, false
		}
		row := admin.CalendarRow{Name: name, Revision: e.Revision, Builtin: calendars.IsBuiltin(name)}
		if e.Calendar != nil {
			row.Zone = e.Calendar.Location().String()
		}
		if err != nil {
			row.Invalid, _ = clip(err.Error())
		}
		return row, true
	})
	return cutPage(rows, page{keys: keys.Keys, total: keys.Total, more: keys.More}, h.replyBudget, func(v admin.CalendarRow) admin.CalendarRow { return v })
}

// withBuiltins merges the shipped calendars (builtin:NAME, from the
// binary) into a page of the calendars bucket's keys, in name order: the
// page holds the first limit names after cursor of both. A stored key left
// off the stored page sorts after every key of that page, so after the
// merged page's last one: paging by the last name misses none.
func withBuiltins(stored jsstore.KeyPage, cursor string, limit int) jsstore.KeyPage {
	names := calendars.Names()
	out := jsstore.KeyPage{Total: stored.Total + len(names), More: stored.More}
	out.Keys = append(out.Keys, stored.Keys...)
	for _, n := range names {
		if n > cursor {
			out.Keys = append(out.Keys, n)
		}
	}
	slices.Sort(out.Keys)
	if len(out.Keys) > limit {
		out.Keys, out.More = out.Keys[:limit], true
	}
	return out
}

// keyed is a record read for a page, with its key.
type keyed[T any] struct {
	key string
	v   T
}

// fetch reads the records of keys, fetchers at a time, and returns those
// read (ok) in the order of keys.
func fetch[T any](ctx context.Context, keys []string, read func(context.Context, string) (T, bool)) []keyed[T] {
	out := make([]keyed[T], len(keys))
	ok := make([]bool, len(keys))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(fetchers, len(keys)) {
		wg.Go(func() {
			for i := range next {
				out[i].key = keys[i]
				out[i].v, ok[i] = read(ctx, keys[i])
			}
		})
	}
	for i := range keys {
		next <- i
	}
	close(next)
	wg.Wait()
	kept := out[:0]
	for i, v := range out {
		if ok[i] {
			kept = append(kept, v)
		}
	}
	return kept
}

// cutPage makes the reply of a page: its items up to budget bytes of
// JSON (a page cut short continues after its last item), an item above
// maxItemBytes replaced by stub(item), the total, and the next cursor.
// The reply is encoded here, once: each item is marshalled to measure it
// anyway. head, when set, is a member put before "items" (status's
// summary).
func cutPage[T any](items []keyed[T], p page, budget int, stub func(T) T, head ...any) (rawJSON, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	if len(head) == 2 {
		v, err := json.Marshal(head[1])
		if err != nil {
			return nil, fmt.Errorf("admin: encode a listing: %w", err)
		}
		fmt.Fprintf(&b, "%q:%s,", head[0], v)
	}
	b.WriteString(`"items":[`)
	used, next := 0, ""
	for i, it := range items {
		v, err := json.Marshal(it.v)
		if err != nil {
			return nil, fmt.Errorf("admin: encode a listing item: %w", err)
		}
		if len(v) > maxItemBytes {
			if v, err = json.Marshal(stub(it.v)); err != nil {
				return nil, fmt.Errorf("admin: encode a listing item: %w", err)
			}
		}
		if used+len(v) > budget && i > 0 {
			next = items[i-1].key
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		used += len(v) + 1
		b.Write(v)
	}
	if next == "" && p.more {
		next = p.keys[len(p.keys)-1]
	}
	fmt.Fprintf(&b, `],"total":%d`, p.total)
	if next != "" {
		c, _ := json.Marshal(next)
		fmt.Fprintf(&b, `,"next_cursor":%s`, c)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// rawJSON is a reply already encoded.
type rawJSON []byte

// timerKey reports whether s can be a timer's key: escaped run and step
// (letters, digits, '-', '_', '=') joined by a dot.
func timerKey(s string) bool {
	run, step, ok := strings.Cut(s, ".")
	if !ok || run == "" || step == "" || len(s) > 2*3*kvstore.MaxTimerIDLen+1 {
		return false
	}
	for _, c := range run + step {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '=') {
			return false
		}
	}
	return true
}
