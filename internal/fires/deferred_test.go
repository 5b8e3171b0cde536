package fires_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/control"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// These tests cover the state records of one-shots fired in a window,
// which are written after the window (Config.RecordLag, see
// deferRecords): published first, recorded later, never fired twice,
// whoever decides them before their records are written.

// oneShots writes n one-shots due at at, all of one shard (so that one
// window claims them all), and returns their ids.
func (h *harness) oneShots(prefix string, n int, at time.Time, spec func(i int, s *kvstore.Spec)) []string {
	shards, err := h.store.Shards(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	ids := make([]string, 0, n)
	for k := 0; len(ids) < n; k++ {
		if id := fmt.Sprintf("%s-%04d", prefix, k); kvstore.ShardOf(id, shards) == 0 {
			ids = append(ids, id)
		}
	}
	for i := range ids {
		s := kvstore.Spec{Workflow: "wf", At: &at}
		if spec != nil {
			spec(i, &s)
		}
		h.put(ids[i], s)
	}
	return ids
}

// waitEnded waits until every id's state record has ended, and returns
// the records.
func (h *harness) waitEnded(ids []string, timeout time.Duration) map[string]kvstore.State {
	h.t.Helper()
	out := map[string]kvstore.State{}
	err := testwait.Until(timeout, "every one-shot's record ended", func() error {
		for _, id := range ids {
			if _, ok := out[id]; ok {
				continue
			}
			st, _, err := h.store.GetState(context.Background(), id)
			if err != nil {
				return fmt.Errorf("%s: %w", id, err)
			}
			if !st.Ended {
				return fmt.Errorf("%s: record %+v has not ended", id, st)
			}
			out[id] = st
		}
		return nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// allFires waits until the harness has read every message the fire
// stream holds now, so that a duplicate published before this call is
// seen.
func (h *harness) allFires() {
	h.t.Helper()
	stream, err := h.js.Stream(context.Background(), "SCHED_FIRES")
	if err != nil {
		h.t.Fatal(err)
	}
	info, err := stream.Info(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	last := info.State.LastSeq
	if last == 0 {
		return // nothing published yet
	}
	err = testwait.Until(10*time.Second, fmt.Sprintf("the fire stream read up to %d", last), func() error {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, f := range h.fires {
			if f.seq >= last {
				return nil
			}
		}
		return fmt.Errorf("%d fires read", len(h.fires))
	})
	if err != nil {
		h.t.Fatal(err)
	}
}

// onceEach asserts that every id fired exactly once.
func (h *harness) onceEach(ids []string) {
	h.t.Helper()
	h.allFires()
	for _, id := range ids {
		if n := len(h.of(id)); n != 1 {
			h.t.Errorf("%s fired %d times, want once", id, n)
		}
	}
}

// A herd of one-shots in windows: the window's state records are left
// for later (the step says so), and then written, each with its fire's
// sequence as the settled claim; every one-shot fired once.
func TestOneShotRecordsFollowTheirWindow(t *testing.T) {
	t.Parallel()
	h := setup(t)
	steps := make(chan fires.Step, 1024)
	h.engine(fires.Config{WindowBusy: -1, StepHook: stepsTo(steps)})
	ids := h.oneShots("herd", 40, time.Now().Add(time.Second).Truncate(time.Millisecond), nil)
	waitStep(t, 15*time.Second, steps, fires.StepWindowDeferred)
	records := h.waitEnded(ids, 20*time.Second)
	h.onceEach(ids)
	for _, id := range ids {
		st, f := records[id], h.of(id)
		if c := st.Claim; len(f) == 1 && (c == nil || c.Window == "" || c.Seq != f[0].seq) {
			t.Errorf("%s: record's claim %+v, want the window's claim with the fire's sequence %d", id, c, f[0].seq)
		}
		if st.Fires != 1 {
			t.Errorf("%s: record counts %d fires, want 1", id, st.Fires)
		}
	}
}

// A scheduler that stops writes the records it left for later before
// Stop returns; until then its fired one-shots are not reported overdue,
// and schedule get shows them fired (the stream says so).
func TestOneShotRecordsWrittenAtStop(t *testing.T) {
	t.Parallel()
	h := setup(t)
	steps := make(chan fires.Step, 1024)
	cfg := fires.Config{Store: h.store, WindowBusy: -1, RecordLag: time.Hour, StepHook: stepsTo(steps)}
	e, err := fires.NewWith(cfg, fires.RecordsOnLag())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	testwait.Done(t, 10*time.Second, "the engine's index", e.Ready())
	ids := h.oneShots("stop", 20, time.Now().Add(time.Second).Truncate(time.Millisecond), nil)
	waitStep(t, 15*time.Second, steps, fires.StepWindowDeferred)
	h.onceEach(ids)
	// Fired, their records an hour away: not overdue.
	waitNoneOverdue(t, e)
	if st, _, err := h.store.GetState(context.Background(), ids[0]); err == nil {
		t.Errorf("%s: record %+v written before Stop, an hour early", ids[0], st)
	}
	// What an operator sees of one meanwhile (schedule get): it fired.
	spec, err := h.store.GetSpec(context.Background(), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if v := (readmodel.Model{Store: h.store, Planner: fires.Planner{}}).Info(context.Background(), nil, spec, nil); v.State == nil || !v.State.Ended || v.LastStatus != string(kvstore.TickDispatched) {
		t.Errorf("%s: schedule get says state %+v, last status %q, want it ended and dispatched", ids[0], v.State, v.LastStatus)
	}
	if err := e.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if st, _, err := h.store.GetState(context.Background(), id); err != nil || !st.Ended {
			t.Errorf("%s: after Stop, record %+v (err %v), want it ended", id, st, err)
		}
	}
}

// A scheduler dies after two windows of one-shots of one shard were
// published and before their records were written (its connection closed
// at the second window's step), so that its window record lists only the
// second. The one that takes its shards over finds every fire: the second
// window's slots through the window record, the first's because the
// stream drops its publishes as duplicates, or because it looks them up.
// Each fired once, and each record ended.
func TestOneShotRecordsLostWithTheirScheduler(t *testing.T) {
	t.Parallel()
	h := setup(t)
	cfg := fires.Config{WindowBusy: -1, LeaseTTL: 2 * time.Second, ClaimTTL: 2 * time.Second}
	ids := h.crashBetweenWindows(cfg, nil)
	cfg.Instance = "survivor"
	h.engine(cfg)
	h.waitEnded(ids, 30*time.Second)
	h.onceEach(ids)
}

// The same death, and no scheduler for longer than the fire stream's
// duplicate window: the survivor looks each first-window one-shot's slot
// up in the stream before anything else, so that it neither fires it
// again nor, for one late beyond its misfire threshold, records it
// missed.
func TestOneShotRecordsLostBeyondTheDuplicateWindow(t *testing.T) {
	t.Parallel()
	const dupWindow = 3 * time.Second
	h := setupWith(t, jsstore.SetupConfig{DuplicateWindow: dupWindow})
	cfg := fires.Config{WindowBusy: -1, LeaseTTL: 2 * time.Second, ClaimTTL: time.Second}
	ids := h.crashBetweenWindows(cfg, func(i int, s *kvstore.Spec) {
		if i%2 == 0 {
			s.MisfireThreshold = "1s" // late beyond it: the misfire path
		}
	})
	last := h.of(ids[len(ids)-1])[0].meta.ScheduledAt
	// The survivor starts once the stream no longer drops a publish of
	// those slots as a duplicate.
	waitPastDuplicates(t, last, dupWindow)
	cfg.Instance = "survivor"
	h.engine(cfg)
	for id, st := range h.waitEnded(ids, 30*time.Second) {
		if st.Missed != 0 {
			t.Errorf("%s: record counts %d missed slots, want 0: it fired", id, st.Missed)
		}
		// The stream is the ledger of a fired slot: a ledger entry in
		// sched_ticks would say something else (missed).
		slot := h.of(id)[0].meta.SlotID
		switch tick, err := h.store.GetTick(context.Background(), slot); {
		case err == nil:
			t.Errorf("%s: its fired slot has a sched_ticks entry %s (%s), want none", id, tick.Status, tick.Reason)
		case !errors.Is(err, kvstore.ErrNotFound):
			t.Fatal(err)
		}
	}
	h.onceEach(ids)
}

// waitPastDuplicates waits until the fire stream's duplicate window
// (twice over) has passed last: a publish of a slot fired then is stored
// again.
func waitPastDuplicates(t *testing.T, last time.Time, dupWindow time.Duration) {
	t.Helper()
	err := testwait.Until(30*time.Second, "the duplicate window past the fires", func() error {
		if wait := time.Until(last.Add(2 * dupWindow)); wait > 0 {
			return fmt.Errorf("%s to go", wait.Round(time.Millisecond))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// crashBetweenWindows runs a crasher (cfg, its records written only
// after an hour) on two groups of one-shots of one shard, due a second
// apart, and kills it (closes its connection) when the second group's
// window has been published with its records left for later. It returns
// the one-shots, every one of them fired once.
func (h *harness) crashBetweenWindows(cfg fires.Config, spec func(i int, s *kvstore.Spec)) []string {
	h.t.Helper()
	nc, js := h.srv.Connect(h.t)
	store, err := jsstore.Open(context.Background(), js, kvstore.Layout{})
	if err != nil {
		h.t.Fatal(err)
	}
	crashed := make(chan struct{})
	var deferred atomic.Int32
	cfg.Store, cfg.Instance, cfg.RecordLag = store, "crasher", time.Hour
	cfg.StepHook = func(s fires.Step) {
		if s == fires.StepWindowDeferred && deferred.Add(1) == 2 {
			nc.Close()
			close(crashed)
		}
	}
	e := h.startLoading(cfg, fires.RecordsOnLag())
	testwait.Done(h.t, 10*time.Second, "the crasher's index", e.Ready())
	// A whole second ahead at least, so that each group is indexed
	// before it falls due and goes out in one window.
	at := time.Now().Add(2 * time.Second).Truncate(time.Second)
	all := h.oneShots("first", 30, at, spec)
	all = append(all, h.oneShots("second", 30, at.Add(time.Second), spec)...)
	testwait.Done(h.t, 15*time.Second, "the crasher's death after its second window", crashed)
	h.onceEach(all)
	if h.t.Failed() {
		h.t.FailNow()
	}
	return all
}

// setupWith is setup on buckets and streams made with cfg.
func setupWith(t *testing.T, cfg jsstore.SetupConfig) *harness {
	t.Helper()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	ctx := context.Background()
	if err := jsstore.Setup(ctx, js, cfg); err != nil {
		t.Fatal(err)
	}
	store, err := jsstore.Open(ctx, js, kvstore.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, srv: srv, js: js, store: store, added: make(chan struct{}, 1)}
	h.subscribeFires()
	return h
}

// Operators act on one-shots whose records are still to be written: a
// pause written into the bucket (the record created by the operator, as
// `nats kv put` or an API pause of a schedule without a record does) is
// kept, with the fire merged into it; a removed one keeps no record; the
// others end as usual; nothing fires twice.
func TestOneShotRecordsAfterOperatorActions(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	steps := make(chan fires.Step, 1024)
	e, err := fires.NewWith(fires.Config{Store: h.store, WindowBusy: -1, RecordLag: time.Hour, StepHook: stepsTo(steps)}, fires.RecordsOnLag())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	testwait.Done(t, 10*time.Second, "the engine's index", e.Ready())
	ids := h.oneShots("op", 10, time.Now().Add(time.Second).Truncate(time.Millisecond), nil)
	waitStep(t, 15*time.Second, steps, fires.StepWindowDeferred)
	h.onceEach(ids)
	paused, removed, rest := ids[0], ids[1], ids[2:]
	pause := &kvstore.Pause{Note: "operator", At: time.Now().UTC().Truncate(time.Millisecond)}
	if _, err := h.store.CreateState(ctx, paused, kvstore.State{Paused: pause}); err != nil {
		t.Fatal(err)
	}
	if err := h.store.DeleteSpec(ctx, removed); err != nil {
		t.Fatal(err)
	}
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	switch st, _, err := h.store.GetState(ctx, paused); {
	case err != nil:
		t.Errorf("%s: %v", paused, err)
	case !st.Ended || st.Paused == nil || st.Paused.Note != "operator" || st.Fires != 1:
		t.Errorf("%s: record %+v, want it ended with its one fire and the operator's pause kept", paused, st)
	}
	h.waitEnded(rest, 10*time.Second)
	err = testwait.Until(10*time.Second, removed+"'s record gone", func() error {
		if st, _, err := h.store.GetState(ctx, removed); !errors.Is(err, kvstore.ErrNotFound) {
			return fmt.Errorf("record %+v (err %v)", st, err)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	h.onceEach(ids)
}

// Operators act on fired one-shots whose records are still to be written,
// with records that come due meanwhile: one moved to a later time (a
// re-armed reminder) fires again at the new time, once; one triggered by
// hand (the API's trigger, which creates its record) fires once more as a
// trigger. Both records end with both fires; the others of the window
// fire once. No path leaves the moved or the triggered one quietly ended.
func TestOneShotActedOnWhileItsRecordWaits(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	steps := make(chan fires.Step, 1024)
	h.engine(fires.Config{WindowBusy: -1, RecordLag: 2 * time.Second, StepHook: stepsTo(steps)}, fires.RecordsOnLag())
	ids := h.oneShots("moved", 5, time.Now().Add(time.Second).Truncate(time.Millisecond), nil)
	waitStep(t, 15*time.Second, steps, fires.StepWindowDeferred)
	h.onceEach(ids)
	moved, triggered := ids[0], ids[1]
	for _, id := range ids[:2] {
		if st, _, err := h.store.GetState(ctx, id); !errors.Is(err, kvstore.ErrNotFound) {
			t.Logf("%s's record was written before the operator acted (%+v, err %v): tested on a written record", id, st, err)
		}
	}
	if _, err := (control.Control{Store: h.store}).Trigger(ctx, triggered, "again"); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(3 * time.Second).Truncate(time.Millisecond)
	h.put(moved, kvstore.Spec{Workflow: "wf", At: &later})
	f := h.waitFires(moved, 20*time.Second, func(f []fireMsg) bool { return len(f) >= 2 })
	if !f[1].meta.ScheduledAt.Equal(later) {
		t.Errorf("%s's second fire is for %v, want the moved time %v", moved, f[1].meta.ScheduledAt, later)
	}
	f = h.waitFires(triggered, 20*time.Second, func(f []fireMsg) bool { return len(f) >= 2 })
	if f[1].meta.Reason != kvstore.ReasonTrigger {
		t.Errorf("%s's second fire has reason %q, want %q", triggered, f[1].meta.Reason, kvstore.ReasonTrigger)
	}
	h.waitEnded(ids[2:], 20*time.Second)
	for _, id := range ids[:2] {
		// The second fire's record may follow its own window.
		err := testwait.Until(20*time.Second, id+"'s record with both fires", func() error {
			st, _, err := h.store.GetState(ctx, id)
			if err != nil || !st.Ended || st.Fires != 2 || len(st.Triggers) != 0 {
				return fmt.Errorf("record %+v (err %v), want it ended with two fires and no trigger pending", st, err)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}
	h.allFires()
	for _, id := range ids[:2] {
		if n := len(h.of(id)); n != 2 {
			t.Errorf("%s fired %d times, want twice", id, n)
		}
	}
	h.onceEach(ids[2:])
}
