package memlimit

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"
)

func TestPercentFor(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		live, headroom int64
		max, want      int
	}{
		{live: 60 * mib, headroom: 512 * mib, max: 200, want: 200},   // small: GOGC as set
		{live: 256 * mib, headroom: 512 * mib, max: 200, want: 200},  // the edge
		{live: 512 * mib, headroom: 512 * mib, max: 200, want: 100},  // goal live + 512 MiB
		{live: 1400 * mib, headroom: 512 * mib, max: 200, want: 36},  // a million schedules
		{live: 8000 * mib, headroom: 512 * mib, max: 200, want: 25},  // never below 25
		{live: 1400 * mib, headroom: 0, max: 200, want: 200},         // off
		{live: 1400 * mib, headroom: 512 * mib, max: 20, want: 20},   // a GOGC below the floor is kept
		{live: 0, headroom: 512 * mib, max: 200, want: 200},          // nothing measured yet
		{live: 300 * mib, headroom: 512 * mib, max: 100, want: 100},  // GOGC 100: the edge is 512 MiB
		{live: 2048 * mib, headroom: 1024 * mib, max: 100, want: 50}, // a larger headroom
	}
	for _, tt := range tests {
		if got := PercentFor(tt.live, tt.headroom, tt.max); got != tt.want {
			t.Errorf("PercentFor(%d MiB, %d MiB, %d) = %d, want %d", tt.live/mib, tt.headroom/mib, tt.max, got, tt.want)
		}
	}
}

// TestHeadroomRun: with a headroom far below the live heap, Run lowers
// GOGC after a collection, and puts the configured one back when it ends.
func TestHeadroomRun(t *testing.T) {
	live := make([][]byte, 64)
	for i := range live {
		live[i] = make([]byte, 1<<20) // 64 MiB live while the test runs
	}
	var mu sync.Mutex
	var set []int
	changed := make(chan struct{}, 16)
	h := Headroom{Max: 200, Headroom: 1 << 20, Every: 5 * time.Millisecond,
		set: func(p int) int {
			mu.Lock()
			set = append(set, p)
			mu.Unlock()
			changed <- struct{}{}
			return 0
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	runtime.GC()
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("GOGC not changed within 10 s of a collection with 64 MiB live and 1 MiB of headroom")
	}
	cancel()
	<-done
	runtime.KeepAlive(live)
	mu.Lock()
	defer mu.Unlock()
	if len(set) < 2 || set[0] != minPercent || set[len(set)-1] != 200 {
		t.Fatalf("GOGC set to %v, want %d after the collection and 200 back at the end", set, minPercent)
	}
}

func TestParseHeadroom(t *testing.T) {
	for in, want := range map[string]int64{"512MiB": 512 << 20, "1GiB": 1 << 30, "off": 0, "0": 0, " None ": 0, "": 0} {
		if got, err := ParseHeadroom(in); err != nil || got != want {
			t.Errorf("ParseHeadroom(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"lots", "1MiB", "-1GiB"} {
		if _, err := ParseHeadroom(bad); err == nil {
			t.Errorf("ParseHeadroom(%q): no error", bad)
		}
	}
}

// The flag's default reads as the constant.
func TestDefaultHeadroomFlag(t *testing.T) {
	if n, err := ParseHeadroom(DefaultHeadroomFlag); err != nil || n != DefaultHeadroom {
		t.Fatalf("ParseHeadroom(%q) = %d, %v; want %d", DefaultHeadroomFlag, n, err, DefaultHeadroom)
	}
}
