package fires

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"
)

// healthLoop is windowLoop's loop with n more schedules, all on time or,
// mixed, every 7th invalid, every 11th stalled, every 3rd two minutes late.
func healthLoop(t testing.TB, n int, mixed bool) *loop {
	t.Helper()
	l, _, a := windowLoop(t)
	now := l.e.cfg.Clock.Now()
	for i := range n {
		en := &entry{id: fmt.Sprintf("s%06d", i), compiled: a.compiled, target: a.target}
		next := now.Add(time.Hour)
		if mixed && i%3 == 0 {
			next = now.Add(-2 * time.Minute)
		}
		en.setPlan(packedState{next: next.UnixNano()})
		en.invalid = mixed && i%7 == 0
		if mixed && i%11 == 0 {
			en.failures = stallAfter
		}
		l.entries[en.id] = en
	}
	return l
}

// walkAll is the health of every entry at once, as the loop answered
// before it walked in slices.
func walkAll(l *loop, tolerance time.Duration) Health {
	h := Health{Shards: l.e.shards}
	for id, en := range l.entries {
		l.healthOf(&h, id, en, l.e.cfg.Clock.Now(), tolerance)
	}
	return h
}

func sameHealth(t *testing.T, what string, got, want Health) {
	t.Helper()
	byID := func(a, b Overdue) int { return cmp.Compare(a.ID, b.ID) }
	slices.SortFunc(got.Overdue, byID)
	slices.SortFunc(want.Overdue, byID)
	if got.Invalid != want.Invalid || got.Stalled != want.Stalled || got.Shards != want.Shards || !slices.Equal(got.Overdue, want.Overdue) {
		t.Fatalf("%s: invalid %d stalled %d overdue %d, want %d, %d and %d", what,
			got.Invalid, got.Stalled, len(got.Overdue), want.Invalid, want.Stalled, len(want.Overdue))
	}
}

// TestHealthIsWalkedInSlices: a health query over more entries than a
// slice is answered only once every slice is walked, with what a walk of
// all at once says; queries asked meanwhile wait for the next walk, which
// answers those of the same tolerance together.
func TestHealthIsWalkedInSlices(t *testing.T) {
	n := 2*healthChunk + 100
	l := healthLoop(t, n, true)
	wantMinute, wantZero := walkAll(l, time.Minute), walkAll(l, 0)
	if len(wantMinute.Overdue) == 0 || wantMinute.Invalid == 0 || wantMinute.Stalled == 0 {
		t.Fatalf("the fixture has nothing to report: %+v", wantMinute)
	}
	q1 := healthQuery{tolerance: time.Minute, reply: make(chan Health, 1)}
	l.askHealth(q1)
	l.scanHealth()
	if len(q1.reply) != 0 || l.health.scan == nil {
		t.Fatal("answered after one slice of three")
	}
	q2 := healthQuery{tolerance: 0, reply: make(chan Health, 1)}
	q3 := healthQuery{tolerance: time.Minute, reply: make(chan Health, 1)}
	q4 := healthQuery{tolerance: time.Minute, reply: make(chan Health, 1)}
	l.askHealth(q2)
	l.askHealth(q3)
	l.askHealth(q4)
	turns := 1
	for l.health.scan != nil {
		l.scanHealth()
		turns++
	}
	// q1's walk: 3 slices; q2's: 3; q3 and q4's together: 3.
	if turns != 9 || len(l.health.asked) != 0 {
		t.Fatalf("%d turns, %d queries left; want 9 turns and none", turns, len(l.health.asked))
	}
	sameHealth(t, "q1", <-q1.reply, wantMinute)
	sameHealth(t, "q2", <-q2.reply, wantZero)
	sameHealth(t, "q3", <-q3.reply, wantMinute)
	sameHealth(t, "q4", <-q4.reply, wantMinute)
}

// TestHealthWalkSeesChanges: entries removed and added while a walk goes
// on do not stop it; it ends, and an entry removed before the walk reached
// it is not reported. A
// walk dropped at the loop's stop leaves no goroutine (TestMain checks).
func TestHealthWalkSeesChanges(t *testing.T) {
	l := healthLoop(t, 3*healthChunk, true)
	q := healthQuery{tolerance: time.Minute, reply: make(chan Health, 1)}
	l.askHealth(q)
	l.scanHealth()
	seen := make(map[string]bool) // reported from the first slice, before the removals
	for _, o := range l.health.scan.h.Overdue {
		seen[o.ID] = true
	}
	for i := 0; i < 3*healthChunk; i += 3 { // every late one
		delete(l.entries, fmt.Sprintf("s%06d", i))
	}
	for i := range healthChunk {
		l.entries[fmt.Sprintf("new%06d", i)] = &entry{id: "new"}
	}
	for turns := 0; l.health.scan != nil; turns++ {
		if turns > 10 {
			t.Fatal("the walk does not end")
		}
		l.scanHealth()
	}
	for _, o := range (<-q.reply).Overdue {
		if _, ok := l.entries[o.ID]; !ok && !seen[o.ID] {
			t.Fatalf("%s reported overdue after it was removed", o.ID)
		}
	}
	l.askHealth(q)
	l.scanHealth()
	l.endScan()
	if l.health.scan != nil {
		t.Fatal("the walk is still under way after endScan")
	}
}

// BenchmarkHealthWalk is how long a health query holds the loop at a
// million schedules on time: the whole walk at once (as it was), and one
// slice of it (as it is now, per loop turn).
func BenchmarkHealthWalk(b *testing.B) {
	l := healthLoop(b, 1_000_000, false)
	b.Run("all-at-once", func(b *testing.B) {
		for b.Loop() {
			walkAll(l, time.Minute)
		}
	})
	b.Run("one-slice", func(b *testing.B) {
		q := healthQuery{tolerance: time.Minute, reply: make(chan Health, 1)}
		for b.Loop() {
			l.askHealth(q)
			l.scanHealth()
			l.endScan()
		}
	})
}
