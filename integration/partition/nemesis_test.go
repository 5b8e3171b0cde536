package partition

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/faulttest"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// plan is a nemesis made concrete for the cluster as it is now: which
// node it hits, where the checker reads, and how it starts and heals.
type plan struct {
	note    string // what was chosen, for the log
	cut     int    // the node cut off with its scheduler (lease guard checked), or -1
	checker int    // a node on the majority side during the fault
	apply   func() error
	mid     func() error // at half the fault, or nil
	heal    func() error
	// check, when set, runs after the window: a figure for the FAULT line,
	// or an error that fails the nemesis.
	check func() (string, error)
}

// nemesis is one kind of fault.
type nemesis struct {
	name string
	// repeat runs it that many times in a row (0 and 1: once).
	repeat int
	// cannot says why the nemesis cannot run on this machine ("" if it can).
	cannot func(h *harness) string
	plan   func(h *harness) (plan, error)
}

// nemeses are run in this order. The clock jump ahead is last: the slots
// its scheduler fires early belong to its own window, not to the next
// nemesis'.
func nemeses() []nemesis {
	return []nemesis{
		{name: "isolate-meta-leader", plan: isolateMetaLeader},
		{name: "isolate-stream-leaders", plan: isolateStreamLeaders},
		{name: "isolate-most-shards", plan: isolateMostShards},
		{name: "isolate-most-shards-loaded", plan: loaded(isolateMostShards, burners), repeat: guardRuns()},
		{name: "isolate-most-shards-frozen", plan: frozen(isolateMostShards, 3*time.Millisecond, 4*time.Second), repeat: guardRuns()},
		{name: "bridge", plan: bridge},
		{name: "lossy-one", plan: lossy(false)},
		{name: "lossy-all", plan: lossy(true)},
		{name: "lossy-slow-one", cannot: needNetem, plan: netem(false)},
		{name: "lossy-slow-all", cannot: needNetem, plan: netem(true)},
		{name: "kill9-during-partition", plan: kill9DuringPartition},
		{name: "clock-behind-30s", plan: clockJump(-30 * time.Second)},
		{name: "clock-ahead-30s", plan: clockJump(30 * time.Second)},
	}
}

func needNetem(h *harness) string { return h.c.nw.netem }

// skewWarning is what a scheduler logs when its clock is off the servers'.
const skewWarning = "clock differs from the NATS server's"

// other is the first node that is none of not.
func other(n int, not ...int) int {
	for i := range n {
		if !slices.Contains(not, i) {
			return i
		}
	}
	return -1
}

// isolation is the plan that cuts node x off from the other two.
func (h *harness) isolation(x int, note string) plan {
	nw := h.c.nw
	return plan{note: note, cut: x, checker: other(len(h.c.nodes), x),
		apply: func() error { return nw.isolate(x) }, heal: nw.heal}
}

func isolateMetaLeader(h *harness) (plan, error) {
	leader, err := h.c.metaLeader(h.checker)
	if err != nil {
		return plan{}, err
	}
	x := h.c.index(leader)
	if x < 0 {
		return plan{}, fmt.Errorf("meta leader %q is no node", leader)
	}
	return h.isolation(x, "meta leader "+leader), nil
}

// isolateStreamLeaders moves the sched_state bucket's leader to the node
// leading SCHED_FIRES, then cuts that node off.
func isolateStreamLeaders(h *harness) (plan, error) {
	x, _, _, err := h.firesLeader()
	if err != nil {
		return plan{}, err
	}
	leader := h.c.nodes[x].cfg.name
	note := "SCHED_FIRES and KV_sched_state led by " + leader
	if err := moveLeader(h.nc, h.js, "KV_sched_state", leader); err != nil {
		state, _ := streamLeader(h.js, "KV_sched_state")
		note = fmt.Sprintf("SCHED_FIRES led by %s, KV_sched_state by %s (moving it failed: %v)", leader, state, err)
	}
	if meta, err := h.c.metaLeader(h.checker); err == nil {
		note += ", meta leader " + meta
	}
	return h.isolation(x, note), nil
}

func isolateMostShards(h *harness) (plan, error) {
	owners := h.leaseOwners()
	best := ""
	for _, inst := range slices.Sorted(maps.Keys(owners)) {
		if best == "" || owners[inst] > owners[best] {
			best = inst
		}
	}
	x := h.c.byInstance(best)
	if x < 0 {
		return plan{}, fmt.Errorf("no scheduler holds a shard: %v", owners)
	}
	return h.isolation(x, fmt.Sprintf("scheduler %s holds the most shards (%v)", best, owners)), nil
}

// firesLeader is the node leading SCHED_FIRES, and the other two.
func (h *harness) firesLeader() (leader, a, c int, err error) {
	name, err := streamLeader(h.js, "SCHED_FIRES")
	if err != nil {
		return 0, 0, 0, err
	}
	leader = h.c.index(name)
	if leader < 0 {
		return 0, 0, 0, fmt.Errorf("SCHED_FIRES leader %q is no node", name)
	}
	a = other(3, leader)
	return leader, a, other(3, leader, a), nil
}

// bridge: node a sees b and c, b and c do not see each other. b leads
// SCHED_FIRES, so c is cut from the leader but not from the majority.
func bridge(h *harness) (plan, error) {
	b, a, c, err := h.firesLeader()
	if err != nil {
		return plan{}, err
	}
	nw := h.c.nw
	return plan{note: fmt.Sprintf("%s (SCHED_FIRES leader) and %s cut from each other, %s sees both",
		h.c.nodes[b].cfg.name, h.c.nodes[c].cfg.name, h.c.nodes[a].cfg.name),
		cut: -1, checker: a,
		apply: func() error { return nw.cut([][2]int{{b, c}}) }, heal: nw.heal}, nil
}

// targets is the SCHED_FIRES leader's node alone, or every node.
func (h *harness) targets(all bool) ([]int, string, error) {
	if all {
		return []int{0, 1, 2}, "every node", nil
	}
	x, _, _, err := h.firesLeader()
	if err != nil {
		return nil, "", err
	}
	return []int{x}, h.c.nodes[x].cfg.name + " (SCHED_FIRES leader)", nil
}

// lossy drops 20% of the packets each way on the links of one node (the
// SCHED_FIRES leader's) or of all, with cls_bpf (no netem needed).
func lossy(all bool) func(h *harness) (plan, error) {
	return func(h *harness) (plan, error) {
		idx, who, err := h.targets(all)
		if err != nil {
			return plan{}, err
		}
		nw := h.c.nw
		return plan{note: "20% packet loss each way on the link of " + who, cut: -1, checker: h.checker,
			apply: func() error { return nw.lossy(idx, 0.2) }, heal: nw.heal}, nil
	}
}

// netem is the lossy and slow link: tc netem with 20% loss and
// 200ms ± 100ms delay each way.
func netem(all bool) func(h *harness) (plan, error) {
	return func(h *harness) (plan, error) {
		idx, who, err := h.targets(all)
		if err != nil {
			return plan{}, err
		}
		nw := h.c.nw
		return plan{note: "netem loss 20% delay 200ms ±100ms each way on the link of " + who, cut: -1, checker: h.checker,
			apply: func() error { return nw.netemOn(idx, "loss", "20%", "delay", "200ms", "100ms") }, heal: nw.heal}, nil
	}
}

// kill9DuringPartition cuts node a off, then kill -9s the server of b (on
// the majority side, leading SCHED_FIRES): no quorum anywhere. Halfway
// through the fault b restarts on its store; then the partition heals.
func kill9DuringPartition(h *harness) (plan, error) {
	b, a, c, err := h.firesLeader()
	if err != nil {
		return plan{}, err
	}
	nw, cl := h.c.nw, h.c
	return plan{note: fmt.Sprintf("%s cut off, then %s (SCHED_FIRES leader) kill -9'd and restarted on its store halfway",
		cl.nodes[a].cfg.name, cl.nodes[b].cfg.name),
		cut: a, checker: c,
		apply: func() error {
			if err := nw.isolate(a); err != nil {
				return err
			}
			cl.killServer(b)
			return nil
		},
		mid:  func() error { return cl.restartServer(b) },
		heal: nw.heal}, nil
}

// clockJump restarts one scheduler with its clock shifted by off, and
// back without at the heal. The victim is the scheduler holding the most
// shards.
func clockJump(off time.Duration) func(h *harness) (plan, error) {
	return func(h *harness) (plan, error) {
		p, err := isolateMostShards(h)
		if err != nil {
			return plan{}, err
		}
		x, cl := p.cut, h.c
		sched := cl.nodes[x].sched
		var off0 int64
		return plan{note: fmt.Sprintf("scheduler %s restarted with --clock-offset %s, and without at the heal", cl.nodes[x].instance, off),
			cut: -1, checker: other(3, x),
			apply: func() error {
				off0 = faulttest.LogSize(sched.LogPath)
				return cl.restartScheduler(x, "--clock-offset", off.String())
			},
			heal: func() error { return cl.restartScheduler(x) },
			// The skewed scheduler must have said so (internal/skew).
			check: func() (string, error) {
				if !faulttest.LogHas(sched.LogPath, off0, skewWarning) {
					return "skew_reported=no", fmt.Errorf("scheduler %s ran %s off and did not log %q", cl.nodes[x].instance, off, skewWarning)
				}
				return "skew_reported=yes", nil
			}}, nil
	}
}

// runNemesis runs one nemesis and checks its window; it returns false when
// the cluster did not come back (the run cannot go on).
func (h *harness) runNemesis(t *testing.T, nem nemesis) bool {
	if nem.cannot != nil {
		if why := nem.cannot(h); why != "" {
			faulttest.Summarize(t, fmt.Sprintf("FAULT partition-%s: not runnable: %s", nem.name, why))
			t.Skip(why)
		}
	}
	began := time.Now()
	if err := h.waitSteady(90 * time.Second); err != nil {
		t.Errorf("%s: the cluster is not steady before the nemesis: %v", nem.name, err)
		return false
	}
	steady := time.Now()
	p, err := nem.plan(h)
	if err != nil {
		t.Errorf("%s: plan: %v", nem.name, err)
		return false
	}
	t.Logf("%s: %s (steady after %s, planned in %s)", nem.name, p.note,
		steady.Sub(began).Round(time.Millisecond), time.Since(steady).Round(time.Millisecond))
	var guard *guardWatch
	shards := 0
	if p.cut >= 0 {
		shards = h.leaseOwners()[h.c.nodes[p.cut].instance]
		if guard, err = watchGuard(h.c, p.cut); err != nil {
			t.Errorf("%s: watch %s: %v", nem.name, h.c.nodes[p.cut].cfg.name, err)
			return false
		}
		defer guard.close()
		if err := guard.waitDispatching(2*time.Second, 10*time.Second); err != nil {
			t.Errorf("%s: the scheduler to cut off (%d shards) is not dispatching: %v", nem.name, shards, err)
		}
	}
	// One-shots due while the fault lasts.
	due := time.Now().Add(time.Second)
	h.register(oneShots(nem.name, h.size.shots, due, due.Add(h.size.fault-time.Second)))

	seq0, err := h.lastSeq(time.Now().Add(5 * time.Second))
	if err != nil {
		t.Errorf("%s: %v", nem.name, err)
		return false
	}
	start := time.Now()
	if err := p.apply(); err != nil {
		_ = p.heal()
		t.Errorf("%s: apply: %v", nem.name, err)
		return false
	}
	if err := h.useChecker(p.checker); err != nil {
		t.Logf("%s: checker on %s: %v (reading after the heal instead)", nem.name, h.c.nodes[p.checker].cfg.name, err)
	}
	if p.mid != nil {
		sleepUntil(start.Add(h.size.fault / 2))
		if err := p.mid(); err != nil {
			t.Errorf("%s: halfway: %v", nem.name, err)
		}
	}
	// The majority side's progress: SCHED_FIRES' last sequence, read in
	// the last quarter of the fault and no later than its end.
	sleepUntil(start.Add(h.size.fault * 3 / 4))
	progress := "SCHED_FIRES did not answer"
	if seq, err := h.lastSeq(start.Add(h.size.fault)); err == nil {
		progress = fmt.Sprintf("%d fires stored since the fault began", seq-seq0)
	}
	sleepUntil(start.Add(h.size.fault))
	heal := time.Now()
	if err := p.heal(); err != nil {
		t.Errorf("%s: heal: %v", nem.name, err)
	}
	if err := h.c.nw.filtersClear(); err != nil {
		t.Errorf("%s: after the heal: %v", nem.name, err)
	}
	t.Logf("%s: fault %s; from the majority side (%s) before the heal: %s", nem.name, heal.Sub(start).Round(time.Millisecond),
		h.c.nodes[p.checker].cfg.name, progress)

	sleepUntil(heal.Add(h.size.recovery))
	end := time.Now()
	w := window{name: nem.name, start: start, heal: heal, end: end}
	h.windows = append(h.windows, w)
	missing := h.reader.waitFired(h.scheds, start, end, h.size.settle)

	f := account(h.scheds, h.reader.fires, w)
	line := f.line(nem.name)
	var gr guardResult
	if guard != nil {
		gr = guard.result(start, heal, shards)
		line += " " + gr.String()
	}
	if p.check != nil {
		figure, err := p.check()
		line += " " + figure
		if err != nil {
			t.Errorf("%s: %v", nem.name, err)
		}
	}
	faulttest.Summarize(t, line)
	h.assert(t, nem.name, f, missing, strings.HasPrefix(nem.name, "clock-ahead"))
	if guard != nil && gr.Late > 0 {
		t.Errorf("%s: the cut-off scheduler %s (%d shards) made %d claims more than %s after the cut by its own clock (its lease guard is 90%% of %s of silence); the last made at %s, seen at %s",
			nem.name, h.c.nodes[p.cut].instance, shards, gr.Late, gr.Limit, h.c.leaseTTL, strconvDur(gr.LastDecided), strconvDur(gr.LastClaim))
	}
	return true
}

// assert fails the test on what exactly-once forbids: a duplicate, a lost
// slot, a malformed fire, and (unless early is allowed: a scheduler whose
// clock is ahead) a fire before its slot.
func (h *harness) assert(t *testing.T, name string, f figures, missing []string, early bool) {
	if f.Duplicates > 0 {
		t.Errorf("%s: %d duplicate fires: %v", name, f.Duplicates, first(f.dups, 10))
	}
	if f.Lost > 0 {
		t.Errorf("%s: %d lost slots (not fired within %s of the window's end): %v; their shards' leases now: %s",
			name, f.Lost, h.size.settle, first(missing, 10), h.holders(first(missing, 10)))
	}
	if f.Early > 0 {
		msg := fmt.Sprintf("%s: %d fires before their slot, up to %s early: %v", name, f.Early, f.MaxEarly, first(f.early, 5))
		if early {
			t.Log(msg + " (a scheduler whose clock is ahead fires early: docs/reliability.md)")
		} else {
			t.Error(msg)
		}
	}
	if len(h.reader.bad) > 0 {
		t.Errorf("%s: %d malformed fire messages: %v", name, len(h.reader.bad), first(h.reader.bad, 5))
	}
}

func first[T any](s []T, n int) []T { return s[:min(n, len(s))] }

// holders says who holds the lease of each slot's schedule's shard: the
// scheduler that should have fired it (a diagnosis for lost slots).
func (h *harness) holders(slotIDs []string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	shards, err := h.store.Shards(ctx)
	if err != nil {
		return err.Error()
	}
	owners := h.store.LeaseOwners(ctx)
	var out []string
	for _, s := range slotIDs {
		id, _, err := kvstore.ParseSlotID(s)
		if err != nil {
			continue
		}
		n := kvstore.ShardOf(id, shards)
		out = append(out, fmt.Sprintf("%s: shard %d held by %q", id, n, owners[n]))
	}
	return strings.Join(out, ", ")
}
