package fires

import (
	"errors"
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

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
		if got := l.win.mayLeaveBehind(&j); got != tc.want {
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
	l.win.lagged(en, en.current(), now.Add(-2*time.Second))
	l.index.Set(en, now) // due again as its record is to be written
	en.noWindow = true   // for a worker of its own: dispatch's per-slot path
	l.win.checked[0] = 1
	l.win.sendBehind(now, false)
	l.dispatch()
	var jobs []windowJob
	for len(l.work.windows) > 0 {
		jobs = append(jobs, <-l.work.windows)
	}
	if _, ok := jobs[0].(*recordJob); len(jobs) != 1 || !ok {
		t.Fatalf("dispatch sent %d jobs (%+v): want the record's write alone", len(jobs), jobs)
	}
	if _, ok := l.index.Due(en); ok || !en.busy {
		t.Fatalf("busy %v, in the due index %v: want busy and out of the index while its record is written", en.busy, ok)
	}
	l.win.apply(&recordResult{shard: 0, results: []slotResult{{id: "a", state: en.current(), stateRev: 8}}})
	if _, ok := l.win.lag.marks["a"]; ok || en.stateRev != 8 {
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
	l.win.lagged(en, en.current(), now.Add(-2*time.Second)) // due: its wait has passed
	if at := l.win.nextBehind(); at.IsZero() || at.After(now) {
		t.Fatalf("next record at %v: want due by %v", at, now)
	}
	en.busy = true // its next slot is with a worker
	l.win.sendBehind(now, false)
	if n := sent(l); n != 0 {
		t.Fatalf("sent %d jobs for a schedule in a job", n)
	}
	if at := l.win.nextBehind(); !at.IsZero() {
		t.Fatalf("the loop's timer is set for the record at %v while its schedule is in a job: the loop would spin until the job is done", at)
	}
	l.work.busy++ // the job's result: its fire left the record behind again
	l.onResult(slotResult{id: "a", state: en.current(), stateRev: en.stateRev, lagged: true})
	if en.busy {
		t.Fatal("the job's result left the schedule busy")
	}
	l.win.sendBehind(now, false)
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
	l.win.lagged(en, en.current(), now)
	due := now.Add(10 * time.Second) // shard 0 waits the whole interval
	if at := l.win.nextBehind(); !at.Equal(due) {
		t.Fatalf("next record at %v, want %v", at, due)
	}
	l.win.sendBehind(now.Add(time.Second), false) // not due: nothing sent
	if n := sent(l); n != 0 {
		t.Fatalf("sent %d jobs before the record was due", n)
	}

	// The shard's record job in flight: nothing of it is due until its
	// result, which brings the record back.
	l.win.recording[0] = true
	if at := l.win.nextBehind(); !at.IsZero() {
		t.Fatalf("next record at %v while the shard's record job is out: want none", at)
	}
	l.work.busy++
	l.win.apply(&recordResult{shard: 0})
	if at := l.win.nextBehind(); !at.Equal(due) {
		t.Fatalf("after the record job's result the next record is at %v, want %v", at, due)
	}

	// A hand-back makes the shard's records due at once.
	l.onFlush(flushReq{shards: []int{0}, done: make(chan struct{})})
	if at := l.win.nextBehind(); at.After(now) {
		t.Fatalf("after a hand-back the next record is at %v, want due by %v", at, now)
	}
	l.win.sendBehind(now, false)
	wantRecordJob(t, l, "for the handed-back shard")
}

// wantRecordJob fails t unless l has sent a worker one record's write
// (when says when it should have).
func wantRecordJob(t *testing.T, l *loop, when string) {
	t.Helper()
	if j := takeJob[*recordJob](t, l, when); len(j.records) != 1 {
		t.Fatalf("sent %+v %s: want one record's write", j, when)
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
		l.win.lagged(en, en.current(), now)
	}
	sent := func(at time.Time) []int {
		l.win.sendBehind(at, false)
		var shards []int
		for len(l.work.windows) > 0 {
			j := takeJob[*recordJob](t, l, "a record write")
			l.work.busy--
			shards = append(shards, j.shard)
		}
		return shards
	}
	early, late := behindDelay(10*time.Second, 63, 64), behindDelay(10*time.Second, 0, 64)
	if got := l.win.nextBehind(); !got.Equal(now.Add(early)) {
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
		l.win.lagged(en, en.current(), now)
	}
	delete(l.e.leases.held, 1) // shard 1 lost
	sent := func(at time.Time) []int {
		l.win.sendBehind(at, false)
		var shards []int
		for len(l.work.windows) > 0 {
			j := takeJob[*recordJob](t, l, "a record write")
			shards = append(shards, j.shard)
		}
		return shards
	}
	if got := sent(now); len(got) != 1 || got[0] != 0 {
		t.Fatalf("sent shards %v, want [0] (shard 1 is not owned)", got)
	}
	if next := l.win.nextBehind(); !next.IsZero() {
		t.Errorf("next record due at %v with shard 0's out and shard 1 not owned: want none", next)
	}
	// Shard 0's job fails: its record is queued again, not sent at once.
	l.win.apply(&recordResult{shard: 0, err: errors.New("nats: connection closed"),
		results: []slotResult{{id: ids[0], state: l.entries[ids[0]].current(), stateRev: 0}}})
	if got := sent(now); len(got) != 0 {
		t.Fatalf("right after the failure: sent shards %v", got)
	}
	if next := l.win.nextBehind(); !next.Equal(now.Add(windowRetry)) {
		t.Errorf("next record due at %v, want the retry at %v", next, now.Add(windowRetry))
	}
	if got := sent(now.Add(windowRetry)); len(got) != 1 || got[0] != 0 {
		t.Fatalf("at the retry: sent shards %v, want [0]", got)
	}
	if _, ok := l.win.lag.marks[ids[1]]; !ok || len(l.win.lag.queue[1]) != 1 {
		t.Errorf("shard 1's record left behind was dropped: mark %v, queue %v", ok, l.win.lag.queue[1])
	}
}
