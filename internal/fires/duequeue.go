package fires

import (
	"math"
	"time"
)

// dueQueue is the loop's due index: the entries that need attention at a
// time, earliest first (ties by id). It is intrusive: each entry holds
// its due time and its place in the heap, so that indexing a schedule
// costs the heap's pointer and nothing else (a map entry and an item,
// ~90 bytes a schedule, in the id-keyed dueindex.Index). An entry is in
// at most one dueQueue, and leaves it before the loop forgets it.
type dueQueue struct {
	h []*entry
}

// Len is the number of entries in the queue.
func (q *dueQueue) Len() int { return len(q.h) }

// Set puts en in the queue at due, or moves it there.
func (q *dueQueue) Set(en *entry, due time.Time) {
	en.due = dueNanos(due)
	if en.pos > 0 {
		i := int(en.pos - 1)
		if !q.up(i) {
			q.down(i)
		}
		return
	}
	q.h = append(q.h, en)
	en.pos = int32(len(q.h))
	q.up(len(q.h) - 1)
}

// Remove takes en out of the queue, if it is in.
func (q *dueQueue) Remove(en *entry) {
	if en.pos == 0 {
		return
	}
	i, last := int(en.pos-1), len(q.h)-1
	if i != last {
		q.swap(i, last)
	}
	q.h[last] = nil
	q.h = q.h[:last]
	en.pos = 0
	if i != last && !q.up(i) {
		q.down(i)
	}
}

// Due is when en is due, if it is in the queue.
func (q *dueQueue) Due(en *entry) (time.Time, bool) {
	if en.pos == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, en.due).UTC(), true
}

// Peek is the earliest entry and when it is due, if any.
func (q *dueQueue) Peek() (*entry, time.Time, bool) {
	if len(q.h) == 0 {
		return nil, time.Time{}, false
	}
	en := q.h[0]
	return en, time.Unix(0, en.due).UTC(), true
}

// dueNanos is t in Unix ns, clamped to what an int64 holds (years
// 1678-2262): a due time past that range is as good as never.
func dueNanos(t time.Time) int64 {
	switch {
	case t.After(maxDue):
		return math.MaxInt64
	case t.Before(minDue):
		return math.MinInt64
	}
	return t.UnixNano()
}

var (
	maxDue = time.Unix(0, math.MaxInt64)
	minDue = time.Unix(0, math.MinInt64)
)

func (q *dueQueue) less(i, j int) bool {
	a, b := q.h[i], q.h[j]
	if a.due != b.due {
		return a.due < b.due
	}
	return a.id < b.id
}

func (q *dueQueue) swap(i, j int) {
	q.h[i], q.h[j] = q.h[j], q.h[i]
	q.h[i].pos, q.h[j].pos = int32(i+1), int32(j+1)
}

// up moves element i towards the root; it reports whether it moved.
func (q *dueQueue) up(i int) bool {
	moved := false
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.swap(i, p)
		i, moved = p, true
	}
	return moved
}

// down moves element i towards the leaves.
func (q *dueQueue) down(i int) {
	n := len(q.h)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if r := c + 1; r < n && q.less(r, c) {
			c = r
		}
		if !q.less(c, i) {
			return
		}
		q.swap(i, c)
		i = c
	}
}
