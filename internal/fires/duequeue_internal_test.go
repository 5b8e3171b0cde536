package fires

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// The due queue gives what a plain map of due times gives: the earliest
// entry (ties by id), each entry's due time, its length, over random
// sets, moves and removals.
func TestDueQueueMatchesModel(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 26))
	base := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	ens := make([]*entry, 40)
	for i := range ens {
		ens[i] = &entry{id: fmt.Sprintf("s%02d", i)}
	}
	var q dueQueue
	model := map[*entry]time.Time{}
	for step := range 20000 {
		en := ens[r.IntN(len(ens))]
		switch r.IntN(4) {
		case 0, 1:
			due := base.Add(time.Duration(r.IntN(20)) * time.Second) // ties on purpose
			q.Set(en, due)
			model[en] = due
		case 2:
			q.Remove(en)
			delete(model, en)
		case 3: // pop the earliest, as dispatch does
			if top, _, ok := q.Peek(); ok {
				q.Remove(top)
				delete(model, top)
			}
		}
		if q.Len() != len(model) {
			t.Fatalf("step %d: %d queued, want %d", step, q.Len(), len(model))
		}
		var want *entry
		for e, d := range model {
			if want == nil || d.Before(model[want]) || d.Equal(model[want]) && e.id < want.id {
				want = e
			}
		}
		got, due, ok := q.Peek()
		if ok != (want != nil) || ok && (got != want || !due.Equal(model[want])) {
			t.Fatalf("step %d: peek %v %v %v, want %v", step, got, due, ok, want)
		}
		for _, e := range ens {
			d, in := q.Due(e)
			if md, min := model[e]; in != min || in && !d.Equal(md) {
				t.Fatalf("step %d: %s due %v %v, want %v %v", step, e.id, d, in, md, min)
			}
		}
	}
}

// A due time past what Unix nanoseconds hold is kept as the latest one,
// after every other.
func TestDueQueueFarFuture(t *testing.T) {
	var q dueQueue
	far, soon := &entry{id: "far"}, &entry{id: "soon"}
	q.Set(far, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))
	q.Set(soon, time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	if top, _, _ := q.Peek(); top != soon {
		t.Fatalf("peek %s, want soon", top.id)
	}
	q.Remove(soon)
	if top, due, _ := q.Peek(); top != far || due.Year() < 2262 {
		t.Fatalf("peek %s at %v, want far, after 2262", top.id, due)
	}
}
