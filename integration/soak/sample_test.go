package soak

// Resource samples of a scheduler process (RSS and open files from /proc,
// goroutines from its /metrics), and the "flat after warm-up" rule.

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// sample is one reading of a process.
type sample struct {
	at         time.Time
	age        time.Duration // since the generation started
	rssKiB     int64
	goroutines int
	fds        int
	// heapGoalKiB is go_memstats_next_gc_bytes: the heap size at which the
	// next collection starts, three times the heap live after the last
	// one at GOGC 200. It tells a live heap that grows from RSS's
	// saw-tooth.
	heapGoalKiB int64
}

// readSample reads pid's VmRSS and open file descriptors, and go_goroutines
// from the metrics endpoint on port.
func readSample(ctx context.Context, hc *http.Client, pid, port int) (sample, error) {
	s := sample{at: time.Now()}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest) // "123456 kB"
			if len(f) == 0 {
				return s, fmt.Errorf("pid %d: VmRSS line %q", pid, line)
			}
			if s.rssKiB, err = strconv.ParseInt(f[0], 10, 64); err != nil {
				return s, fmt.Errorf("pid %d: VmRSS %q: %w", pid, f[0], err)
			}
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return s, err
	}
	s.fds = len(fds)
	m, err := scrapeMetrics(ctx, hc, port, "go_goroutines", "go_memstats_next_gc_bytes")
	s.goroutines, s.heapGoalKiB = int(m[0]), int64(m[1])/1024
	return s, err
}

// scrapeMetrics reads the values of unlabelled metrics from
// http://127.0.0.1:port/metrics.
func scrapeMetrics(ctx context.Context, hc *http.Client, port int, names ...string) ([]float64, error) {
	vals := make([]float64, len(names))
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return vals, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return vals, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return vals, fmt.Errorf("%s: %s", url, resp.Status)
	}
	found := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		i := slices.Index(names, name)
		if !ok || i < 0 {
			continue
		}
		if vals[i], err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
			return vals, fmt.Errorf("%s: %s %q: %w", url, name, v, err)
		}
		found++
	}
	if err := sc.Err(); err != nil {
		return vals, fmt.Errorf("%s: %w", url, err)
	}
	if found < len(names) {
		return vals, fmt.Errorf("%s: %d of %v found", url, found, names)
	}
	return vals, nil
}

// flatRule is "flat after warm-up": a generation's level after its warm-up
// is read from its samples in [warm-up, warm-up+window); its level at the
// end from the last third of its life; the end may exceed the start by pct
// percent plus abs, for each of RSS, heap goal, goroutines and open files.
// Goroutines and open files are steady numbers: their level is the median
// (the stretches hold different numbers of samples, and a maximum grows
// with the count; a leak moves the median). RSS and the heap goal are not:
// with the scheduler's GOGC of 200 the heap grows to three times what is
// live before a collection, and the runtime hands freed pages back slowly,
// so RSS saw-tooths over minutes and a median lands anywhere on the tooth.
// Their level is a peak: the height the runtime settles at, which a leak
// raises. A stretch is cut into spans of window (the warm-up stretch is
// one) and its level is the median of the spans' peaks: the last third
// holds ten times the samples of the warm-up stretch, and its one highest
// sample, an outlier of the runtime's paging rather than a level, would
// otherwise be compared with the warm-up stretch's typical peak (the 1-hour
// soak of 4 December failed on one such sample: 114 MiB, the next highest
// of its 121 samples 104, its warm-up peak 89). A leak raises every span's
// peak, and so the median.
type flatRule struct {
	warmFirst, warmRestart, window time.Duration
	rss, heap, goroutines, fds     tolerance
}

// tolerance is how far a level may rise: pct percent plus abs.
type tolerance struct{ pct, abs float64 }

func (tl tolerance) limit(base float64) float64 { return base*(1+tl.pct/100) + tl.abs }

func (tl tolerance) String() string {
	switch {
	case tl.abs == 0:
		return fmt.Sprintf("+%g%%", tl.pct)
	case tl.pct == 0:
		return fmt.Sprintf("+%g", tl.abs)
	}
	return fmt.Sprintf("+%g%% +%g", tl.pct, tl.abs)
}

// levels of one stretch of samples.
type levels struct {
	n                   int
	rssKiB, heapGoalKiB float64 // median of the spans' peaks
	goroutines, fds     float64 // medians
}

func (l levels) String() string {
	return fmt.Sprintf("RSS peak %.1f MiB, heap goal peak %.1f MiB, median %.0f goroutines and %.0f fds (%d samples)",
		l.rssKiB/1024, l.heapGoalKiB/1024, l.goroutines, l.fds, l.n)
}

// median of v (sorted in place); 0 when empty.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// levelsOf reads the levels of a stretch of samples (by age, from from),
// peaks by span of span.
func levelsOf(ss []sample, from, span time.Duration) levels {
	each := func(f func(sample) float64) []float64 {
		v := make([]float64, len(ss))
		for i, s := range ss {
			v[i] = f(s)
		}
		return v
	}
	spanPeaks := func(f func(sample) float64) float64 {
		peaks := map[int64]float64{}
		for _, s := range ss {
			k := int64((s.age - from) / span)
			peaks[k] = max(peaks[k], f(s))
		}
		v := make([]float64, 0, len(peaks))
		for _, p := range peaks {
			v = append(v, p)
		}
		// Of an even count, the lower middle one: the last third of a
		// short life holds two spans, and one outlier would move their
		// mean halfway.
		slices.Sort(v)
		return v[(len(v)-1)/2]
	}
	return levels{n: len(ss),
		rssKiB:      spanPeaks(func(s sample) float64 { return float64(s.rssKiB) }),
		heapGoalKiB: spanPeaks(func(s sample) float64 { return float64(s.heapGoalKiB) }),
		goroutines:  median(each(func(s sample) float64 { return float64(s.goroutines) })),
		fds:         median(each(func(s sample) float64 { return float64(s.fds) }))}
}

// flatness is the verdict on one generation.
type flatness struct {
	judged      bool
	why         string // when not judged
	base, final levels
	failures    []string
}

// judge applies the rule to samples of a generation that lived life; the
// first generation of an instance warms up for warmFirst (it loads the
// schedules), a restarted one for warmRestart. A generation too short to
// have its last third after the window, or with fewer than 3 samples in
// either stretch, is not judged.
func (r flatRule) judge(samples []sample, life time.Duration, first bool) flatness {
	warm := r.warmRestart
	if first {
		warm = r.warmFirst
	}
	lastFrom := life - life/3
	if lastFrom < warm+r.window {
		return flatness{why: fmt.Sprintf("lived %s: its last third starts before warm-up %s + window %s ends",
			life.Round(time.Second), warm, r.window)}
	}
	var base, final []sample
	for _, s := range samples {
		if s.age >= warm && s.age < warm+r.window {
			base = append(base, s)
		}
		if s.age >= lastFrom {
			final = append(final, s)
		}
	}
	if len(base) < 3 || len(final) < 3 {
		return flatness{why: fmt.Sprintf("%d samples after warm-up, %d in the last third: fewer than 3", len(base), len(final))}
	}
	v := flatness{judged: true, base: levelsOf(base, warm, r.window), final: levelsOf(final, lastFrom, r.window)}
	check := func(what string, base, final float64, tol tolerance, unit string) {
		if final > tol.limit(base) {
			v.failures = append(v.failures, fmt.Sprintf("%s rose from %.1f%s after warm-up to %.1f%s in the last third (limit %s: %.1f%s)",
				what, base, unit, final, unit, tol, tol.limit(base), unit))
		}
	}
	check("RSS", v.base.rssKiB/1024, v.final.rssKiB/1024, r.rss, " MiB")
	check("heap goal", v.base.heapGoalKiB/1024, v.final.heapGoalKiB/1024, r.heap, " MiB")
	check("goroutines", v.base.goroutines, v.final.goroutines, r.goroutines, "")
	check("open files", v.base.fds, v.final.fds, r.fds, "")
	return v
}
