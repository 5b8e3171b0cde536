package fires

import (
	"fmt"
	"testing"
	"time"
)

// TestCountDue: the entries due at a time, however the heap holds them,
// and none of those due later.
func TestCountDue(t *testing.T) {
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var q dueQueue
	for i := range 100 {
		// Interleaved so that due and not due sit in every subtree.
		q.Set(&entry{id: fmt.Sprint(i)}, base.Add(time.Duration((i*37)%100)*time.Second))
	}
	for _, tc := range []struct {
		at   time.Time
		want int
	}{{base.Add(-time.Second), 0}, {base, 1}, {base.Add(49 * time.Second), 50}, {base.Add(time.Hour), 100}} {
		if got := q.CountDue(tc.at); got != tc.want {
			t.Errorf("CountDue(%s) = %d, want %d", tc.at.Sub(base), got, tc.want)
		}
	}
}

// TestPendingSince: the schedules queued for a window count in the
// backlog, the oldest's lateness from its due time.
func TestPendingSince(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 10, 0, time.UTC)
	en := func(late time.Duration) pending {
		return pending{en: &entry{due: now.Add(-late).UnixNano()}}
	}
	b := batcher{pend: map[int][]pending{1: {en(time.Second), en(3 * time.Second)}, 7: {en(0)}, 9: nil}}
	if n, oldest := b.pendingSince(now); n != 3 || oldest != 3*time.Second {
		t.Errorf("pendingSince = %d, %s; want 3, 3s", n, oldest)
	}
	if n, oldest := (&batcher{}).pendingSince(now); n != 0 || oldest != 0 {
		t.Errorf("nothing pending: %d, %s", n, oldest)
	}
}
