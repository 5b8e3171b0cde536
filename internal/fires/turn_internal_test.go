package fires

import (
	"testing"
	"time"
)

// TestQuantumEnd: the end of a slot's quantum is the first multiple of
// the quantum at or after the slot: never before it, and the slot itself
// when it is a multiple or when there is no quantum.
func TestQuantumEnd(t *testing.T) {
	base := time.Date(2026, 12, 7, 0, 30, 0, 0, time.UTC)
	q := 4 * time.Millisecond
	for _, c := range []struct {
		at   time.Time
		q    time.Duration
		want time.Time
	}{
		{base, q, base},
		{base.Add(time.Nanosecond), q, base.Add(q)},
		{base.Add(3 * time.Millisecond), q, base.Add(q)},
		{base.Add(q), q, base.Add(q)},
		{base.Add(q + time.Microsecond), q, base.Add(2 * q)},
		{base.Add(time.Microsecond), 0, base.Add(time.Microsecond)},
		{time.Unix(0, -1), q, time.Unix(0, 0)},
		{time.Unix(0, -5*int64(time.Millisecond)), q, time.Unix(0, -4*int64(time.Millisecond))},
	} {
		got := QuantumEnd(c.at, c.q)
		if !got.Equal(c.want) {
			t.Errorf("QuantumEnd(%v, %s) = %v, want %v", c.at, c.q, got, c.want)
		}
		if got.Before(c.at) {
			t.Errorf("QuantumEnd(%v, %s) = %v: before the slot", c.at, c.q, got)
		}
	}
}
