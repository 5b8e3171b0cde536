package fires

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/account/accounttest"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestBatchableIsTheDecidersPlainClaim generates schedules (random specs
// and policies, from internal/account's generators) in random states
// around now: due or not, late within or past the threshold, with settled,
// unsettled and window claims, operator requests (triggers, backfills,
// pauses, skips), running fires, changed plans, ended recurrences. For
// each, with nothing of the loop's own bookkeeping in the way:
//   - the loop queues the slot on a window (batchable) exactly when the
//     decider calls its decision plain (DecidePlain);
//   - the worker, deciding again from the job the loop snapshots, calls
//     it plain exactly then too (the window it fires declines nothing the
//     loop queued, and takes nothing the loop did not);
//   - a plain decision is what docs/protocol.md calls a plain slot: due,
//     on time, regular, with no operator request, pause, overlap
//     tracking, catch-up or unsettled claim (documentedPlain).
//
// JETSCHED_ACCOUNT_SEED and JETSCHED_ACCOUNT_CASES run it longer.
func TestBatchableIsTheDecidersPlainClaim(t *testing.T) {
	seed, count := modelSeed(t, 3000)
	r := rand.New(rand.NewPCG(seed, 53))
	l, _ := windowLoopOf(1)
	now := l.e.cfg.Clock.Now()
	var plains, batchables int
	for i := range count {
		spec := accounttest.WithPolicy(r, accounttest.Spec(r, now.Add(-time.Duration(r.IntN(48*3600))*time.Second)))
		spec.Calendar = "" // the loop's test has no calendars
		id := fmt.Sprintf("s%d", i)
		c, err := compile.Compile(spec, id, nil, &l.e.interner)
		if err != nil {
			continue
		}
		if r.IntN(2) == 0 {
			c.Policy.Overlap = kvstore.OverlapAllow // the fast path's only policy: often, so both sides are reached
		}
		en := &entry{id: id, compiled: l.sched(c), target: target{workflow: "wf"}, stateRev: 1 + uint64(r.IntN(10))}
		st := genState(r, c, now)
		en.setState(&st, l.e.cfg.Instance)
		if r.IntN(4) == 0 && st.Claim != nil {
			en.settled = st.Claim.Token // this instance settled it
		}
		l.entries[id] = en

		in := l.e.entryInput(en, now, &l.scratch)
		d, want := DecidePlain(in)
		got := l.win.batchable(en, now)
		if got != want {
			t.Fatalf("case %d (seed %d): batchable %v, the decider's plain %v (decision %+v)\nstate %+v\npolicy %+v",
				i, seed, got, want, d, st, c.Policy)
		}
		j := l.snapshot(en, now)
		_, worker := DecidePlain(l.e.decideInput(now, j.id, j.target, j.compiled, j.written, j.state, j.settled, j.checked))
		if worker != want {
			t.Fatalf("case %d (seed %d): the worker's plain %v from the loop's job, the loop's %v\nstate %+v", i, seed, worker, want, st)
		}
		if want && !documentedPlain(in) {
			t.Fatalf("case %d (seed %d): the decider calls %+v plain, which is not a plain slot (docs/protocol.md)\nstate %+v\npolicy %+v",
				i, seed, d, st, c.Policy)
		}
		if want {
			plains++
		}
		if got {
			batchables++
		}
		delete(l.entries, id)
	}
	// The generator must reach both sides, or the equivalence says nothing.
	if plains < count/20 || plains > count-count/20 {
		t.Fatalf("%d of %d cases plain: the generated states do not cover both sides", plains, count)
	}
	t.Logf("%d of %d cases plain, %d batchable", plains, count, batchables)
}

// documentedPlain is docs/protocol.md's plain slot, stated on its own (as
// the loop once restated it): a regular slot that is due and on time, of
// a state with its spec's plan, no operator request (trigger, backfill,
// pause, skip), no fire tracked for an overlap policy, no claim left
// unsettled.
func documentedPlain(in Input) bool {
	st := in.State
	if st == nil || st.Plan != in.Plan || st.Ended || st.Next.IsZero() || st.Next.After(in.Now) ||
		len(st.Triggers) > 0 || st.Backfill != nil || st.Paused != nil || st.SkipNext > 0 || st.Running != nil ||
		in.Policy.Overlap != kvstore.OverlapAllow {
		return false
	}
	if c := st.Claim; c != nil && c.Token != in.Settled && !c.Settled() {
		return false
	}
	return in.Now.Sub(st.Next) <= in.threshold()
}

// genState is a random state of schedule c around now.
func genState(r *rand.Rand, c compile.Compiled, now time.Time) kvstore.State {
	st := kvstore.State{Plan: c.Plan, Owner: "i"}
	if r.IntN(12) == 0 {
		st.Plan = "changed"
	}
	// Next: one of the schedule's slots around now, or one nudged off it.
	from := now.Add(-time.Duration(r.IntN(3*3600)) * time.Second)
	if r.IntN(3) == 0 {
		from = now.Add(-time.Duration(r.IntN(90)) * time.Second)
	}
	st.Next = c.Schedule.Next(from)
	if r.IntN(2) == 0 {
		st.Next = now.Add(-time.Duration(r.IntN(90)) * time.Second) // due, on time or just past it
	}
	if r.IntN(10) == 0 {
		st.Next = st.Next.Add(time.Duration(r.IntN(7)) * time.Second)
	}
	if r.IntN(15) == 0 {
		st.Next, st.Ended = time.Time{}, true
	}
	if r.IntN(2) == 0 {
		before := st.Next.Add(-time.Duration(1+r.IntN(3600)) * time.Second)
		cl := &kvstore.Claim{Slot: before, Token: fmt.Sprintf("t%d", r.IntN(1000)), Owner: "other",
			At: before, Expires: before.Add(30 * time.Second)}
		switch r.IntN(5) {
		case 0: // unsettled, perhaps live
			cl.At, cl.Expires = now.Add(-time.Second), now.Add(29*time.Second)
		case 1:
			cl.Seq = 1 + uint64(r.IntN(100)) // settled by its sequence
		case 2:
			cl.Seq, cl.Window = 7, "0/3" // a window's, settled
			if r.IntN(2) == 0 {
				cl.Slot = st.Next // its slot is Next: moved past
			}
		case 3:
			cl.Seq, cl.Slot = 9, st.Next.Add(time.Second) // implausible: Next not after it
		}
		st.Claim = cl
	}
	switch r.IntN(14) {
	case 0:
		st.Triggers = []kvstore.Trigger{{At: now.Add(-time.Second)}}
	case 1:
		st.Backfill = &kvstore.Backfill{From: now.Add(-time.Hour), To: now, NotBefore: now.Add(time.Duration(r.IntN(3)-1) * time.Hour)}
	case 2:
		st.Paused = &kvstore.Pause{Until: now.Add(time.Duration(r.IntN(3)-1) * time.Hour)}
	case 3:
		st.SkipNext = 1
	case 4:
		st.Running = &kvstore.Running{SlotID: "x", Slot: now.Add(-time.Minute), Since: now.Add(-time.Minute), Deadline: now.Add(time.Duration(r.IntN(3)-1) * time.Hour)}
	case 5:
		st.ResumedAt = now.Add(-time.Duration(r.IntN(7200)) * time.Second)
	case 6:
		st.LastDone = now.Add(-time.Duration(r.IntN(7200)) * time.Second)
	}
	return st
}
