package fires

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/compile"
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
	l.load.statesLoaded, l.load.specsLoaded, l.load.calsLoaded = true, true, true
	return l, fake
}

// addDue adds a plain every-second schedule id, due now, to l's entries
// (not to its due index).
func addDue(t testing.TB, l *loop, id string) *entry {
	t.Helper()
	compiled, err := compile.Compile(kvstore.Spec{Workflow: "wf", Every: "1s"}, id, nil, &l.e.interner)
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
		// want is shard 0's job the free worker must get, named wants.
		want  func(j windowJob) bool
		wants string
	}{
		{"a wanted check", func(l *loop) { l.win.want[0] = 1 }, func(j windowJob) bool {
			c, ok := j.(*checkJob)
			return ok && c.shard == 0
		}, "check"},
		{"a queued window", func(l *loop) {
			l.win.checked[0] = 1
			l.win.queue(addDue(t, l, idOn(l, 0)), 0)
		}, func(j windowJob) bool {
			f, ok := j.(*fireJob)
			return ok && f.shard == 0
		}, "window fire"},
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
			var j windowJob
			select {
			case j = <-l.work.windows:
			default:
				t.Fatal("dispatch sent nothing to the free worker")
			}
			if !tc.want(j) || len(l.work.slots) != 0 {
				t.Fatalf("the free worker got %T %+v (and %d slots): want shard 0's %s", j, j, len(l.work.slots), tc.wants)
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
	l.win.queue(old, 0)
	l.removeEntry(old) // no record: forgotten at once
	if _, ok := l.entries["a"]; ok {
		t.Fatal("the removed schedule is still an entry")
	}
	again := addDue(t, l, "a")
	l.win.queue(again, 0)
	l.win.sendWindows(l.e.cfg.Clock.Now())
	j := takeJob[*fireJob](t, l, "for the schedule made again")
	if len(j.items) != 1 {
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
	l.win.queue(en, 0)
	delete(l.win.checked, 0) // a failed window asked for a recheck
	l.win.sendWindows(l.e.cfg.Clock.Now())
	if en.queued || l.parked["a"] || len(l.win.held[0]) != 1 {
		t.Fatalf("queued %v parked %v held %v: want held for the check", en.queued, l.parked["a"], l.win.held[0])
	}
	takeJob[*checkJob](t, l, "once the shard's check was asked for")
	l.work.busy--
	l.win.onWindow(&checkResult{shard: 0, gen: 1})
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
		name   string
		flight func(l *loop) // marks shard 0's job in flight
		result windowResult  // its result
	}{
		{"fire", func(l *loop) { l.win.firing[0] = true }, &fireResult{shard: 0, mark: windowMark{rev: 7, seq: 1}}},
		{"record", func(l *loop) { l.win.recording[0] = true }, &recordResult{shard: 0}},
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
			if at := l.win.nextRetry(); !at.IsZero() {
				t.Fatalf("the loop's timer is set for the waiting check at %v: it would spin until the %s's result", at, tc.name)
			}
			l.work.busy--
			l.win.onWindow(tc.result)
			l.dispatch()
			if j := takeJob[*checkJob](t, l, "after the "+tc.name+"'s result"); j.shard != 0 || j.gen != 2 {
				t.Fatalf("after the %s's result: sent %+v, want shard 0's check for tenure 2", tc.name, j)
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
		l.win.sendRecords(l.e.cfg.Clock.Now(), true)
		select {
		case j := <-l.work.windows:
			t.Fatalf("sent %+v while the shard's check is in flight", j)
		default:
		}
		if at := l.win.nextRecord(); !at.IsZero() {
			t.Fatalf("the loop's timer is set for the waiting records at %v: it would spin until the check's result", at)
		}
		l.win.checking[0] = false
		l.win.sendRecords(l.e.cfg.Clock.Now(), true)
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
	takeJob[*checkJob](t, l, "at the start")
	l.win.queue(addDue(t, l, idOn(l, 0)), 0)
	l.win.want[0] = 1 // as gate asks while the check runs
	l.dispatch()
	select {
	case j := <-l.work.windows:
		t.Fatalf("sent %+v while the shard's check runs", j)
	default:
	}
	l.work.busy--
	l.win.onWindow(&checkResult{shard: 0, gen: 1})
	l.dispatch()
	takeJob[*fireJob](t, l, "after the check's result")
	select {
	case j := <-l.work.windows:
		t.Fatalf("also sent %+v after the check's result", j)
	default:
	}
	if gen, ok := l.win.want[0]; ok {
		t.Fatalf("a check of tenure %d is still wanted after it was done", gen)
	}
}

// takeJob takes the loop's next window job, which must be a J (when says
// when it should have been sent).
func takeJob[J windowJob](t *testing.T, l *loop, when string) J {
	t.Helper()
	var want J
	select {
	case j := <-l.work.windows:
		got, ok := j.(J)
		if !ok {
			t.Fatalf("%s: sent %T %+v, want a %T", when, j, j, want)
		}
		return got
	default:
		t.Fatalf("%s: nothing sent, want a %T", when, want)
	}
	return want
}

// A check that comes due for a shard no longer owned releases what it
// held; a lease change releases what waits for a check not running.
func TestHeldScheduleReleasedWhenTheLeaseChanges(t *testing.T) {
	l, fake, _ := windowLoop(t)
	l.win.holdFor("a", 0)
	l.win.want[0] = 1
	fake.Advance(20 * time.Second) // the lease is silent: not owned
	l.win.sendWindows(l.e.cfg.Clock.Now())
	if len(l.win.held[0]) != 0 {
		t.Fatalf("held %v after a deferred check", l.win.held[0])
	}
	if _, ok := l.index.Due(l.entries["a"]); !ok {
		t.Fatal("a deferred check did not send the schedule back to the due index")
	}
	l.index.Remove(l.entries["a"])
	l.win.holdFor("a", 0)
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

// sent is how many jobs of either kind l has sent and no worker took.
func sent(l *loop) int { return len(l.work.slots) + len(l.work.windows) }

// A schedule queued on a window with the decider's verdict is judged
// again when what the decider read changed meanwhile: its record told to
// skip the next slot after take, it goes back to the due index (the
// per-slot path records the skip) instead of into the window.
// Unchanged, it goes into the window; and what batchable checks apart
// from the decision (a completion report waiting) holds either way.
func TestQueuedVerdictJudgedAgainWhenTheRecordChanges(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(l *loop, en *entry)
		window bool
	}{
		{"unchanged", func(*loop, *entry) {}, true},
		{"a skip asked for since", func(l *loop, en *entry) {
			st := *en.view(&kvstore.State{})
			st.SkipNext = 1
			en.setState(&st, "i")
			en.stateRev = 7
		}, false},
		{"a completion report waits", func(l *loop, en *entry) {
			l.waiting[en.id] = append(l.waiting[en.id], doneReport{Schedule: en.id})
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, _, en := windowLoop(t)
			l.win.checked[0] = 1
			if !l.win.take(en, 0, l.e.cfg.Clock.Now()) {
				t.Fatal("take: the plain due slot was not queued")
			}
			tc.change(l, en)
			l.win.sendWindows(l.e.cfg.Clock.Now())
			if tc.window {
				if j := takeJob[*fireJob](t, l, "the window"); len(j.items) != 1 || !en.busy {
					t.Fatalf("job %+v, busy %v: want the schedule in the window", j, en.busy)
				}
				return
			}
			if en.busy || en.queued {
				t.Fatalf("busy %v queued %v: want the schedule back in the due index", en.busy, en.queued)
			}
			if _, ok := l.index.Due(en); !ok {
				t.Fatal("the schedule is not in the due index")
			}
		})
	}
}
