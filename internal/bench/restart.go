package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// restart is the steady scenario through a restart of its scheduler: n
// schedules firing every second on one `scheduler run` process, which is
// stopped once it has fired in windows for a while (its records settled
// by window claims, some left behind their fires: --state-interval) and
// started again at once under the same name, as a deploy or a supervisor
// does. Two rows: SIGTERM (a deploy: the process writes its records and
// hands its leases back, so the new one takes every shard at once) and
// SIGKILL (a crash: the new process waits out the lease TTL, then takes
// over the claims and records the dead one left). Either way the new
// process's first decision of each schedule reads the schedule's last
// fire from the stream (docs/protocol.md, "Behind the stream"): one
// lookup per schedule, all of them due in the first second it owns the
// shards. Each row gives the lateness of the slots after the stop (by
// second: how long until on time again), the CPU of the new process and
// this one from the stop on, and that no slot of the whole run fired
// twice or never. Without a scheduler binary (go test) the instance in
// this process is stopped and started again (the SIGTERM row alone).
func (r *runner) restart(ctx context.Context) ([]Result, error) {
	res, err := r.restartRun(ctx, false)
	if err != nil || r.cfg.Binary == "" {
		return []Result{res}, err
	}
	killed, err := r.restartRun(ctx, true)
	return []Result{res, killed}, err
}

func (r *runner) restartRun(ctx context.Context, kill bool) (Result, error) {
	const name = "restart"
	n := r.cfg.Restart
	how := "SIGTERM"
	if kill {
		how = "SIGKILL"
	}
	res := Result{Scenario: name, Label: fmt.Sprintf("%d schedules x 1/s, %s", n, how), Count: n, Instances: 1}
	s, err := r.newScenario(ctx, name)
	if err != nil {
		return res, err
	}
	defer s.close()
	if err := s.putSteadySpecs(ctx, n, name); err != nil {
		return res, err
	}
	var m member
	defer func() {
		if m != nil {
			m.stop()
		}
	}()
	r.progress("%s: %d schedules: starting bench-1", name, n)
	if m, err = s.startMember(ctx, "bench-1", true); err != nil {
		return res, err
	}
	if err := s.waitBalanced(ctx, []string{"bench-1"}); err != nil {
		return res, err
	}
	// Fire long enough for the records to be written by window claims and
	// left behind, then stop at a point inside a second. A crash is
	// measured for the lease TTL longer: the new process waits it out.
	from := time.Now().Add(3 * time.Second).Truncate(time.Second).Add(time.Second)
	stop := from.Add(min(r.cfg.Duration, 10*time.Second)).Add(370 * time.Millisecond)
	to := stop.Add(r.cfg.Duration).Truncate(time.Second)
	if kill {
		to = to.Add(fires.DefaultLeaseTTL)
	}
	all, err := s.receive(ctx, s.layout.FiresStream, fireSlot, from, to)
	if err != nil {
		return res, err
	}
	defer all.stop()
	after, err := s.receive(ctx, s.layout.FiresStream, fireSlot, stop, to)
	if err != nil {
		return res, err
	}
	defer after.stop()
	if err := sleepUntil(ctx, stop); err != nil {
		return res, err
	}
	stopped := time.Now()
	if p, ok := m.(*process); ok && kill {
		_ = p.cmd.Process.Kill()
		<-p.done
	} else {
		m.stop()
	}
	m = nil
	cpu0 := cpuSeconds()
	r.progress("%s: %d schedules: bench-1 stopped (%s), starting it again", name, n, how)
	if m, err = s.startMember(ctx, "bench-1", true); err != nil {
		return res, err
	}
	restarted := time.Since(stopped)
	show := func(rc *receiver) {
		r.progress("%s: %d schedules (%s): %d fires received", name, n, how, rc.n)
	}
	after.waitFor(ctx, to, func(*receiver) bool { return false }, show)
	cpu1 := membersCPU([]member{m}) - cpu0
	// Stragglers, as in steady: a claim left by a killed process is taken
	// over when it expires.
	want := n * int(to.Sub(from).Seconds())
	all.waitFor(ctx, time.Now().Add(45*time.Second), func(rc *receiver) bool { return rc.inWin >= want }, nil)
	r.progressDone()
	after.mu.Lock()
	fired := after.inWin
	after.mu.Unlock()
	secs := to.Sub(stop).Seconds()
	res.PerSec, res.Seconds = float64(fired)/secs, secs
	if fired > 0 {
		res.CPUPer1k = cpu1 / float64(fired) * 1000
	}
	after.latency(&res)
	all.mu.Lock()
	res.Duplicates, res.Gaps = all.dups, want-all.inWin
	all.mu.Unlock()
	res.Note = fmt.Sprintf("stopped %.1f s into the run (%s), started again under the same name %.2f s after; on time again (each second's worst lateness under 100 ms from then on) %s after the stop; lateness, rate and CPU (the new process and this one) from the stop on, gaps and duplicates over the whole run",
		stop.Sub(from).Seconds(), how, restarted.Seconds(), onTimeAgain(res.MaxMsBySecond, 100))
	return res, nil
}

// onTimeAgain is when a run's lateness by second (from its start) stays
// under limit ms: "N s", "never" when its last second is over it, or
// "unmeasured".
func onTimeAgain(bySecond []float64, limit float64) string {
	if len(bySecond) == 0 {
		return "unmeasured"
	}
	i := len(bySecond)
	for i > 0 && bySecond[i-1] < limit {
		i--
	}
	if i == len(bySecond) {
		return "never"
	}
	return fmt.Sprintf("%d s", i)
}

// putSteadySpecs writes n schedules every 1s, their anchors spread evenly
// over the second (the steady, fleet and restart scenarios).
func (s *scenario) putSteadySpecs(ctx context.Context, n int, what string) error {
	epoch := time.Unix(0, 0).UTC()
	return s.putSpecs(ctx, n, what, func(i int) (string, kvstore.Spec) {
		anchor := epoch.Add(time.Duration(i) * time.Second / time.Duration(n))
		return fmt.Sprintf("s%07d", i), kvstore.Spec{Workflow: "steady", Every: "1s", Anchor: &anchor}
	})
}
