package memlimit

import (
	"context"
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// DefaultHeadroom is how far past the live heap the collector lets a
// scheduler's heap grow unless --gc-headroom says otherwise (its flag
// default is DefaultHeadroomFlag). Below headroom / (GOGC/100) of live
// heap (128 MiB at GOGC 200, some 150,000 schedules) GOGC applies as set;
// above it the heap goal is the live heap plus this.
const DefaultHeadroom = 256 << 20

// DefaultHeadroomFlag is DefaultHeadroom as --gc-headroom writes it.
const DefaultHeadroomFlag = "256MiB"

// minPercent bounds how low Headroom takes GOGC: at 25 a collection comes
// after every quarter of the live heap allocated, so a very large heap is
// not marked over and over.
const minPercent = 25

// PercentFor is the GOGC that lets a heap of live bytes grow by at most
// headroom before the next collection, and by at most max percent (the
// configured GOGC), never below 25. headroom <= 0: max.
func PercentFor(live, headroom int64, max int) int {
	if headroom <= 0 || live <= 0 || max <= minPercent {
		return max
	}
	p := headroom * 100 / live
	switch {
	case p >= int64(max):
		return max
	case p < minPercent:
		return minPercent
	}
	return int(p)
}

// Headroom keeps GOGC at PercentFor of the live heap after each
// collection, so that GOGC's headroom (three times the live heap at 200)
// does not become gigabytes of RSS for a scheduler holding a million
// schedules, while a small one keeps the full GOGC (fewer collections,
// lower lateness).
type Headroom struct {
	// Max is the configured GOGC (the most Headroom sets). Headroom is
	// the most the heap may grow past the live heap (0: Run returns at
	// once, leaving GOGC alone).
	Max      int
	Headroom int64
	// Every is how often the collector's cycle count is read. Default 1s.
	Every time.Duration
	// Log receives a debug line at each change. Default: none.
	Log *slog.Logger

	set func(int) int // debug.SetGCPercent, or a test's
}

// Run adapts GOGC until ctx ends, then puts back Max.
func (h Headroom) Run(ctx context.Context) {
	if h.Headroom <= 0 || h.Max <= 0 {
		return
	}
	every := h.Every
	if every <= 0 {
		every = time.Second
	}
	samples := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/live:bytes"}}
	set := h.set
	if set == nil {
		set = debug.SetGCPercent
	}
	current, lastCycle := h.Max, uint64(0)
	defer func() {
		if current != h.Max {
			set(h.Max)
		}
	}()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		metrics.Read(samples)
		if samples[0].Value.Kind() == metrics.KindUint64 && samples[1].Value.Kind() == metrics.KindUint64 {
			if cycle := samples[0].Value.Uint64(); cycle != lastCycle {
				lastCycle = cycle
				live := int64(samples[1].Value.Uint64())
				if p := PercentFor(live, h.Headroom, h.Max); p != current && (p == h.Max || p == minPercent || abs(p-current)*20 >= current) {
					set(p)
					if h.Log != nil {
						h.Log.Debug("collector headroom", "live_heap_bytes", live, "gc_percent", p, "was", current)
					}
					current = p
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
