package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// herd makes every schedule due in the same second and measures how long
// the scheduler takes to deliver all of them.
func (r *runner) herd(ctx context.Context) ([]Result, error) {
	n := r.cfg.Herd
	res := Result{Scenario: "herd", Label: fmt.Sprintf("%d due in the same second", n), Count: n, Instances: 1}
	if n == 0 {
		return nil, nil
	}
	s, err := r.newScenario(ctx, "herd")
	if err != nil {
		return nil, err
	}
	defer s.close()
	in, err := s.startInstance(ctx, "bench-1")
	if err != nil {
		return nil, err
	}
	defer in.stop()
	if err := in.waitReady(ctx); err != nil {
		return nil, err
	}
	// Leave time to write and index every schedule before the due second
	// (about 150 µs each on a 2-core machine, plus 5 s).
	due := time.Now().Add(5*time.Second + time.Duration(n)*150*time.Microsecond).Truncate(time.Second)
	err = s.putSpecs(ctx, n, "herd", func(i int) (string, kvstore.Spec) {
		return fmt.Sprintf("h%07d", i), kvstore.Spec{Workflow: "herd", At: &due, MisfireThreshold: "1h"}
	})
	if err != nil {
		return nil, err
	}
	rc, err := s.receive(ctx, s.layout.FiresStream, fireSlot, due, due.Add(time.Second))
	if err != nil {
		return nil, err
	}
	defer rc.stop()
	if time.Now().After(due) {
		res.Note = "schedules were still being written when they fell due"
	}
	if err := sleepUntil(ctx, due); err != nil {
		return nil, err
	}
	cpu0 := cpuSeconds()
	ok := rc.waitFor(ctx, due.Add(10*time.Minute), func(rc *receiver) bool { return rc.n >= n }, func(rc *receiver) {
		r.progress("herd: %d/%d fires received", rc.n, n)
	})
	cpu := cpuSeconds() - cpu0
	r.progressDone()
	rc.mu.Lock()
	last, got := rc.last, rc.n
	rc.mu.Unlock()
	if !ok {
		res.Note = fmt.Sprintf("only %d of %d received", got, n)
	}
	res.Gaps = n - got
	if got > 0 {
		res.CPUPer1k = cpu / float64(got) * 1000
	}
	res.Seconds = last.Sub(due).Seconds()
	if res.Seconds > 0 {
		res.PerSec = float64(got) / res.Seconds
	}
	rc.latency(&res)
	return []Result{res}, nil
}
