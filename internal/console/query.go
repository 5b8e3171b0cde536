package console

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/labels"
	"github.com/jetsched/jetsched/internal/readmodel"
)

// listQuery selects a page of the schedule list.
type listQuery struct {
	Workflow string // exact workflow name; "" all
	State    string // one of admin.States; "" all
	Text     string // a substring of the id, workflow or recurrence; "" all
	Selector string // a label selector as given; "" all
	After    cursor // the page starts after this row
	Limit    int
	sel      labels.Selector // Selector parsed
}

// cursor is a position in the list's order: (next fire, id).
type cursor struct {
	key int64
	id  string
}

func (c cursor) String() string {
	if c.id == "" {
		return ""
	}
	return strconv.FormatInt(c.key, 10) + "~" + c.id
}

// parseCursor reads a cursor from a page link.
func parseCursor(s string) (cursor, error) {
	if s == "" {
		return cursor{}, nil
	}
	k, id, ok := strings.Cut(s, "~")
	n, err := strconv.ParseInt(k, 10, 64)
	if !ok || err != nil || id == "" {
		return cursor{}, fmt.Errorf("after %q: not a cursor from a page link", s)
	}
	return cursor{key: n, id: id}, nil
}

// less orders rows by (next fire, id).
func less(ak int64, aid string, bk int64, bid string) bool {
	if ak != bk {
		return ak < bk
	}
	return aid < bid
}

// listRow is a row as a page receives it (a copy, outside the lock).
type listRow struct {
	ID, Workflow, Recurrence, State string
	Next                            time.Time // zero when none
	key                             int64
}

// listResult is one page of the list.
type listResult struct {
	Rows   []listRow
	Total  int    // rows matching the filters, on every page
	Next   string // the next page's cursor; "" on the last
	Counts map[string]int
	// Workflows are the workflow names of the whole index (the filter's
	// choices), at most maxWorkflows of them, sorted.
	Workflows []string
	Loaded    bool
}

const maxWorkflows = 500

// list returns a page of rows matching q, in next-fire order: one pass
// over the index keeping the page's rows in a bounded heap, so a page
// costs O(n log limit) whichever page it is, with no sorted structure to
// keep up on every fire.
func (ix *index) list(q listQuery) listResult {
	text := strings.ToLower(q.Text)
	h := &rowHeap{}
	res := listResult{Counts: map[string]int{}}
	wf := map[string]struct{}{}
	ix.mu.RLock()
	res.Loaded = ix.loaded
	labelled := ix.labelSets.Matcher(q.sel)
	for _, r := range ix.rows {
		st := r.State()
		res.Counts[st]++
		if len(wf) < maxWorkflows {
			wf[r.workflow] = struct{}{}
		}
		if q.Workflow != "" && r.workflow != q.Workflow || q.State != "" && st != q.State || !labelled(r.labels) {
			continue
		}
		if text != "" && !containsFold(r.id, text) && !containsFold(r.workflow, text) && !containsFold(r.recur, text) {
			continue
		}
		res.Total++
		k := r.sortKey()
		if q.After.id != "" && !less(q.After.key, q.After.id, k, r.id) {
			continue
		}
		if h.Len() < q.Limit+1 {
			heap.Push(h, r)
		} else if top := (*h)[0]; less(k, r.id, top.sortKey(), top.id) {
			(*h)[0] = r
			heap.Fix(h, 0)
		}
	}
	page := make([]listRow, h.Len())
	for i := len(page) - 1; i >= 0; i-- {
		r := heap.Pop(h).(*row)
		page[i] = listRow{ID: r.id, Workflow: r.workflow, Recurrence: r.recur, State: r.State(), key: r.sortKey()}
		if next := r.NextAt(); next != 0 {
			page[i].Next = time.Unix(0, next)
		}
	}
	ix.mu.RUnlock()
	if len(page) > q.Limit {
		page = page[:q.Limit]
		last := page[len(page)-1]
		res.Next = cursor{key: last.key, id: last.ID}.String()
	}
	res.Rows = page
	for w := range wf {
		res.Workflows = append(res.Workflows, w)
	}
	slices.Sort(res.Workflows)
	return res
}

// containsFold reports whether s contains the lower-case lower, ignoring
// ASCII case (ids and workflow names are ASCII).
func containsFold(s, lower string) bool {
	if len(lower) > len(s) {
		return false
	}
	for i := 0; i+len(lower) <= len(s); i++ {
		j := 0
		for ; j < len(lower); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != lower[j] {
				break
			}
		}
		if j == len(lower) {
			return true
		}
	}
	return false
}

// rowHeap is a max-heap by (next, id): its top is the last row of the
// page being collected.
type rowHeap []*row

func (h rowHeap) Len() int { return len(h) }
func (h rowHeap) Less(i, j int) bool {
	return less(h[j].sortKey(), h[j].id, h[i].sortKey(), h[i].id)
}
func (h rowHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *rowHeap) Push(x any)   { *h = append(*h, x.(*row)) }
func (h *rowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// overdueRow is a schedule whose next slot is late beyond the tolerance.
type overdueRow struct {
	ID, Workflow string
	Next         time.Time
	Late         time.Duration
}

// overdue lists the schedules whose next slot is more than tolerance in
// the past and that are neither paused nor ended: the rule of the
// scheduler's jetsched_schedule_overdue_seconds (fires.Engine.Overdue),
// applied to every schedule instead of one instance's shards. At most
// limit rows, latest first, and the count of all.
func (ix *index) overdue(now time.Time, tolerance time.Duration, limit int) ([]overdueRow, int) {
	var out []overdueRow
	n := 0
	ix.mu.RLock()
	for _, r := range ix.rows {
		if r.NextAt() == 0 || r.Flags&(readmodel.FlagInvalid|readmodel.FlagPaused|readmodel.FlagEnded) != 0 {
			continue
		}
		next := time.Unix(0, r.NextAt())
		if late := now.Sub(next); late > tolerance {
			n++
			out = append(out, overdueRow{ID: r.id, Workflow: r.workflow, Next: next, Late: late})
		}
	}
	ix.mu.RUnlock()
	slices.SortFunc(out, func(a, b overdueRow) int { return cmp.Or(cmp.Compare(b.Late, a.Late), strings.Compare(a.ID, b.ID)) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, n
}

// fleetView is the fleet as the leases bucket shows it.
type fleetView struct {
	Members []memberView
	Shards  []shardView
	Total   int // the shard count
}

type memberView struct {
	Instance string
	Renewed  time.Time
	TTL      string
	Expired  bool
	Shards   int
}

type shardView struct {
	Shard   int
	Owner   string
	Renewed time.Time
	Expired bool
}

// fleet lists the members and every shard with its owner.
func (ix *index) fleet(now time.Time) fleetView {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	v := fleetView{Total: ix.shards}
	held := map[string]int{}
	for n := range ix.shards {
		s := shardView{Shard: n}
		if l, ok := ix.shardOf[n]; ok {
			s.Owner, s.Renewed, s.Expired = l.Owner, l.Renewed, l.expired(now)
			if !s.Expired {
				held[l.Owner]++
			}
		}
		v.Shards = append(v.Shards, s)
	}
	for inst, l := range ix.members {
		v.Members = append(v.Members, memberView{Instance: inst, Renewed: l.Renewed, TTL: l.TTL, Expired: l.expired(now), Shards: held[inst]})
		delete(held, inst)
	}
	// Owners with no member record (an older scheduler) still show.
	for inst, n := range held {
		v.Members = append(v.Members, memberView{Instance: inst, Shards: n})
	}
	slices.SortFunc(v.Members, func(a, b memberView) int { return strings.Compare(a.Instance, b.Instance) })
	return v
}

// validState checks a state filter.
func validState(s string) bool { return s == "" || slices.Contains(admin.States, s) }
