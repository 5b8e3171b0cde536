package bench

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// scale writes many schedules through the bulk path, then starts a
// scheduler and measures the time to the first fire, the time until the
// due index is complete, the resident memory, and the CPU used while idle.
// All but a hundred "canary" schedules fire daily, spread over the day
// from an hour ahead; the canaries are due the moment the scheduler starts.
func (r *runner) scale(ctx context.Context) ([]Result, error) {
	n := r.cfg.Scale
	if n == 0 {
		return nil, nil
	}
	canaries := min(100, n)
	res := Result{Scenario: "scale", Label: fmt.Sprintf("%d schedules indexed", n), Count: n, Instances: 1}
	s, err := r.newScenario(ctx, "scale")
	if err != nil {
		return nil, err
	}
	defer s.close()
	day := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	t0 := time.Now()
	err = s.putSpecs(ctx, n-canaries, "scale", func(i int) (string, kvstore.Spec) {
		// Slots spread over 22 hours, none within an hour of the run.
		// (In float: i * 22h in int64 nanoseconds overflows past i = 116,000.)
		anchor := day.Add(time.Duration(float64(22*time.Hour) * float64(i) / float64(n)))
		return fmt.Sprintf("d%07d", i), kvstore.Spec{Workflow: "scale", Every: "24h", Anchor: &anchor}
	})
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	err = s.putSpecs(ctx, canaries, "scale", func(i int) (string, kvstore.Spec) {
		return fmt.Sprintf("c%07d", i), kvstore.Spec{Workflow: "scale", At: &now, MisfireThreshold: "1h"}
	})
	if err != nil {
		return nil, err
	}
	write := time.Since(t0)
	rc, err := s.receive(ctx, s.layout.FiresStream, fireSlot, now, now.Add(time.Second))
	if err != nil {
		return nil, err
	}
	defer rc.stop()
	r.progress("scale: %d schedules written in %s; starting the scheduler", n, write.Round(time.Millisecond))
	start := time.Now()
	in, err := s.startInstance(ctx, "bench-1")
	if err != nil {
		return nil, err
	}
	defer in.stop()
	done := make(chan error, 1)
	go func() { done <- in.waitReady(ctx) }()
	tk := time.NewTicker(250 * time.Millisecond)
	defer tk.Stop()
wait:
	for {
		select {
		case err := <-done:
			if err != nil {
				return nil, err
			}
			break wait
		case <-tk.C:
			r.progress("scale: indexing %d schedules: %s", n, time.Since(start).Round(time.Second))
		}
	}
	res.Seconds = time.Since(start).Seconds()
	rc.waitFor(ctx, time.Now().Add(time.Minute), func(rc *receiver) bool { return rc.n >= canaries }, nil)
	rc.mu.Lock()
	if !rc.first.IsZero() {
		res.FirstFireSec = rc.first.Sub(start).Seconds()
	}
	res.Gaps = canaries - rc.n
	rc.mu.Unlock()
	runtime.GC()
	res.RSSMiB = rssMiB()
	if err := writeHeapProfile(r.cfg.MemProfile); err != nil {
		return nil, err
	}
	r.progress("scale: index complete; measuring idle CPU for 5 s")
	cpu0 := cpuSeconds()
	if err := sleepUntil(ctx, time.Now().Add(5*time.Second)); err != nil {
		return nil, err
	}
	res.IdleCPU = (cpuSeconds() - cpu0) / 5
	rc.latency(&res)
	r.progressDone()
	res.Note = fmt.Sprintf("written in %.1f s", write.Seconds())
	return []Result{res}, nil
}
