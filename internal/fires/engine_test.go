package fires_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// harness is a real nats-server with jetsched's buckets, and a recorder of
// every fire message the stream holds.
type harness struct {
	t     *testing.T
	srv   *natstest.Server
	js    jetstream.JetStream
	store *jsstore.Store

	mu    sync.Mutex
	fires []fireMsg
	added chan struct{}
}

type fireMsg struct {
	meta    kvstore.FireMeta
	subject string
	data    []byte
	seq     uint64
	// expect is the fire's Nats-Expected-Stream, which only a publish
	// again (after a first one not acknowledged) carries.
	expect string
}

func setup(t *testing.T) *harness {
	t.Helper()
	srv := natstest.Start(t)
	js, store := srv.Store(t)
	h := &harness{t: t, srv: srv, js: js, store: store, added: make(chan struct{}, 1)}
	h.subscribeFires()
	return h
}

// subscribeFires records every message of SCHED_FIRES (again, after the
// stream was deleted and created anew).
func (h *harness) subscribeFires() {
	t := h.t
	t.Helper()
	cons, err := h.js.OrderedConsumer(context.Background(), "SCHED_FIRES", jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		meta, err := kvstore.ParseFireMeta(m.Headers())
		if err != nil {
			t.Errorf("fire without valid headers: %v", err)
			return
		}
		md, _ := m.Metadata()
		h.mu.Lock()
		h.fires = append(h.fires, fireMsg{meta: meta, subject: m.Subject(), data: m.Data(), seq: md.Sequence.Stream,
			expect: m.Headers().Get(jetstream.ExpectedStreamHeader)})
		h.mu.Unlock()
		select {
		case h.added <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.Stop)
}

func (h *harness) engine(cfg fires.Config, hooks ...fires.Hook) *fires.Engine {
	h.t.Helper()
	e := h.startLoading(cfg, hooks...)
	testwait.Done(h.t, 10*time.Second, "the engine's index", e.Ready())
	return e
}

func (h *harness) put(id string, spec kvstore.Spec) {
	h.t.Helper()
	if _, err := h.store.PutSpec(context.Background(), id, spec); err != nil {
		h.t.Fatal(err)
	}
}

// waitFires waits until cond holds for the recorded fires of schedule id.
func (h *harness) waitFires(id string, timeout time.Duration, cond func([]fireMsg) bool) []fireMsg {
	h.t.Helper()
	deadline := time.After(timeout)
	for {
		got := h.of(id)
		if cond(got) {
			return got
		}
		select {
		case <-h.added:
		case <-deadline:
			h.t.Fatalf("timed out after %s; fires of %s so far: %d", timeout, id, len(got))
		}
	}
}

func (h *harness) of(id string) []fireMsg {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []fireMsg
	for _, f := range h.fires {
		if f.meta.ScheduleID == id {
			out = append(out, f)
		}
	}
	return out
}

// checkCadence asserts slots step by exactly `every` with no duplicate.
func checkCadence(t *testing.T, fires []fireMsg, every time.Duration) {
	t.Helper()
	seen := map[string]bool{}
	for i, f := range fires {
		if seen[f.meta.SlotID] {
			t.Fatalf("duplicate fire of slot %s", f.meta.SlotID)
		}
		seen[f.meta.SlotID] = true
		if i == 0 {
			continue
		}
		if gap := f.meta.ScheduledAt.Sub(fires[i-1].meta.ScheduledAt); gap != every {
			t.Fatalf("slot %d at %v follows %v: gap %v, want %v (lost or repeated slot)",
				i, f.meta.ScheduledAt, fires[i-1].meta.ScheduledAt, gap, every)
		}
	}
}

// waitTick waits for a slot's ledger entry.
func (h *harness) waitTick(slotID string) kvstore.Tick {
	h.t.Helper()
	var tick kvstore.Tick
	err := testwait.Until(10*time.Second, "the tick of slot "+slotID, func() error {
		var err error
		tick, err = h.store.SlotEntry(context.Background(), slotID)
		return err
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return tick
}

func atLeast(n int) func([]fireMsg) bool { return func(f []fireMsg) bool { return len(f) >= n } }

func TestEngineFiresEverySecond(t *testing.T) {
	t.Parallel()
	h := setup(t)
	h.engine(fires.Config{})
	input := json.RawMessage(`{"hello":"world"}`)
	h.put("tick", kvstore.Spec{Workflow: "wf", Every: "1s", TZ: "Europe/Paris", Input: input})

	fires := h.waitFires("tick", 10*time.Second, atLeast(3))
	checkCadence(t, fires, time.Second)
	paris, _ := time.LoadLocation("Europe/Paris")
	for _, f := range fires {
		if f.subject != "sched.fire.wf.tick" {
			t.Errorf("subject %q, want sched.fire.wf.tick", f.subject)
		}
		if string(f.data) != string(input) {
			t.Errorf("body %q, want the input unchanged", f.data)
		}
		if f.meta.Workflow != "wf" || f.meta.Reason != "" {
			t.Errorf("headers: %+v", f.meta)
		}
		if f.meta.SlotID != kvstore.SlotID("tick", f.meta.ScheduledAt) {
			t.Errorf("Nats-Msg-Id %q is not the slot id of %v", f.meta.SlotID, f.meta.ScheduledAt)
		}
		if _, off := f.meta.ScheduledAt.Zone(); off != func() int { _, o := f.meta.ScheduledAt.In(paris).Zone(); return o }() {
			t.Errorf("Sched-Scheduled-At %v is not in the schedule's zone", f.meta.ScheduledAt)
		}
		if f.meta.ScheduledAt.Truncate(time.Second) != f.meta.ScheduledAt {
			t.Errorf("slot %v is not on the 1s grid", f.meta.ScheduledAt)
		}
		if f.meta.DispatchedAt.Before(f.meta.ScheduledAt) {
			t.Errorf("dispatched %v before scheduled %v", f.meta.DispatchedAt, f.meta.ScheduledAt)
		}
		if f.expect != "" {
			t.Errorf("the fire carries Nats-Expected-Stream %q: stored and delivered with it, for nothing (its acknowledgement's stream is checked)", f.expect)
		}
	}
	// Every fire has its ledger entry (written right after the publish).
	for _, f := range fires {
		tick := h.waitTick(f.meta.SlotID)
		if tick.Status != kvstore.TickDispatched || tick.Seq != f.seq {
			t.Errorf("tick %+v, want dispatched at seq %d", tick, f.seq)
		}
	}
}

func TestEngineRestartKeepsCadence(t *testing.T) {
	t.Parallel()
	h := setup(t)
	first := h.engine(fires.Config{Instance: "first"})
	h.put("tick", kvstore.Spec{Workflow: "wf", Every: "1s"})
	before := h.waitFires("tick", 10*time.Second, atLeast(2))
	first.Stop(context.Background())

	// Stay down across at least one slot, then start a new instance on
	// the same buckets.
	last := before[len(before)-1].meta.ScheduledAt
	// The second instance's clock reads 2.2 s past the last fire: the
	// slots in between fell due while no engine ran.
	n := len(h.of("tick"))
	h.engine(fires.Config{Instance: "second", Clock: clock.Clock{Offset: max(time.Until(last.Add(2200*time.Millisecond)), 0)}})

	fires := h.waitFires("tick", 10*time.Second, atLeast(n+3))
	checkCadence(t, fires, time.Second)
	var bySecond int
	for _, f := range fires {
		if f.meta.Instance == "second" {
			bySecond++
		}
	}
	if bySecond < 3 {
		t.Fatalf("second instance fired %d slots, want >= 3", bySecond)
	}
}

func TestEngineDeletedSpecStopsFiring(t *testing.T) {
	t.Parallel()
	h := setup(t)
	h.engine(fires.Config{})
	h.put("gone", kvstore.Spec{Workflow: "wf", Every: "1s"})
	h.put("stays", kvstore.Spec{Workflow: "wf", Every: "1s"})
	h.waitFires("gone", 10*time.Second, atLeast(1))
	if err := h.store.DeleteSpec(context.Background(), "gone"); err != nil {
		t.Fatal(err)
	}
	n := len(h.of("gone"))
	// Three more fires of the other schedule prove time moved on.
	m := len(h.of("stays"))
	h.waitFires("stays", 10*time.Second, atLeast(m+3))
	// One fire may have been in flight when the delete landed.
	if got := len(h.of("gone")); got > n+1 {
		t.Fatalf("deleted schedule fired %d more times", got-n)
	}
	// The engine removes the state when it sees the delete.
	testwait.Eventually(t, 5*time.Second, "the state of the deleted schedule removed", func() bool {
		_, _, err := h.store.GetState(context.Background(), "gone")
		return errors.Is(err, kvstore.ErrNotFound)
	})
}

func TestEngineTakesOverAbandonedClaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name      string
		published string // the subject the dead owner published on before dying ("": it did not)
	}{
		{"crash after claim, before publish", ""},
		{"crash after publish, before the claim was settled", "sched.fire.wf.hourly"},
		{"a scheduler of the workflow-only subjects crashed after publish, before its ledger entry", "sched.fire.wf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := setup(t)
			// Aligned to the epoch: the slots are whole hours.
			spec := kvstore.Spec{Workflow: "wf", Every: "1h", Align: kvstore.AlignEpoch}
			h.put("hourly", spec)
			// A dead instance claimed the 09:00 slot 40s ago and vanished.
			now := time.Now().UTC()
			slot := now.Truncate(time.Hour)
			claim := &kvstore.Claim{Slot: slot, Token: "dead-token", Owner: "dead", At: now.Add(-40 * time.Second), Expires: now.Add(-10 * time.Second)}
			st := kvstore.State{Next: slot.Add(time.Hour), Plan: compile.Plan(spec), Claim: claim, Fires: 1}
			if _, err := h.store.CreateState(ctx, "hourly", st); err != nil {
				t.Fatal(err)
			}
			if tc.published != "" {
				natstest.PublishFire(t, h.js, natstest.Fire{Subject: tc.published, Schedule: "hourly", Workflow: "wf", At: slot, Instance: "dead"})
			}
			steps := make(chan fires.Step, 64)
			h.engine(fires.Config{Instance: "survivor", StepHook: stepsTo(steps)})

			if tc.published == "sched.fire.wf.hourly" {
				// The stream says the slot is out: settled, nothing published.
				waitStep(t, 10*time.Second, steps, fires.StepClaimSettled)
			} else {
				waitStep(t, 10*time.Second, steps, fires.StepAfterLedger)
			}
			fires := h.waitFires("hourly", 5*time.Second, atLeast(1))
			if len(fires) != 1 {
				t.Fatalf("%d fire messages for the slot, want exactly 1", len(fires))
			}
			if tc.published != "" && fires[0].meta.Reason != "" {
				t.Fatalf("the stored fire has reason %q: the dead owner's message should be the one kept", fires[0].meta.Reason)
			}
			if tc.published != "sched.fire.wf" { // a fire on the workflow-only subject is in the ledger by its entry
				tick := h.waitTick(kvstore.SlotID("hourly", slot))
				if tick.Status != kvstore.TickDispatched || tick.Seq != fires[0].seq {
					t.Fatalf("ledger entry %+v, want dispatched at seq %d", tick, fires[0].seq)
				}
			}
			if tc.published == "" && fires[0].meta.Reason != "takeover" {
				t.Fatalf("reason %q, want takeover", fires[0].meta.Reason)
			}
			owner := "survivor"
			if tc.published == "sched.fire.wf.hourly" {
				owner = "dead" // settled as it was: no takeover
			}
			st2, _, err := h.store.GetState(ctx, "hourly")
			if err != nil || st2.Claim.Owner != owner || !st2.Next.Equal(slot.Add(time.Hour)) {
				t.Fatalf("state after the check: %+v, %v", st2, err)
			}
		})
	}
}

func TestEngineReportsInvalidSpecsAndKeepsGoing(t *testing.T) {
	t.Parallel()
	h := setup(t)
	nc := h.js.Conn()
	events, err := nc.SubscribeSync("sched.event.invalid.>")
	if err != nil {
		t.Fatal(err)
	}
	defer events.Unsubscribe()
	h.engine(fires.Config{})
	h.put("good", kvstore.Spec{Workflow: "wf", Every: "1s"})
	specs, err := h.js.KeyValue(context.Background(), "sched_specs")
	if err != nil {
		t.Fatal(err)
	}
	garbage := map[string]struct{ value, field string }{
		"not-json":    {"\x00\x01 not json", "spec"},
		"wrong-type":  {`{"workflow":"wf","every":5}`, "every"},
		"never-fires": {`{"workflow":"wf","cron":"0 0 30 2 *"}`, "cron"},
		"bad-zone":    {`{"workflow":"wf","cron":"* * * * *","tz":"Atlantis/Capital"}`, "tz"},
		// Issue 52: times out of the supported range (one of them pinned
		// a core: its plan did not fit the engine's Unix nanoseconds).
		"past-unix-ns": {`{"workflow":"wf","at":"2262-04-11T23:47:17Z"}`, "at"},
		"year-10000":   {`{"workflow":"wf","every":"1h","start":"9999-12-31T23:00:00-05:00"}`, "start"},
		"zero-at":      {`{"workflow":"wf","at":"0001-01-01T00:00:00Z"}`, "at"},
		"old-anchor":   {`{"workflow":"wf","every":"1h","anchor":"1000-01-01T00:00:00Z"}`, "anchor"},
		// Past one-shots before Unix nanoseconds, or at the epoch (0: none
		// inside the engine), stayed "planned" for ever, never recorded.
		"ancient-at": {`{"workflow":"wf","at":"1600-01-01T00:00:00Z"}`, "at"},
		"epoch-at":   {`{"workflow":"wf","at":"1970-01-01T00:00:00Z"}`, "at"},
	}
	for id, g := range garbage {
		if _, err := specs.Put(context.Background(), id, []byte(g.value)); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]kvstore.Event{}
	for len(seen) < len(garbage) {
		m, err := events.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("invalid events so far %v: %v", seen, err)
		}
		var ev kvstore.Event
		if err := json.Unmarshal(m.Data, &ev); err != nil {
			t.Fatal(err)
		}
		seen[ev.Schedule] = ev
	}
	for id, g := range garbage {
		if ev := seen[id]; ev.Field != g.field || ev.Reason == "" {
			t.Errorf("%s: event %+v, want field %q and a reason", id, ev, g.field)
		}
	}
	// The good schedule keeps firing; the bad ones never fire.
	n := len(h.of("good"))
	h.waitFires("good", 10*time.Second, atLeast(n+2))
	for id := range garbage {
		if f := h.of(id); len(f) != 0 {
			t.Errorf("invalid schedule %s fired %d times", id, len(f))
		}
	}
}

func TestEngineStopsALimitedSchedule(t *testing.T) {
	t.Parallel()
	h := setup(t)
	h.engine(fires.Config{})
	// The limit counts the recurrence's fire times from start, so start
	// in the future to see both.
	start := time.Now().Truncate(time.Second).Add(2 * time.Second)
	h.put("twice", kvstore.Spec{Workflow: "wf", Every: "1s", Start: &start, Limit: 2})
	h.put("clock", kvstore.Spec{Workflow: "wf", Every: "1s"})
	fires := h.waitFires("twice", 10*time.Second, atLeast(2))
	n := len(h.of("clock"))
	h.waitFires("clock", 10*time.Second, atLeast(n+2))
	if got := len(h.of("twice")); got != 2 {
		t.Fatalf("limited schedule fired %d times, want 2", got)
	}
	checkCadence(t, fires, time.Second)
	st, _, err := h.store.GetState(context.Background(), "twice")
	if err != nil || !st.Ended {
		t.Fatalf("state %+v (%v), want ended", st, err)
	}
}

// TestEngineJitter: a jittered schedule's fires are published at their
// slot's time plus the offset its slot id fixes, never before, and say so
// in Sched-Jitter; the slots and their ids are the schedule's own.
func TestEngineJitter(t *testing.T) {
	t.Parallel()
	h := setup(t)
	h.engine(fires.Config{})
	const jitter = 700 * time.Millisecond
	h.put("jit", kvstore.Spec{Workflow: "wf", Every: "1s", Jitter: "700ms"})
	got := h.waitFires("jit", 15*time.Second, atLeast(3))
	checkCadence(t, got, time.Second)
	jittered := 0
	for _, f := range got {
		want := compile.JitterOffset("jit", f.meta.ScheduledAt, jitter)
		if f.meta.Jitter != want {
			t.Errorf("slot %v: Sched-Jitter %v, want %v", f.meta.ScheduledAt, f.meta.Jitter, want)
		}
		if f.meta.DispatchedAt.Before(f.meta.ScheduledAt.Add(want)) {
			t.Errorf("slot %v dispatched at %v, before its jittered instant (+%v)", f.meta.ScheduledAt, f.meta.DispatchedAt, want)
		}
		if f.meta.SlotID != kvstore.SlotID("jit", f.meta.ScheduledAt) {
			t.Errorf("Nats-Msg-Id %q is not the slot id of %v", f.meta.SlotID, f.meta.ScheduledAt)
		}
		if want > 0 {
			jittered++
		}
	}
	if jittered == 0 {
		t.Errorf("no fire of %d had an offset", len(got))
	}
}
