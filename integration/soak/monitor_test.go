package soak

// The monitor: one goroutine that, every second, reads the fires; every
// 10 s samples each scheduler process; and a few seconds after every
// minute prints a report line per instance (t.Logf and the CSV file).

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

const (
	sampleEvery = 10 * time.Second
	// reportDelay lets the fires of the minute's last moments reach the
	// checker before the minute is reported.
	reportDelay = 3 * time.Second
)

// monitor owns the checker while it runs.
type monitor struct {
	t       *testing.T
	fleet   *fleet
	check   *checker
	errs    *errorLog
	csv     io.Writer
	handled *atomic.Int64 // fires the worker acked
	hc      *http.Client

	nextSample, nextReport time.Time
	minute                 int
	lastHandled            int64
	syncErrs               int
}

const csvHeader = "minute,time_utc,instance,generation,pid,age_s,rss_kib,goroutines,open_fds,heap_goal_kib,fires_per_min,p99_lateness_ms\n"

func newMonitor(t *testing.T, f *fleet, c *checker, errs *errorLog, csv io.Writer, handled *atomic.Int64) *monitor {
	return &monitor{t: t, fleet: f, check: c, errs: errs, csv: csv, handled: handled,
		hc:         &http.Client{Timeout: 3 * time.Second},
		nextSample: c.origin, nextReport: c.origin.Add(time.Minute + reportDelay)}
}

// run works until ctx ends, then takes a last sample of every process and
// reports the minute under way.
func (m *monitor) run(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			m.sampleAll(context.Background())
			m.report(m.minute, true)
			return
		case <-tick.C:
		}
		if err := m.check.sync(ctx); err != nil && ctx.Err() == nil {
			m.syncErrs++ // retried at the next tick; only a lasting failure matters (settle reads all)
		}
		now := time.Now()
		if !now.Before(m.nextSample) {
			m.sampleAll(ctx)
			for !m.nextSample.After(now) {
				m.nextSample = m.nextSample.Add(sampleEvery)
			}
		}
		if !now.Before(m.nextReport) {
			m.report(m.minute, false)
			m.minute++
			m.nextReport = m.nextReport.Add(time.Minute)
		}
	}
}

// sampleAll samples every instance that is up, and notes one that is down
// without the restarter having stopped it.
func (m *monitor) sampleAll(ctx context.Context) {
	for _, in := range m.fleet.insts {
		g := in.current()
		if g == nil {
			continue
		}
		if !in.proc.Running() {
			if in.current() != nil { // not stopped by the restarter meanwhile
				m.errs.add("%s exited on its own: %s", g, in.proc.ExitStatus())
				in.mu.Lock()
				in.down = true
				g.ended, g.end = time.Now(), "exited"
				in.mu.Unlock()
			}
			continue
		}
		s, err := readSample(ctx, m.hc, g.pid, in.metricsPort)
		if err != nil {
			if in.current() == g && ctx.Err() == nil {
				m.errs.add("sample %s: %v", g, err)
			}
			continue
		}
		in.mu.Lock()
		s.age = s.at.Sub(g.started)
		g.samples = append(g.samples, s)
		in.mu.Unlock()
	}
}

// report prints minute's line per instance: the latest sample of its
// running generation, its fires in the minute and their p99 dispatch
// lateness; and a fleet line. partial marks the minute cut short by the
// end of the run.
func (m *monitor) report(minute int, partial bool) {
	byInst := m.check.minutes[minute]
	total, all := 0, []float64{}
	note := ""
	if partial {
		note = " (partial)"
	}
	for _, in := range m.fleet.insts {
		st := byInst[in.name]
		if st == nil {
			st = &minuteStat{}
		}
		slices.Sort(st.lateMs)
		total += st.fires
		all = append(all, st.lateMs...)
		gens := in.generations()
		g := gens[len(gens)-1]
		in.mu.Lock()
		var s sample
		if n := len(g.samples); n > 0 {
			s = g.samples[n-1]
		}
		in.mu.Unlock()
		p99 := percentile(st.lateMs, 99)
		if s.at.IsZero() {
			m.t.Logf("soak minute %d%s %s#%d pid %d: just restarted, not sampled yet; %d fires/min, p99 lateness %.1f ms",
				minute, note, in.name, g.n, g.pid, st.fires, p99)
			continue
		}
		m.t.Logf("soak minute %d%s %s#%d pid %d age %s: RSS %.1f MiB, %d goroutines, %d open fds, heap goal %.1f MiB, %d fires/min, p99 lateness %.1f ms",
			minute, note, in.name, g.n, g.pid, s.age.Round(time.Second), float64(s.rssKiB)/1024, s.goroutines, s.fds,
			float64(s.heapGoalKiB)/1024, st.fires, p99)
		fmt.Fprintf(m.csv, "%d,%s,%s,%d,%d,%.0f,%d,%d,%d,%d,%d,%.2f\n", minute, s.at.UTC().Format(time.RFC3339), in.name, g.n, g.pid,
			s.age.Seconds(), s.rssKiB, s.goroutines, s.fds, s.heapGoalKiB, st.fires, p99)
	}
	handled := m.handled.Load()
	slices.Sort(all)
	m.t.Logf("soak minute %d%s fleet: %d fires, worker acked %d, p99 lateness %.1f ms, max %.1f ms; %d fire messages read",
		minute, note, total, handled-m.lastHandled, percentile(all, 99), percentile(all, 100), m.check.msgs)
	m.lastHandled = handled
	delete(m.check.minutes, minute)
}

// createCSV opens the report file, with its header.
func createCSV(path string) (*os.File, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(csvHeader); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// writeSamples writes every sample of every generation (every 10 s) to
// path, for plotting a run.
func writeSamples(path string, fl *fleet) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	fmt.Fprintln(f, "time_utc,instance,generation,pid,age_s,rss_kib,goroutines,open_fds,heap_goal_kib")
	for _, in := range fl.insts {
		for _, g := range in.generations() {
			in.mu.Lock()
			for _, s := range g.samples {
				fmt.Fprintf(f, "%s,%s,%d,%d,%.0f,%d,%d,%d,%d\n", s.at.UTC().Format(time.RFC3339), in.name, g.n, g.pid,
					s.age.Seconds(), s.rssKiB, s.goroutines, s.fds, s.heapGoalKiB)
			}
			in.mu.Unlock()
		}
	}
	return f.Close()
}
