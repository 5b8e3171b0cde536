package bench

import (
	"context"
	"fmt"
	"time"
)

// steady runs each configured count of schedules firing every second,
// spread evenly over the second, on one scheduler; with Config.Audit each
// count runs again right after with the audit duties on.
func (r *runner) steady(ctx context.Context) ([]Result, error) {
	var out []Result
	for _, n := range r.cfg.Steady {
		for _, audited := range []bool{false, true} {
			if audited && !r.cfg.Audit {
				continue
			}
			res, err := r.steadyRun(ctx, "steady", n, 1, false, audited)
			if err != nil {
				return out, err
			}
			if !audited {
				res.Peer = steadyPeer(n)
			}
			out = append(out, res)
		}
	}
	return out, nil
}

// fleet is the steady scenario with 1, 2 and 3 schedulers sharing the
// schedules through shard leases: `scheduler run` processes when the run
// has a binary (Config.Binary), else instances in this process, each on its
// own connection.
func (r *runner) fleet(ctx context.Context) ([]Result, error) {
	var out []Result
	for inst := 1; inst <= 3; inst++ {
		res, err := r.steadyRun(ctx, "fleet", r.cfg.Fleet, inst, true, false)
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
	return out, nil
}

// steadyRun runs n schedules every second on instances schedulers
// (processes when asked and the run has a binary), audited when asked (in
// this process only), and measures them.
func (r *runner) steadyRun(ctx context.Context, name string, n, instances int, processes, audited bool) (Result, error) {
	res := Result{Scenario: name, Label: fmt.Sprintf("%d schedules x 1/s", n), Count: n, Instances: instances}
	s, err := r.newScenario(ctx, name)
	if err != nil {
		return res, err
	}
	defer s.close()
	if audited {
		res.Label += ", audited"
		if err := s.setupAudit(ctx); err != nil {
			return res, err
		}
	}
	if err := s.putSteadySpecs(ctx, n, name); err != nil {
		return res, err
	}
	var ms []member
	defer func() {
		for _, m := range ms {
			m.stop()
		}
	}()
	names := make([]string, instances)
	for i := range instances {
		names[i] = fmt.Sprintf("bench-%d", i+1)
		r.progress("%s: %d schedules, %d instance(s): starting %s", name, n, instances, names[i])
		m, err := s.startMember(ctx, names[i], processes)
		if err != nil {
			return res, err
		}
		ms = append(ms, m)
	}
	if err := s.waitBalanced(ctx, names); err != nil {
		return res, err
	}
	// Warm up for 3 s (leases settle, state records are created), then
	// measure whole seconds.
	from := time.Now().Add(3 * time.Second).Truncate(time.Second).Add(time.Second)
	to := from.Add(r.cfg.Duration.Truncate(time.Second))
	// A contended steady row has the co-tenant from here to the end of
	// its measured seconds, then goes on to see it back on time.
	var cont *contender
	if name == "steady" {
		cont = s.r.cont
	}
	after := s.r.afterContention(cont)
	rc, err := s.r.receiveAfter(ctx, s.layout.FiresStream, nil, fireSlot, from, to, after)
	if err != nil {
		return res, err
	}
	defer rc.stop()
	if err := cont.start(); err != nil {
		return res, err
	}
	defer cont.stop()
	if err := sleepUntil(ctx, from); err != nil {
		return res, err
	}
	rc.mu.Lock()
	n0 := rc.n
	rc.mu.Unlock()
	cpu0 := membersCPU(ms)
	show := func(rc *receiver) {
		r.progress("%s: %d schedules, %d instance(s): %d fires received", name, n, instances, rc.n-n0)
	}
	rc.waitFor(ctx, to, func(*receiver) bool { return false }, show)
	rc.mu.Lock()
	n1 := rc.n
	rc.mu.Unlock()
	cpu1 := membersCPU(ms)
	cont.stop()
	secs := to.Sub(from).Seconds()
	want := n * int(secs)
	// Stragglers: a slot whose claim was left by an instance that stalled
	// (a loaded machine) is taken over when the claim expires (30 s by
	// default), so wait that long before calling a slot a gap.
	rc.waitFor(ctx, time.Now().Add(45*time.Second), func(rc *receiver) bool { return rc.inWin >= want }, nil)
	rc.waitAfter(ctx, n)
	r.progressDone()
	res.PerSec = float64(n1-n0) / secs
	res.Seconds = secs
	if n1 > n0 {
		res.CPUPer1k = (cpu1 - cpu0) / float64(n1-n0) * 1000
	}
	rc.latency(&res)
	rc.mu.Lock()
	res.Gaps = want - rc.inWin
	rc.mu.Unlock()
	return res, nil
}

// afterContention is how long a row contended by cont goes on after the
// co-tenant stops, to see it back on time: twice the measured time, at
// most 10 s (0 for a quiet row).
func (r *runner) afterContention(cont *contender) time.Duration {
	if cont == nil {
		return 0
	}
	return min(2*r.cfg.Duration.Truncate(time.Second), 10*time.Second)
}

// waitAfter waits until the slots of the seconds after the co-tenant
// stopped (perSec each second) are received, or 5 s past them.
func (rc *receiver) waitAfter(ctx context.Context, perSec int) {
	if len(rc.after) == 0 {
		return
	}
	want := perSec * len(rc.after)
	rc.waitFor(ctx, rc.end.Add(5*time.Second), func(rc *receiver) bool { return rc.inAfter >= want }, nil)
}

func sleepUntil(ctx context.Context, t time.Time) error {
	tm := time.NewTimer(time.Until(t))
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// membersCPU is the CPU seconds of this process and of the member
// processes.
func membersCPU(ms []member) float64 {
	t := cpuSeconds()
	for _, m := range ms {
		t += m.cpuSeconds()
	}
	return t
}

// waitBalanced waits until the named instances hold every shard between
// them, each about its fair share, unchanged for a second: a fleet is
// measured once its leases have settled, not while shards are being handed
// over.
func (s *scenario) waitBalanced(ctx context.Context, names []string) error {
	shards, err := s.store.Shards(ctx)
	if err != nil {
		return err
	}
	fair := shards/len(names) - 1 // the leaser balances to within one
	deadline := time.Now().Add(2 * time.Minute)
	var stableSince time.Time
	last := ""
	for time.Now().Before(deadline) {
		held := map[string]int{}
		for _, owner := range s.store.LeaseOwners(ctx) {
			held[owner]++
		}
		total, ok, snap := 0, true, ""
		for _, name := range names {
			h := held[name]
			total += h
			ok = ok && h >= fair
			snap += fmt.Sprint(h, " ")
		}
		switch {
		case total != shards || !ok:
			stableSince = time.Time{}
		case snap != last || stableSince.IsZero():
			stableSince = time.Now()
		case time.Since(stableSince) >= time.Second:
			return nil
		}
		last = snap
		s.r.progress("%d instance(s): waiting for the shard leases to settle (held: %s)", len(names), snap)
		if err := sleepUntil(ctx, time.Now().Add(100*time.Millisecond)); err != nil {
			return err
		}
	}
	return fmt.Errorf("shard leases did not settle in 2m (held: %s of %d)", last, shards)
}
