package worker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/worker"
)

// TestMetricsWorkflowsCapped (issue 52, part B): a worker handling many
// workflows keeps series of their own for the first MetricsWorkflowLimit
// and counts the rest under workflow="other", every delivery counted.
func TestMetricsWorkflowsCapped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	reg := prometheus.NewRegistry()
	const workflows, limit = 40, 5
	e.worker(worker.Config{Registerer: reg, MetricsWorkflowLimit: limit}, func(w *worker.Worker) {
		_ = w.Handle(worker.AllWorkflows, func(context.Context, worker.Fire) error { return nil })
	})
	for i := range workflows {
		e.publishFire(fmt.Sprintf("s%02d", i), fmt.Sprintf("wf%02d", i))
	}
	byWorkflow := map[string]float64{}
	err := testwait.Until(10*time.Second, "every delivery counted", func() error {
		mfs, err := reg.Gather()
		if err != nil {
			return err
		}
		clear(byWorkflow)
		total := 0.0
		for _, mf := range mfs {
			if mf.GetName() != "jetsched_worker_handled_total" {
				continue
			}
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "workflow" {
						byWorkflow[l.GetValue()] += m.GetCounter().GetValue()
						total += m.GetCounter().GetValue()
					}
				}
			}
		}
		if total != workflows {
			return fmt.Errorf("%v handled", total)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(byWorkflow) != limit+1 || byWorkflow["other"] != workflows-limit {
		t.Fatalf("series by workflow %v: want %d workflows and other with %d", byWorkflow, limit, workflows-limit)
	}
}
