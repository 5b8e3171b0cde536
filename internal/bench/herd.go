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
	s, in, err := r.startOne(ctx, "herd")
	if err != nil {
		return nil, err
	}
	defer s.close()
	defer in.stop()
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
	r.drain(ctx, rc, &res, "herd: %d/%d fires received", due, due.Add(10*time.Minute))
	return []Result{res}, nil
}
