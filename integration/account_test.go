package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/account"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/faulttest"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestFaultEverySlotAccounted: two scheduler processes SIGKILLed and
// restarted at random for half a minute, all of them down at times,
// once right after new schedules were indexed (planned, never fired:
// issue 51's first case) and once while schedules were written. Every
// schedule (every 2 s or 3 s, each misfire policy, a 3 s threshold) is
// then accounted against the reference model (internal/account): every
// owed slot fired once or recorded with its reason, none unaccounted, none
// pending before the end of the chaos, none fired twice; under fire_all
// every slot fired. It prints
//
//	FAULT every-slot-accounted: schedules=<n> slots expected=<owed> fired=<f> duplicates=<d> lost=<unaccounted>
func TestFaultEverySlotAccounted(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: half a minute of SIGKILLs (./test.sh and CI run it)")
	}
	t.Parallel() // waits on slots more than it computes: CI's budget (test.sh)
	const name = "every-slot-accounted"
	bin := schedulerBinary(t)
	srv := natstest.Start(t)
	procs := startFleet(t, bin, srv.URL(), []string{"a1", "a2"})
	_, js := connectURLs(t, srv.URL())
	store := openStore(t, js)
	fires := newFireLog(t, js)
	ctx := context.Background()

	policies := []kvstore.MisfirePolicy{kvstore.MisfireFireAll, kvstore.MisfireFireOnce, kvstore.MisfireSkip}
	var ids []string
	put := func(batch string, n int) []string {
		t.Helper()
		var out []string
		for i := range n {
			id := fmt.Sprintf("%s-%02d", batch, i)
			spec := kvstore.Spec{Workflow: "acct", Every: []string{"2s", "3s"}[i%2], Align: kvstore.AlignEpoch,
				Misfire: policies[i%len(policies)], MisfireThreshold: "3s", CatchupWindow: "10m"}
			if _, err := store.PutSpec(ctx, id, spec); err != nil {
				t.Fatal(err)
			}
			out = append(out, id)
		}
		ids = append(ids, out...)
		return out
	}
	running := func() []*schedProc {
		var up []*schedProc
		for _, p := range procs {
			if p.running() {
				up = append(up, p)
			}
		}
		return up
	}
	killAll := func() {
		for _, p := range running() {
			p.kill()
		}
	}
	startAll := func() {
		for _, p := range procs {
			if !p.running() {
				p.start()
			}
		}
	}

	first := put("steady", 12)
	if behind := fires.waitAllReach(first, time.Now().Add(3*time.Second), 30*time.Second); len(behind) > 0 {
		t.Fatalf("%d schedules did not fire before the chaos, e.g. %v", len(behind), behind[:min(5, len(behind))])
	}

	// Indexed, then every scheduler stopped before their first fire, and
	// back 8 s later (several slots past the 3 s threshold).
	planned := put("planned", 6)
	time.Sleep(300 * time.Millisecond) // indexed by the running schedulers (planned in memory)
	killAll()
	time.Sleep(8 * time.Second)
	// Written while every scheduler is down: never indexed before the
	// outage ends.
	put("unseen", 6)
	time.Sleep(4 * time.Second)
	startAll()

	chaosEnd := time.Now().Add(25 * time.Second)
	actions := 0
	for time.Now().Before(chaosEnd) {
		time.Sleep(randDuration(1500*time.Millisecond, 4*time.Second))
		switch up := running(); {
		case rand.IntN(5) == 0:
			killAll()
			time.Sleep(randDuration(4*time.Second, 7*time.Second))
			startAll()
		case len(up) > 0 && rand.IntN(2) == 0:
			up[rand.IntN(len(up))].kill()
		default:
			startAll()
		}
		actions++
		_ = fires.sync()
	}
	startAll()
	tEnd := chaosEnd
	if behind := fires.waitAllReach(ids, tEnd.Add(4*time.Second), 60*time.Second); len(behind) > 0 {
		t.Fatalf("not quiescent: %d schedules have no fire after %s, e.g. %v", len(behind), tEnd.Add(4*time.Second).Format(time.RFC3339), behind[:min(5, len(behind))])
	}
	if err := fires.syncRetry(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d actions over %s; %d schedules, %d planned before the outage", name, actions, time.Since(chaosEnd.Add(-25*time.Second)).Round(time.Second), len(ids), len(planned))

	// Account every schedule up to the chaos's end, once the ledger has
	// caught up with what the schedulers decided.
	var sum account.Summary
	var problems []string
	err := testwait.Until(30*time.Second, "every slot accounted", func() error {
		sum, problems = account.Summary{}, nil
		for _, id := range ids {
			s, bad, err := accountOf(ctx, store, id, tEnd)
			if err != nil {
				bad = append(bad, fmt.Sprintf("%s: %v", id, err))
			}
			sum.Owed, sum.Fired, sum.NotFired, sum.Pending, sum.Unaccounted = sum.Owed+s.Owed, sum.Fired+s.Fired, sum.NotFired+s.NotFired, sum.Pending+s.Pending, sum.Unaccounted+s.Unaccounted
			problems = append(problems, bad...)
		}
		if len(problems) > 0 {
			return fmt.Errorf("%d problems, e.g. %v", len(problems), problems[:min(5, len(problems))])
		}
		return nil
	})
	dups := 0
	var dupSlots []string
	for _, id := range ids {
		for ms, n := range fires.slots[id] {
			if n > 1 {
				dups += n - 1
				dupSlots = append(dupSlots, kvstore.SlotID(id, time.UnixMilli(ms)))
			}
		}
	}
	sort.Strings(dupSlots)
	faulttest.Summarize(t, fmt.Sprintf("FAULT %s: schedules=%d slots expected=%d fired=%d duplicates=%d lost=%d",
		name, len(ids), sum.Owed, sum.Fired, dups, sum.Unaccounted+sum.Pending))
	t.Logf("%s: %s", name, sum.Line())
	if err != nil {
		t.Error(err)
	}
	if dups > 0 {
		t.Errorf("%d slots fired more than once, e.g. %v", dups, dupSlots[:min(5, len(dupSlots))])
	}
}

// accountOf accounts schedule id from its creation to to, as `schedule
// account` does, and says what is wrong: an owed slot unaccounted or
// still pending, or a fire_all slot not fired.
func accountOf(ctx context.Context, store *jsstore.Store, id string, to time.Time) (account.Summary, []string, error) {
	e, err := store.GetSpec(ctx, id)
	if err != nil {
		return account.Summary{}, nil, err
	}
	c, err := compile.Compile(e.Spec, id, store.CalendarSource(ctx), nil)
	if err != nil {
		return account.Summary{}, nil, err
	}
	ledger, err := store.Ledger(ctx, id)
	if err != nil {
		return account.Summary{}, nil, err
	}
	owed := account.OwedFrom(e.Spec.At, e.Written)
	in := account.Input{ID: id, Recurrence: account.RecurrenceOf(c.Schedule), Owed: owed, From: owed, To: to, Now: time.Now(),
		State: (readmodel.Model{Store: store, Planner: fires.Planner{}}).Info(ctx, nil, e, nil).State, Ledger: ledger}
	var bad []string
	sum := account.Account(in, func(en account.Entry) {
		switch {
		case en.Fate == account.FateUnaccounted, en.Fate == account.FatePending:
			bad = append(bad, fmt.Sprintf("%s %s %s (%s)", id, en.Nominal.Format(time.RFC3339Nano), en.Fate, en.Evidence))
		case e.Spec.Misfire == kvstore.MisfireFireAll && en.Fate != account.FateFired:
			bad = append(bad, fmt.Sprintf("%s %s under fire_all: %s (%s)", id, en.Nominal.Format(time.RFC3339Nano), en.Fate, en.Reason))
		}
	})
	return sum, bad, nil
}
