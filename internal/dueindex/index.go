package dueindex

import (
	"container/heap"
	"time"
)

// Index is the due index: schedule ids ordered by the time they next need
// attention. One timer, set to Peek, serves every schedule. The zero value
// is an empty index. Not safe for concurrent use: the engine's loop owns it.
type Index struct {
	h   dueHeap
	pos map[string]*item
}

type item struct {
	id  string
	due time.Time
	i   int
}

// Len is the number of ids in the index.
func (x *Index) Len() int { return len(x.h) }

// Set puts id in the index at due, or moves it there.
func (x *Index) Set(id string, due time.Time) {
	if x.pos == nil {
		x.pos = make(map[string]*item)
	}
	if it, ok := x.pos[id]; ok {
		it.due = due
		heap.Fix(&x.h, it.i)
		return
	}
	it := &item{id: id, due: due}
	x.pos[id] = it
	heap.Push(&x.h, it)
}

// Remove takes id out of the index; removing an absent id is a no-op.
func (x *Index) Remove(id string) {
	it, ok := x.pos[id]
	if !ok {
		return
	}
	heap.Remove(&x.h, it.i)
	delete(x.pos, id)
}

// Due reports when id is due, and whether it is in the index.
func (x *Index) Due(id string) (time.Time, bool) {
	it, ok := x.pos[id]
	if !ok {
		return time.Time{}, false
	}
	return it.due, true
}

// Peek returns the earliest id and its due time; ok is false when empty.
func (x *Index) Peek() (id string, due time.Time, ok bool) {
	if len(x.h) == 0 {
		return "", time.Time{}, false
	}
	return x.h[0].id, x.h[0].due, true
}

// PopDue removes and returns the earliest id if it is due at or before now.
func (x *Index) PopDue(now time.Time) (string, bool) {
	if len(x.h) == 0 || x.h[0].due.After(now) {
		return "", false
	}
	it := heap.Pop(&x.h).(*item)
	delete(x.pos, it.id)
	return it.id, true
}

type dueHeap []*item

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	if h[i].due.Equal(h[j].due) {
		return h[i].id < h[j].id
	}
	return h[i].due.Before(h[j].due)
}
func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].i = i
	h[j].i = j
}
func (h *dueHeap) Push(x any) {
	it := x.(*item)
	it.i = len(*h)
	*h = append(*h, it)
}
func (h *dueHeap) Pop() any {
	old := *h
	n := len(old)
	it := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	return it
}
