package skew

import (
	"testing"
	"time"
)

func TestPlausible(t *testing.T) {
	t.Parallel()
	stored := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		claimed time.Time
		want    bool
	}{
		{stored, true},
		{stored.Add(30 * time.Second), true},
		{stored.Add(-30 * time.Second), true},
		{stored.Add(MaxPlausible), true},
		{stored.Add(-MaxPlausible), true},
		{stored.Add(MaxPlausible + time.Millisecond), false},
		{stored.Add(-MaxPlausible - time.Millisecond), false},
		{time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), false},
		{time.Time{}, false},
	} {
		if got := Plausible(tc.claimed, stored); got != tc.want {
			t.Errorf("Plausible(%v, %v) = %v, want %v", tc.claimed, stored, got, tc.want)
		}
	}
}

// TestServerClock: the server's time is its time of this process's write
// plus the time since the acknowledgement, never earlier than a floor,
// and an older write does not set it back. The process's clock is read
// at explicit instants (nowAt), so the test waits for nothing.
func TestServerClock(t *testing.T) {
	t.Parallel()
	var c ServerClock
	if got := c.Now(time.Time{}); !got.IsZero() {
		t.Fatalf("knowing nothing: %v, want zero", got)
	}
	// The server's clock is an hour behind this process's.
	acked := time.Now()
	server := acked.Add(-time.Hour).Round(0)
	floor := server.Add(-time.Minute)
	if got := c.Now(floor); !got.Equal(floor) {
		t.Fatalf("knowing nothing: %v, want the floor %v", got, floor)
	}
	c.Observe(server, acked)
	at := acked.Add(5 * time.Second) // keeps acked's monotonic reading
	want := server.Add(5 * time.Second)
	if got := c.nowAt(floor, at); !got.Equal(want) {
		t.Errorf("5 s after a write stored at %v: %v, want %v", server, got, want)
	}
	if later := want.Add(time.Second); !c.nowAt(later, at).Equal(later) {
		t.Errorf("with a later floor: %v, want the floor %v", c.nowAt(later, at), later)
	}
	// A write stored earlier (acknowledged at the same instant as at)
	// does not set it back.
	c.Observe(server.Add(time.Second), at)
	if got := c.nowAt(time.Time{}, at); !got.Equal(want) {
		t.Errorf("after an older observation: %v, want %v", got, want)
	}
	c.Observe(want.Add(2*time.Second), at)
	if got := c.nowAt(time.Time{}, at); !got.Equal(want.Add(2 * time.Second)) {
		t.Errorf("after a newer observation: %v, want %v", got, want.Add(2*time.Second))
	}
}
