package fires

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// The loop's bookkeeping of schedules waiting for a window, without NATS:
// every state it can leave a due schedule in (queued on a window, held
// for a shard's check, parked for a lease) leads back to dispatch. These
// paths are where a schedule could otherwise wait for ever.
func windowLoop(t testing.TB) (*loop, *clock.Fake, *entry) {
	t.Helper()
	l, fake := windowLoopOf(1)
	return l, fake, addDue(t, l, "a")
}

// windowLoopOf is a loaded loop of 4 workers over shards shards, all
// owned in their first tenure and none checked yet.
func windowLoopOf(shards int) (*loop, *clock.Fake) {
	c, fake := clock.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	cfg := Config{Clock: c, Workers: 4, WindowBusy: -1}.withDefaults()
	e := &Engine{cfg: cfg, log: slog.New(slog.DiscardHandler), shards: shards}
	e.leases = newLeases(nil, nil, "i", shards, 10*time.Second, c, e.log, func(kvstore.Event) {})
	for s := range shards {
		e.leases.held[s] = heldLease{renewed: c.Now(), gen: 1}
	}
	l := newLoop(e, nil, nil, nil, nil)
	l.statesLoaded, l.specsLoaded, l.calsLoaded = true, true, true
	return l, fake
}

// addDue adds a plain every-second schedule id, due now, to l's entries
// (not to its due index).
func addDue(t testing.TB, l *loop, id string) *entry {
	t.Helper()
	compiled, err := kvstore.Spec{Workflow: "wf", Every: "1s"}.CompileShared(id, nil, &l.e.interner)
	if err != nil {
		t.Fatal(err)
	}
	en := &entry{id: id, compiled: schedOf(compiled, nil), target: target{workflow: "wf"}}
	en.setPlan(packedState{next: l.e.cfg.Clock.Now().UnixNano()})
	l.entries[id] = en
	return en
}

// idOn is an id that falls on shard of l's shards.
func idOn(l *loop, shard int) string {
	for i := 0; ; i++ {
		if id := fmt.Sprintf("s%d", i); kvstore.ShardOf(id, l.e.shards) == shard {
			return id
		}
	}
}

// With one worker free and a due slot in the index, dispatch gives the
// worker to what already waits: a shard's wanted check (it holds the whole
// shard), else a window queued before. Given to the due slot instead, they
// waited for ever while due slots kept every worker busy: a fleet
// restarted on a starved box left whole shards unfired for over a minute.
func TestWaitingWindowWorkGoesBeforeDueSlots(t *testing.T) {
	cases := []struct {
		name string
		// setup leaves shard 0's work waiting; the due slot is on shard 1.
		setup func(l *loop)
		want  windowKind
	}{
		{"a wanted check", func(l *loop) { l.win.want[0] = 1 }, windowCheck},
		{"a queued window", func(l *loop) {
			l.win.checked[0] = 1
			l.queue(addDue(t, l, idOn(l, 0)), 0)
		}, windowFire},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := windowLoopOf(2)
			tc.setup(l)
			l.win.checked[1] = 1
			due := addDue(t, l, idOn(l, 1))
			due.noWindow = true // a slot for a worker of its own
			l.schedule(due)
			l.work.busy = l.e.cfg.Workers - 1
			l.dispatch()
			var j *windowJob
			select {
			case j = <-l.work.windows:
			default:
				t.Fatal("dispatch sent nothing to the free worker")
			}
			if j.shard != 0 || j.kind != tc.want || len(l.work.slots) != 0 {
				t.Fatalf("the free worker got window %+v (and %d slots): want shard 0's window of kind %d", j, len(l.work.slots), tc.want)
			}
			if _, ok := l.index.Due(due); !ok {
				t.Fatal("the due slot left the index without a worker")
			}
		})
	}
}

// A window queue holds entries: a schedule removed while queued (its
// spec deleted) leaves the queue with its entry, and the schedule made
// again under the same id is a new entry, queued once. The window takes
// the new one only.
func TestRemovedScheduleLeavesItsWindowQueue(t *testing.T) {
	l, _, old := windowLoop(t)
	l.win.checked[0] = 1
	l.queue(old, 0)
	l.removeEntry(old) // no record: forgotten at once
	if _, ok := l.entries["a"]; ok {
		t.Fatal("the removed schedule is still an entry")
	}
	again := addDue(t, l, "a")
	l.queue(again, 0)
	l.sendWindows(l.e.cfg.Clock.Now())
	var j *windowJob
	select {
	case j = <-l.work.windows:
	default:
		t.Fatal("no window sent for the schedule made again")
	}
	if j.kind != windowFire || len(j.items) != 1 {
		t.Fatalf("job %+v: want a window of the one schedule", j)
	}
	if old.busy || !again.busy {
		t.Fatalf("busy: removed entry %v, new entry %v; want only the new one in the window", old.busy, again.busy)
	}
}

// A schedule queued on a window whose shard must be checked again (a
// window of its own failed) is held for that check, and the check's
// success puts it back in the due index.
func TestQueuedScheduleHeldForTheRecheck(t *testing.T) {
	l, _, en := windowLoop(t)
	l.win.checked[0] = 1
	l.queue(en, 0)
	delete(l.win.checked, 0) // a failed window asked for a recheck
	l.sendWindows(l.e.cfg.Clock.Now())
	if en.queued || l.parked["a"] || len(l.win.held[0]) != 1 {
		t.Fatalf("queued %v parked %v held %v: want held for the check", en.queued, l.parked["a"], l.win.held[0])
	}
	var j *windowJob
	select {
	case j = <-l.work.windows:
	default:
		t.Fatal("no job sent: the shard's check was asked for but not sent")
	}
	if j.kind != windowCheck {
		t.Fatalf("job %+v: want the shard's check", j)
	}
	l.work.busy--
	l.onWindow(&windowResult{kind: windowCheck, shard: 0, gen: 1})
	if _, ok := l.index.Due(l.entries["a"]); !ok {
		t.Fatal("after the check the schedule is not in the due index")
	}
}

// A shard's check waits for the shard's window job in flight, a fire or a
// record of this instance, and goes once its result is in; the shard's
// deferred records wait for its check in turn. Sent beside each other,
// the check read the window record or the ended lists from before the
// job's write: its result set the shard's window mark back, so that the
// next window's claim conflicted with the instance's own record ("window
// claim did not finish", seen in a bench run after a lease changed hands
// at start), or dropped the ended list just written.
func TestCheckAndWindowJobsOfAShardDoNotOverlap(t *testing.T) {
	for _, tc := range []struct {
		name       string
		flight     func(l *loop) // marks shard 0's job in flight
		result *windowResult // its result
	}{
		{"fire", func(l *loop) { l.win.firing[0] = true }, &windowResult{kind: windowFire, shard: 0, mark: windowMark{rev: 7, seq: 1}}},
		{"record", func(l *loop) { l.win.recording[0] = true }, &windowResult{kind: windowRecord, shard: 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := windowLoopOf(1)
			l.win.checked[0] = 1
			tc.flight(l)
			l.work.busy = 1
			l.win.want[0] = 2 // the lease was taken anew meanwhile
			l.win.retryAt[0] = l.e.cfg.Clock.Now().Add(-time.Second)
			l.e.leases.held[0] = heldLease{renewed: l.e.cfg.Clock.Now(), gen: 2}
			l.dispatch()
			select {
			case j := <-l.work.windows:
				t.Fatalf("sent %+v beside the shard's %s in flight", j, tc.name)
			default:
			}
			if at := l.nextRetry(); !at.IsZero() {
				t.Fatalf("the loop's timer is set for the waiting check at %v: it would spin until the %s's result", at, tc.name)
			}
			l.work.busy--
			l.onWindow(tc.result)
			l.dispatch()
			select {
			case j := <-l.work.windows:
				if j.kind != windowCheck || j.shard != 0 || j.gen != 2 {
					t.Fatalf("after the %s's result: sent %+v, want shard 0's check for tenure 2", tc.name, j)
				}
			default:
				t.Fatalf("after the %s's result no check was sent", tc.name)
			}
			if tc.name == "fire" && l.win.mark[0].rev != 7 {
				t.Fatalf("window mark %+v: want the fire's revision 7", l.win.mark[0])
			}
		})
	}
	t.Run("records wait for the check", func(t *testing.T) {
		l, _ := windowLoopOf(1)
		l.win.checking[0] = true
		l.work.busy = 1
		it := &windowItem{j: &slotJob{id: idOn(l, 0)}}
		l.win.deferred[0] = []*windowItem{it}
		l.win.deferredAt[0] = l.e.cfg.Clock.Now()
		l.sendRecords(l.e.cfg.Clock.Now(), true)
		select {
		case j := <-l.work.windows:
			t.Fatalf("sent %+v while the shard's check is in flight", j)
		default:
		}
		if at := l.nextRecord(); !at.IsZero() {
			t.Fatalf("the loop's timer is set for the waiting records at %v: it would spin until the check's result", at)
		}
		l.win.checking[0] = false
		l.sendRecords(l.e.cfg.Clock.Now(), true)
		wantRecordJob(t, l, "once the check was done")
	})
}

// A shard's check asked for again while it runs (gate asks until its
// result is in) is not sent a second time, and no window of the shard
// goes while a check of it runs. Sent again, the check ran beside the
// window its result let go, read the window record from before that
// window's write, and set the mark back: the next window's claim
// conflicted with the instance's own record (seen at a million).
func TestCheckAskedForAgainWhileItRunsIsNotSentTwice(t *testing.T) {
	l, _ := windowLoopOf(1)
	l.win.want[0] = 1
	l.dispatch()
	wantJob(t, l, windowCheck, "at the start")
	l.queue(addDue(t, l, idOn(l, 0)), 0)
	l.win.want[0] = 1 // as gate asks while the check runs
	l.dispatch()
	select {
	case j := <-l.work.windows:
		t.Fatalf("sent %+v while the shard's check runs", j)
	default:
	}
	l.work.busy--
	l.onWindow(&windowResult{kind: windowCheck, shard: 0, gen: 1})
	l.dispatch()
	wantJob(t, l, windowFire, "after the check's result")
	select {
	case j := <-l.work.windows:
		t.Fatalf("also sent %+v after the check's result", j)
	default:
	}
	if gen, ok := l.win.want[0]; ok {
		t.Fatalf("a check of tenure %d is still wanted after it was done", gen)
	}
}

// wantJob takes the loop's next job, which must be a window job of kind.
func wantJob(t *testing.T, l *loop, kind windowKind, when string) {
	t.Helper()
	select {
	case j := <-l.work.windows:
		if j.kind != kind {
			t.Fatalf("%s: sent %+v, want a window job of kind %d", when, j, kind)
		}
	default:
		t.Fatalf("%s: nothing sent, want a window job of kind %d", when, kind)
	}
}

// A check that comes due for a shard no longer owned releases what it
// held; a lease change releases what waits for a check not running.
func TestHeldScheduleReleasedWhenTheLeaseChanges(t *testing.T) {
	l, fake, _ := windowLoop(t)
	l.holdFor("a", 0)
	l.win.want[0] = 1
	fake.Advance(20 * time.Second) // the lease is silent: not owned
	l.sendWindows(l.e.cfg.Clock.Now())
	if len(l.win.held[0]) != 0 {
		t.Fatalf("held %v after a deferred check", l.win.held[0])
	}
	if _, ok := l.index.Due(l.entries["a"]); !ok {
		t.Fatal("a deferred check did not send the schedule back to the due index")
	}
	l.index.Remove(l.entries["a"])
	l.holdFor("a", 0)
	l.unpark()
	if _, ok := l.index.Due(l.entries["a"]); !ok || len(l.win.held[0]) != 0 {
		t.Fatal("a lease change did not release the held schedule")
	}
}

// A window item's claim goes into its schedule's state record as a copy:
// a pointer into the item kept the item (its job, whose state pointed to
// the previous claim's item, and so on) alive for as long as the state,
// one more item at every fire. The soak found it: the live heap of its
// never-restarted instance grew by ~9 MiB a minute.
func TestWindowClaimIsACopy(t *testing.T) {
	it := &windowItem{claim: kvstore.Claim{Token: "t"}}
	c := it.claimCopy()
	if c == &it.claim || *c != it.claim {
		t.Fatalf("claimCopy = %p (%+v), the item's claim at %p: want an equal copy elsewhere", c, *c, &it.claim)
	}
}

// Which state records are checked against the fire stream before they are
// decided (lagging.go): a recurring schedule's due record, written by a
// settled window claim, that this instance did not write in its current
// tenure of the shard.
func TestMayLag(t *testing.T) {
	l, fake := windowLoopOf(1)
	l.e.cfg.Instance = "me"
	taken := fake.Now()
	l.e.leases.held[0] = heldLease{renewed: taken, gen: 1, taken: taken}
	fake.Advance(time.Second)
	now := fake.Now()
	windowClaim := func() *kvstore.Claim {
		return &kvstore.Claim{Slot: now.Add(-time.Second), Token: "t", Window: "0/7", Seq: 9}
	}
	due := func(change func(st *kvstore.State)) *kvstore.State {
		st := &kvstore.State{Next: now, Plan: "every 1s", Claim: windowClaim(), Owner: "other", UpdatedAt: now.Add(-time.Hour)}
		if change != nil {
			change(st)
		}
		return st
	}
	cases := []struct {
		name    string
		st      *kvstore.State
		planned bool
		oneShot bool
		want    bool
	}{
		{"another instance's record", due(nil), false, false, true},
		{"this instance's, from before its tenure", due(func(st *kvstore.State) { st.Owner = "me"; st.UpdatedAt = taken.Add(-time.Nanosecond) }), false, false, true},
		{"this instance's, in its tenure", due(func(st *kvstore.State) { st.Owner = "me"; st.UpdatedAt = taken }), false, false, false},
		{"no record", nil, false, false, false},
		{"a plan", due(nil), true, false, false},
		{"a one-shot", due(nil), false, true, false},
		{"not due", due(func(st *kvstore.State) { st.Next = now.Add(time.Nanosecond) }), false, false, false},
		{"ended", due(func(st *kvstore.State) { st.Ended = true }), false, false, false},
		{"no claim", due(func(st *kvstore.State) { st.Claim = nil }), false, false, false},
		{"a per-slot claim", due(func(st *kvstore.State) { st.Claim.Window = "" }), false, false, false},
		{"an unsettled window claim", due(func(st *kvstore.State) { st.Claim.Seq = 0 }), false, false, false},
		{"an extra slot's claim", due(func(st *kvstore.State) { st.Claim.SlotID = "a.trigger-1" }), false, false, false},
	}
	for _, tc := range cases {
		tg := target{workflow: "wf"}
		if tc.oneShot {
			tg.at = now.UnixNano()
		}
		if got := l.mayLag(tg, tc.st, tc.planned, 0, now); got != tc.want {
			t.Errorf("%s: mayLag = %v, want %v", tc.name, got, tc.want)
		}
	}
	// A shard not owned (any more): checked, whoever wrote it.
	fake.Advance(time.Hour)
	later := fake.Now()
	mine := due(func(st *kvstore.State) { st.Owner = "me"; st.UpdatedAt = later; st.Next = later })
	if !l.mayLag(target{}, mine, false, 0, later) {
		t.Error("a record of a shard not owned: mayLag = false, want true")
	}
}

// Which records a window may leave behind their fires (behind.go): a
// recurring schedule's record this instance wrote in its tenure, with a
// settled window claim, while the interval is set and every member reads
// such records.
func TestMayLeaveBehind(t *testing.T) {
	l, fake := windowLoopOf(1)
	l.e.cfg.Instance, l.e.cfg.StateInterval = "me", time.Minute
	l.e.leases.allRead.Store(true)
	now := fake.Now()
	ok := func() slotJob {
		return slotJob{id: "a", state: &kvstore.State{Next: now, Owner: "me", Claim: &kvstore.Claim{Slot: now.Add(-time.Second), Window: "0/1", Seq: 3}}}
	}
	cases := []struct {
		name   string
		change func(j *slotJob)
		want   bool
	}{
		{"its own record", nil, true},
		{"to be checked first", func(j *slotJob) { j.verify = true }, false},
		{"a plan", func(j *slotJob) { j.planned = true }, false},
		{"a one-shot", func(j *slotJob) { j.at = now.UnixNano() }, false},
		{"no state", func(j *slotJob) { j.state = nil }, false},
		{"another instance's", func(j *slotJob) { j.state.Owner = "other" }, false},
		{"a per-slot claim", func(j *slotJob) { j.state.Claim.Window = "" }, false},
		{"an unsettled claim", func(j *slotJob) { j.state.Claim.Seq = 0 }, false},
		{"an extra slot's claim", func(j *slotJob) { j.state.Claim.SlotID = "a.trigger-1" }, false},
		{"no interval", func(j *slotJob) { l.e.cfg.StateInterval = 0 }, false},
		{"a member that does not read them", func(j *slotJob) { l.e.leases.allRead.Store(false) }, false},
	}
	for _, tc := range cases {
		l.e.cfg.StateInterval = time.Minute
		l.e.leases.allRead.Store(true)
		j := ok()
		if tc.change != nil {
			tc.change(&j)
		}
		if got := l.mayLeaveBehind(&j); got != tc.want {
			t.Errorf("%s: mayLeaveBehind = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A record left behind goes to a worker (its write) only with its
// schedule out of the due index, so that dispatch never hands the same
// schedule to a second worker meanwhile; its result puts it back.
func TestRecordBehindJobHoldsItsSchedule(t *testing.T) {
	l, fake, en := windowLoop(t)
	l.e.cfg.StateInterval = time.Second
	now := fake.Now()
	en.setState(&kvstore.State{Next: now, Plan: en.compiled.Plan, Owner: l.e.cfg.Instance, UpdatedAt: now,
		Claim: &kvstore.Claim{Slot: now.Add(-time.Second), Token: "t", Window: "0/1", Seq: 5}}, l.e.cfg.Instance)
	en.stateRev = 7
	l.lagged(en, en.current(), now.Add(-2*time.Second))
	l.index.Set(en, now) // due again as its record is to be written
	en.noWindow = true   // for a worker of its own: dispatch's per-slot path
	l.win.checked[0] = 1
	l.sendBehind(now, false)
	l.dispatch()
	var jobs []*windowJob
	for len(l.work.windows) > 0 {
		jobs = append(jobs, <-l.work.windows)
	}
	if len(jobs) != 1 || jobs[0].kind != windowRecord {
		t.Fatalf("dispatch sent %d jobs (%+v): want the record's write alone", len(jobs), jobs)
	}
	if _, ok := l.index.Due(en); ok || !en.busy {
		t.Fatalf("busy %v, in the due index %v: want busy and out of the index while its record is written", en.busy, ok)
	}
	l.onWindowResult(windowResult{kind: windowRecord, shard: 0, results: []slotResult{{id: "a", state: en.current(), stateRev: 8}}})
	if _, ok := l.lag["a"]; ok || en.stateRev != 8 {
		t.Errorf("after the write: behind %v, revision %d; want written at 8", ok, en.stateRev)
	}
	if _, ok := l.index.Due(en); !ok {
		t.Error("after the write the schedule is not back in the due index")
	}
}

// A record left behind that comes due while its schedule is in a job (or
// on a window) waits for that job's result, not for the loop's timer: set
// for its past time, the timer woke the loop at once, turn after turn,
// until the job was done.
func TestRecordBehindOfABusyScheduleDoesNotSpinTheLoop(t *testing.T) {
	l, fake, en := windowLoop(t)
	l.e.cfg.StateInterval = time.Second
	l.e.leases.allRead.Store(true)
	now := fake.Now()
	en.setState(&kvstore.State{Next: now, Plan: en.compiled.Plan, Owner: l.e.cfg.Instance, UpdatedAt: now,
		Claim: &kvstore.Claim{Slot: now.Add(-time.Second), Token: "t", Window: "0/1", Seq: 5}}, l.e.cfg.Instance)
	en.stateRev = 7
	l.lagged(en, en.current(), now.Add(-2*time.Second)) // due: its wait has passed
	if at := l.nextBehind(); at.IsZero() || at.After(now) {
		t.Fatalf("next record at %v: want due by %v", at, now)
	}
	en.busy = true // its next slot is with a worker
	l.sendBehind(now, false)
	if n := sent(l); n != 0 {
		t.Fatalf("sent %d jobs for a schedule in a job", n)
	}
	if at := l.nextBehind(); !at.IsZero() {
		t.Fatalf("the loop's timer is set for the record at %v while its schedule is in a job: the loop would spin until the job is done", at)
	}
	l.work.busy++ // the job's result: its fire left the record behind again
	l.onResult(slotResult{id: "a", state: en.current(), stateRev: en.stateRev, lagged: true})
	if en.busy {
		t.Fatal("the job's result left the schedule busy")
	}
	l.sendBehind(now, false)
	wantRecordJob(t, l, "once its schedule was free")
}

// When the next record left behind is due follows what decides it: not
// while the shard's record job is out, again at its result, and at once
// when the shard is handed back.
func TestNextRecordBehindFollowsWhatChangesIt(t *testing.T) {
	l, fake, en := windowLoop(t)
	l.e.cfg.StateInterval = 10 * time.Second
	l.e.leases.allRead.Store(true)
	now := fake.Now()
	en.setState(&kvstore.State{Next: now.Add(time.Second), Plan: en.compiled.Plan, Owner: l.e.cfg.Instance, UpdatedAt: now,
		Claim: &kvstore.Claim{Slot: now, Token: "t", Window: "0/1", Seq: 5}}, l.e.cfg.Instance)
	en.stateRev = 7
	l.lagged(en, en.current(), now)
	due := now.Add(10 * time.Second) // shard 0 waits the whole interval
	if at := l.nextBehind(); !at.Equal(due) {
		t.Fatalf("next record at %v, want %v", at, due)
	}
	l.sendBehind(now.Add(time.Second), false) // not due: nothing sent
	if n := sent(l); n != 0 {
		t.Fatalf("sent %d jobs before the record was due", n)
	}

	// The shard's record job in flight: nothing of it is due until its
	// result, which brings the record back.
	l.win.recording[0] = true
	if at := l.nextBehind(); !at.IsZero() {
		t.Fatalf("next record at %v while the shard's record job is out: want none", at)
	}
	l.work.busy++
	l.onWindowResult(windowResult{kind: windowRecord, shard: 0})
	if at := l.nextBehind(); !at.Equal(due) {
		t.Fatalf("after the record job's result the next record is at %v, want %v", at, due)
	}

	// A hand-back makes the shard's records due at once.
	l.onFlush(flushReq{shards: []int{0}, done: make(chan struct{})})
	if at := l.nextBehind(); at.After(now) {
		t.Fatalf("after a hand-back the next record is at %v, want due by %v", at, now)
	}
	l.sendBehind(now, false)
	wantRecordJob(t, l, "for the handed-back shard")
}

// wantRecordJob fails t unless l has sent a worker one record's write
// (when says when it should have).
func wantRecordJob(t *testing.T, l *loop, when string) {
	t.Helper()
	select {
	case j := <-l.work.windows:
		if j.kind != windowRecord || len(j.records) != 1 {
			t.Fatalf("sent %+v %s: want one record's write", j, when)
		}
	default:
		t.Fatalf("no record's write sent %s", when)
	}
}

// Each shard's records left behind wait their own share of the interval:
// all of it for shard 0, less for each shard after, never half of it or
// less, so that a fleet's records are never more than the interval behind
// and never all come due in the same instant.
func TestBehindDelaySpreadsShards(t *testing.T) {
	for _, interval := range []time.Duration{time.Second, 10 * time.Second, time.Minute, MaxStateInterval} {
		for _, shards := range []int{1, 2, 7, 64, 1024} {
			prev := time.Duration(0)
			for shard := range shards {
				d := behindDelay(interval, shard, shards)
				if d > interval || d <= interval/2 {
					t.Fatalf("interval %s, shard %d of %d: delay %s, want within (%s, %s]", interval, shard, shards, d, interval/2, interval)
				}
				if shard == 0 && d != interval {
					t.Fatalf("interval %s, shard 0 of %d: delay %s, want the whole interval", interval, shards, d)
				}
				if shard > 0 && d >= prev {
					t.Fatalf("interval %s, shards %d: shard %d waits %s, shard %d %s: want each shard less than the one before", interval, shards, shard, d, shard-1, prev)
				}
				prev = d
			}
		}
	}
	// A shard number past the count (a lease bucket resized under a
	// running loop) still waits more than half the interval.
	if d := behindDelay(time.Second, 99, 4); d <= time.Second/2 {
		t.Errorf("shard 99 of 4: delay %s, want more than half the interval", d)
	}
}

// Records left behind by the same window turn in two shards come due at
// their shards' own instants: the shard that waits less is written first,
// the other only once its own wait has passed.
func TestRecordsBehindComeDuePerShard(t *testing.T) {
	l, fake := windowLoopOf(64)
	l.e.cfg.StateInterval = 10 * time.Second
	l.e.leases.allRead.Store(true)
	now := fake.Now()
	first, last := idOn(l, 0), idOn(l, 63)
	for _, id := range []string{first, last} {
		en := addDue(t, l, id)
		en.setState(&kvstore.State{Next: now.Add(time.Hour), Plan: en.compiled.Plan, Owner: l.e.cfg.Instance, UpdatedAt: now,
			Claim: &kvstore.Claim{Slot: now, Token: "t", Window: "0/1", Seq: 5}}, l.e.cfg.Instance)
		l.lagged(en, en.current(), now)
	}
	sent := func(at time.Time) []int {
		l.sendBehind(at, false)
		var shards []int
		for len(l.work.windows) > 0 {
			j := <-l.work.windows
			l.work.busy--
			if j.kind != windowRecord {
				t.Fatalf("sent %+v: want record writes only", j)
			}
			shards = append(shards, j.shard)
		}
		return shards
	}
	early, late := behindDelay(10*time.Second, 63, 64), behindDelay(10*time.Second, 0, 64)
	if got := l.nextBehind(); !got.Equal(now.Add(early)) {
		t.Errorf("next record due at %v, want %v (shard 63's wait)", got, now.Add(early))
	}
	if got := sent(now.Add(early - time.Millisecond)); len(got) != 0 {
		t.Fatalf("before any wait passed: sent shards %v", got)
	}
	if got := sent(now.Add(early)); len(got) != 1 || got[0] != 63 {
		t.Fatalf("at shard 63's wait: sent shards %v, want [63]", got)
	}
	if got := sent(now.Add(late - time.Millisecond)); len(got) != 0 {
		t.Fatalf("before shard 0's wait: sent shards %v", got)
	}
	if got := sent(now.Add(late)); len(got) != 1 || got[0] != 0 {
		t.Fatalf("at the whole interval: sent shards %v, want [0]", got)
	}
}

// A record job that fails (NATS unreachable, the lease guard closed) is
// not sent again before windowRetry, even when every record is due at once
// (a member that cannot be read): sent again as soon as it failed, it made
// a busy loop for as long as the outage lasted. A shard this instance no
// longer owns keeps its records for when it owns it again, and sends none.
func TestFailedRecordsBehindWaitBeforeTheirRetry(t *testing.T) {
	l, fake := windowLoopOf(2)
	l.e.cfg.StateInterval = 10 * time.Second
	l.e.leases.allRead.Store(false) // a member not read: every record due now
	now := fake.Now()
	ids := []string{idOn(l, 0), idOn(l, 1)}
	for _, id := range ids {
		en := addDue(t, l, id)
		en.setState(&kvstore.State{Next: now.Add(time.Hour), Plan: en.compiled.Plan, Owner: l.e.cfg.Instance, UpdatedAt: now,
			Claim: &kvstore.Claim{Slot: now, Token: "t", Window: "0/1", Seq: 5}}, l.e.cfg.Instance)
		l.lagged(en, en.current(), now)
	}
	delete(l.e.leases.held, 1) // shard 1 lost
	sent := func(at time.Time) []int {
		l.sendBehind(at, false)
		var shards []int
		for len(l.work.windows) > 0 {
			j := <-l.work.windows
			shards = append(shards, j.shard)
		}
		return shards
	}
	if got := sent(now); len(got) != 1 || got[0] != 0 {
		t.Fatalf("sent shards %v, want [0] (shard 1 is not owned)", got)
	}
	if next := l.nextBehind(); !next.IsZero() {
		t.Errorf("next record due at %v with shard 0's out and shard 1 not owned: want none", next)
	}
	// Shard 0's job fails: its record is queued again, not sent at once.
	l.onWindowResult(windowResult{kind: windowRecord, shard: 0, err: errors.New("nats: connection closed"),
		results: []slotResult{{id: ids[0], state: l.entries[ids[0]].current(), stateRev: 0}}})
	if got := sent(now); len(got) != 0 {
		t.Fatalf("right after the failure: sent shards %v", got)
	}
	if next := l.nextBehind(); !next.Equal(now.Add(windowRetry)) {
		t.Errorf("next record due at %v, want the retry at %v", next, now.Add(windowRetry))
	}
	if got := sent(now.Add(windowRetry)); len(got) != 1 || got[0] != 0 {
		t.Fatalf("at the retry: sent shards %v, want [0]", got)
	}
	if _, ok := l.lag[ids[1]]; !ok || len(l.lagQ[1]) != 1 {
		t.Errorf("shard 1's record left behind was dropped: mark %v, queue %v", ok, l.lagQ[1])
	}
}

// sent is how many jobs of either kind l has sent and no worker took.
func sent(l *loop) int { return len(l.work.slots) + len(l.work.windows) }
