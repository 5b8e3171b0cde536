package adminapi

import (
	"testing"

	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/pkg/admin"
)

// The catalogue remembers which ended list last named each schedule, in
// whatever order its watches deliver the spec, the state record and the
// list, and forgets a list once it is deleted: a page names, for each of
// its schedules, the one list to read (or none).
func TestCatalogRemembersEachSchedulesList(t *testing.T) {
	c := newCatalog(nil, nil)
	const at = int64(1_800_000_000e9)
	lock := func(f func()) {
		c.mu.Lock()
		defer c.mu.Unlock()
		f()
	}
	pageLists := func(q query) map[string]string {
		q.limit = 10
		return c.find(false, q).lists
	}
	lock(func() {
		// a: spec first, then its list. b: list first (an orphan), then a
		// state record that is deleted again, then its spec. c: no list.
		c.applySpec("a", false, "wf", 0, at)
		l1 := c.addList("ended.1.t1")
		c.applyListed("a", l1, at)
		l2 := c.addList("ended.2.t2")
		c.applyListed("b", l2, at)
		c.applyState("b", false, readmodel.FlagState)
		c.applyState("b", true, 0)
		c.applySpec("b", false, "wf", 0, at)
		c.applySpec("c", false, "wf", 0, at)
		c.applySpec("a", false, "wf", readmodel.FlagInvalid, at) // an edit keeps the list
	})
	got := pageLists(query{})
	if len(got) != 2 || got["a"] != "ended.1.t1" || got["b"] != "ended.2.t2" {
		t.Fatalf("page lists %v, want a in ended.1.t1 and b in ended.2.t2", got)
	}
	if s := c.schedules.blocks[0][1].flags.State(); s != admin.StateEnded {
		t.Errorf("b, listed, its record deleted: %s, want ended", s)
	}
	if got := pageLists(query{state: admin.StateEnded}); len(got) != 1 || got["b"] != "ended.2.t2" {
		t.Errorf("ended page lists %v, want b's", got)
	}
	if c.listOf("a") != "ended.1.t1" || c.listOf("c") != "" || c.listOf("nope") != "" {
		t.Errorf("listOf: a %q c %q nope %q", c.listOf("a"), c.listOf("c"), c.listOf("nope"))
	}
	// b's spec moved to another time: planned anew, no longer ended (its
	// list is still the one to read); moved back, ended again.
	for _, tc := range []struct {
		at   int64
		want string
	}{{at + 1e9, admin.StatePlanned}, {at, admin.StateEnded}} {
		lock(func() { c.applySpec("b", false, "wf", 0, tc.at) })
		if got := c.find(false, query{state: admin.StateEnded, limit: 10}).total; c.schedules.blocks[0][1].flags.State() != tc.want || got != btoi(tc.want == admin.StateEnded) {
			t.Errorf("b at %d: %s (%d ended), want %s", tc.at, c.schedules.blocks[0][1].flags.State(), got, tc.want)
		}
	}
	lock(func() {
		c.applyListed("a", c.addList("ended.1.t3"), at) // a later list names a again
		c.dropList("ended.2.t2")
		c.dropList("ended.9.never")
	})
	if got := pageLists(query{}); len(got) != 1 || got["a"] != "ended.1.t3" {
		t.Errorf("after a later list and a delete: %v, want a in ended.1.t3 alone", got)
	}
	c.reset()
	if len(c.lists) != 0 || len(c.listNum) != 0 || c.listOf("a") != "" {
		t.Errorf("a reload keeps %d lists", len(c.lists))
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
