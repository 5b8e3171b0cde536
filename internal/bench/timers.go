package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/jsname"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// timers registers timers due within the spread (10 s) on a running scheduler and
// measures their lateness and the rate they are delivered at.
func (r *runner) timers(ctx context.Context) ([]Result, error) {
	n := r.cfg.Timers
	if n == 0 {
		return nil, nil
	}
	spread := r.cfg.TimerSpread
	res := Result{Scenario: "timers", Label: fmt.Sprintf("%d timers due within %s", n, spread), Count: n, Instances: 1}
	s, in, err := r.startOne(ctx, "timers")
	if err != nil {
		return nil, err
	}
	defer s.close()
	defer in.stop()
	first := time.Now().Add(3*time.Second + time.Duration(n)*20*time.Microsecond).Truncate(time.Second)
	rc, err := s.receive(ctx, s.layout.WakeupsStream, wakeupSlot, first, first.Add(spread))
	if err != nil {
		return nil, err
	}
	defer rc.stop()
	created := time.Now().UTC()
	subj := jsname.KVPrefix(r.js, s.layout.WakeupsBucket)
	for i := range n {
		run := "run-" + strconv.Itoa(i)
		t := kvstore.Timer{Run: run, Step: "wait", Workflow: "timers", Created: created,
			Due: first.Add(time.Duration(i) * spread / time.Duration(n)).UTC()}
		data, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("encode timer %s: %w", run, err)
		}
		if err := r.publishAsync(ctx, &nats.Msg{Subject: subj + kvstore.TimerKey(run, "wait"), Data: data}); err != nil {
			return nil, fmt.Errorf("put timer %s: %w", run, err)
		}
		if i%10_000 == 0 {
			r.progress("timers: writing %d/%d", i, n)
		}
	}
	if err := r.flush(ctx); err != nil {
		return nil, err
	}
	if time.Now().After(first) {
		res.Note = "timers were still being written when the first fell due"
	}
	r.drain(ctx, rc, &res, "timers: %d/%d wakeups received", first, first.Add(spread+5*time.Minute))
	return []Result{res}, nil
}
