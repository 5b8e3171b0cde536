package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// previousFormat is the last commit before fires moved to per-schedule
// subjects and stopped writing a ledger entry each (issue 26): the release
// a fleet upgrades from.
const previousFormat = "19c15a05dcb0704c34bbd204d5364ddbcb300028"

// buildAt builds cmd/scheduler as it was at commit, from this repository's
// history (git archive into a temporary directory; the module cache
// serves its dependencies). Without the history (a source tarball) the
// test cannot run; under CI that is a failure.
func buildAt(t *testing.T, commit string) string {
	t.Helper()
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil || exec.Command("git", "cat-file", "-e", commit+"^{commit}").Run() != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("commit %s is not in this checkout's history (git: %v): CI needs a full clone", commit, err)
		}
		t.Skipf("commit %s is not in this checkout's history: the upgrade test needs a git clone", commit)
	}
	src := t.TempDir()
	archive := exec.Command("bash", "-c", "git -C \"$1\" archive \"$2\" | tar -x -C \"$3\"", "archive", strings.TrimSpace(string(root)), commit, src)
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("git archive %s: %v\n%s", commit, err, out)
	}
	bin := filepath.Join(t.TempDir(), "scheduler-"+commit[:7])
	build := exec.Command("go", "build", "-o", bin, "./cmd/scheduler")
	build.Dir = src
	build.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the scheduler of %s: %v\n%s", commit, err, out)
	}
	return bin
}

// TestMixedFleetUpgrade: a fleet of schedulers of the previous release
// (fires on sched.fire.<workflow>, a ledger entry per fire) is replaced
// one instance at a time by the current binary (per-schedule subjects, the
// stream as the ledger) while 300 schedules fire every second, with a
// crash (SIGKILL) at each replacement, so that the new instances take over
// the old ones' claims and windows and the other way round. Every slot is
// in the fire stream exactly once, on whichever subject form its publisher
// used. The new instances run with --state-interval: they record every
// fire while an old instance is a member (it does not check records
// against the stream), and leave records behind their fires once the
// fleet is all new; then one of them is killed with its records behind,
// and the others take its shards over.
func TestMixedFleetUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the previous release and rolls a fleet (./test.sh and CI run it)")
	}
	const name = "mixed-fleet-upgrade"
	oldBin := previousBin.copyFor(t, "scheduler-previous", func() string { return buildAt(t, previousFormat) })
	newBin := schedulerBinary(t)
	srv := natstest.Start(t)
	procs := []*schedProc{}
	for _, n := range []string{"old1", "old2", "old3"} {
		p := newSchedProc(t, oldBin, n, schedulerArgs(srv.URL(), n), nil)
		p.start()
		procs = append(procs, p)
	}
	nc, js := connectURLs(t, srv.URL())
	store := openStore(t, js)
	// Neither version may take the other's records for invalid (or
	// re-plan them as implausible): the N-1 promise of records.md.
	var refusedMu sync.Mutex
	var refused []string
	sub, err := nc.Subscribe("sched.event.>", func(m *nats.Msg) {
		if k := strings.Split(m.Subject, ".")[2]; k == string(kvstore.EventInvalid) || k == string(kvstore.EventReplanned) {
			refusedMu.Lock()
			refused = append(refused, m.Subject+" "+string(m.Data))
			refusedMu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	ids := scheduleIDs("upgrade", 300)
	created := time.Now()
	putSchedules(t, store, ids)
	fires := newFireLog(t, js)
	if behind := fires.waitAllReach(ids, time.Now().Add(slotStep), 30*time.Second); len(behind) > 0 {
		t.Fatalf("the old fleet does not fire %d schedules, e.g. %v", len(behind), first(behind, 5))
	}
	for i, n := range []string{"new1", "new2", "new3"} {
		// The old instance dies (no graceful hand-over: its claims and
		// windows are left to the others), the new one takes its place.
		procs[i].kill()
		p := newSchedProc(t, newBin, n, schedulerArgs(srv.URL(), n, "--state-interval", "1m"), nil)
		p.start()
		procs[i] = p
		// Both versions fire side by side until every schedule has fired
		// a slot since the swap.
		if behind := fires.waitAllReach(ids, time.Now().Add(2*slotStep), 40*time.Second); len(behind) > 0 {
			t.Fatalf("after replacing instance %d, %d schedules stopped firing, e.g. %v", i+1, len(behind), first(behind, 5))
		}
	}
	// All new: once the last old member's key has expired, records stay
	// behind their fires (a minute's worth). Then new1 dies with its own.
	err = testwait.Until(40*time.Second, "the old members' keys gone", func() error {
		for _, n := range []string{"old1", "old2", "old3"} {
			if _, err := store.Leases().Get(context.Background(), "member."+n); err == nil {
				return fmt.Errorf("member.%s still there", n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	behindSince := time.Now()
	err = testwait.Until(40*time.Second, "a state record behind its fires", func() error {
		return recordBehind(store, ids, behindSince)
	})
	if err != nil {
		t.Fatal(err)
	}
	procs[0].kill()
	if behind := fires.waitAllReach(ids, time.Now().Add(3*slotStep), 40*time.Second); len(behind) > 0 {
		t.Fatalf("after new1 died with records behind, %d schedules stopped firing, e.g. %v", len(behind), first(behind, 5))
	}
	chaosStop := time.Now()
	sum := settle(t, fires, name, ids, chaosStop, created, 40*time.Second)
	t.Logf("%s: %s; by instance %v", name, sum, fires.instances)
	refusedMu.Lock()
	if len(refused) > 0 {
		t.Errorf("%s: %d invalid or replanned events across the versions, e.g. %v", name, len(refused), first(refused, 3))
	}
	refusedMu.Unlock()
	for _, n := range []string{"old1", "old2", "old3", "new1", "new2", "new3"} {
		if fires.instances[n] == 0 {
			t.Errorf("instance %s published no fire: the run did not mix the versions as meant", n)
		}
	}
}

// recordBehind is nil once some schedule of ids has a state record behind
// its fires: written before since, and at least three slots before the
// schedule's next fire.
func recordBehind(store *jsstore.Store, ids []string, since time.Time) error {
	for _, id := range ids {
		st, _, err := store.GetState(context.Background(), id)
		if err != nil {
			continue
		}
		if st.UpdatedAt.Before(since) && time.Since(st.Next) > 3*slotStep {
			return nil
		}
	}
	return fmt.Errorf("every record of %d schedules is up to date", len(ids))
}

// TestMixedFleetOneShotHerd: beside an instance of the previous release,
// a current one fires a herd of one-shots in windows, their state records
// left for later (--record-lag), and crashes (exit status 3) after its
// second such window, before any record is written. The old instance
// takes its shards over and finds every fire (the stream drops its
// publishes of them as duplicates, or its takeover finds them): each
// one-shot is in the stream once, and each record ends.
func TestMixedFleetOneShotHerd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the previous release (./test.sh and CI run it)")
	}
	const name, step, n = "mixed-fleet-one-shot-herd", "window-deferred", 400
	oldBin := previousBin.copyFor(t, "scheduler-previous", func() string { return buildAt(t, previousFormat) })
	newBin := schedulerBinary(t)
	srv := natstest.Start(t)
	old := newSchedProc(t, oldBin, "old1", schedulerArgs(srv.URL(), "old1"), nil)
	old.start()
	crasher := newSchedProc(t, newBin, "new1", schedulerArgs(srv.URL(), "new1", "--window-busy", "0", "--record-lag", "1h"),
		[]string{"JETSCHED_CRASH_AT=" + step + ":2"})
	crasher.start()
	_, js := connectURLs(t, srv.URL())
	store := openStore(t, js)
	// Both hold shards before the herd falls due.
	err := testwait.Until(30*time.Second, "both instances hold shards", func() error {
		owners := map[string]int{}
		for _, owner := range store.LeaseOwners(context.Background()) {
			owners[owner]++
		}
		if owners["old1"] == 0 || owners["new1"] == 0 {
			return fmt.Errorf("leases by owner: %v", owners)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(3 * time.Second).Truncate(time.Second)
	ids := putOneShots(t, store, "herd", n, at)
	if !crashed(t, crasher, step+":2", 30*time.Second) {
		t.FailNow()
	}
	waitOneShotsEnded(t, store, ids, 60*time.Second)
	fires := newFireLog(t, js)
	if err := fires.syncRetry(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	s := oneShotSummary(t, name, fires, ids, at)
	t.Logf("%s: fires by instance %v", name, fires.instances)
	if s.Duplicates != 0 || s.Lost != 0 || fires.msgs != n {
		t.Errorf("%s: %d duplicates (e.g. %v), %d lost (e.g. %v), %d messages for %d one-shots", name, s.Duplicates, first(s.dupSlots, 5), s.Lost, first(s.lostSlots, 5), fires.msgs, n)
	}
	if fires.instances["new1"] == 0 {
		t.Errorf("new1 published no fire: the run did not mix the versions as meant")
	}
}

// TestMixedFleetEndedLists: a current instance alone fires a herd of
// one-shots and writes ended lists for them instead of their state
// records (--ended-lists, the default). An instance of the previous
// release, which does not read lists, joins: the current one writes no
// more lists, turns its lists into the records they stood for before it
// hands shards to the old one, and the old one finds every fire. A
// second herd in the mixed fleet is recorded one-shot by one-shot. Every
// one-shot is in the stream once and ends with an ended record of its
// own, and no list is left.
func TestMixedFleetEndedLists(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the previous release (./test.sh and CI run it)")
	}
	const name, n = "mixed-fleet-ended-lists", 300
	oldBin := previousBin.copyFor(t, "scheduler-previous", func() string { return buildAt(t, previousFormat) })
	newBin := schedulerBinary(t)
	srv := natstest.Start(t)
	cur := newSchedProc(t, newBin, "new1", schedulerArgs(srv.URL(), "new1", "--window-busy", "0"), nil)
	cur.start()
	_, js := connectURLs(t, srv.URL())
	store := openStore(t, js)
	shards, err := store.Shards(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	listed := func() (slots, lists int, err error) {
		for shard := range shards {
			ls, err := store.EndedLists(context.Background(), shard, nil)
			if err != nil {
				return 0, 0, err
			}
			lists += len(ls)
			for _, l := range ls {
				slots += len(l.List.Slots)
			}
		}
		return slots, lists, nil
	}
	atA := time.Now().Add(3 * time.Second).Truncate(time.Second)
	herdA := putOneShots(t, store, "lista", n, atA)
	err = testwait.Until(30*time.Second, "the first herd in ended lists", func() error {
		slots, lists, err := listed()
		if err == nil && slots < n {
			err = fmt.Errorf("%d of %d one-shots in %d lists", slots, n, lists)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range herdA {
		if _, _, err := store.GetState(context.Background(), id); !errors.Is(err, kvstore.ErrNotFound) {
			t.Fatalf("%s has a state record (err %v): its list was to stand for it", id, err)
		}
	}
	old := newSchedProc(t, oldBin, "old1", schedulerArgs(srv.URL(), "old1"), nil)
	old.start()
	err = testwait.Until(30*time.Second, "the old instance holds shards", func() error {
		for _, owner := range store.LeaseOwners(context.Background()) {
			if owner == "old1" {
				return nil
			}
		}
		return fmt.Errorf("no lease of old1 yet")
	})
	if err != nil {
		t.Fatal(err)
	}
	waitOneShotsEnded(t, store, herdA, 60*time.Second)
	err = testwait.Until(30*time.Second, "every list turned into records", func() error {
		slots, lists, err := listed()
		if err == nil && lists > 0 {
			err = fmt.Errorf("%d lists (%d slots) left", lists, slots)
		}
		return err
	})
	if err != nil {
		t.Error(err)
	}
	for _, id := range herdA {
		if st, _, err := store.GetState(context.Background(), id); err != nil || !st.Ended || st.Fires != 1 {
			t.Errorf("%s: record %+v (err %v), want its own, ended, one fire", id, st, err)
		}
	}
	atB := time.Now().Add(3 * time.Second).Truncate(time.Second)
	herdB := putOneShots(t, store, "listb", n, atB)
	waitOneShotsEnded(t, store, herdB, 60*time.Second)
	if slots, lists, err := listed(); err != nil || lists > 0 {
		t.Errorf("beside an old instance: %d lists (%d slots) written (err %v), want none", lists, slots, err)
	}
	fires := newFireLog(t, js)
	if err := fires.syncRetry(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	a := oneShotSummary(t, name+"-before", fires, herdA, atA)
	b := oneShotSummary(t, name+"-mixed", fires, herdB, atB)
	t.Logf("%s: fires by instance %v", name, fires.instances)
	if a.Duplicates+b.Duplicates != 0 || a.Lost+b.Lost != 0 || fires.msgs != 2*n {
		t.Errorf("%s: %d duplicates (e.g. %v), %d lost (e.g. %v), %d messages for %d one-shots", name, a.Duplicates+b.Duplicates,
			first(append(a.dupSlots, b.dupSlots...), 5), a.Lost+b.Lost, first(append(a.lostSlots, b.lostSlots...), 5), fires.msgs, 2*n)
	}
}
