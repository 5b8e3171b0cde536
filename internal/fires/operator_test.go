package fires_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/control"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestRandomOperator plays a seeded, reproducible sequence of operator
// actions and forged records against two running schedulers: add, update,
// rm (through the store and straight in the bucket), re-add, pause (with
// and without an end), resume, trigger, skip, backfill, invalid specs and
// forged state records (far-future and far-past next, garbage, a deleted
// record, a claim "expiring" in 2099, a 100 KB trigger note). Then it
// checks the no-silent-stop invariant for every schedule: each is paused,
// ended, invalid (with an event), or fires a slot after the chaos; and no
// slot is in the fire stream twice.
//
// JETSCHED_OPERATOR_SEED picks the seed (default fixed, so CI replays the
// same run), JETSCHED_OPERATOR_BUDGET the chaos time (default 6s).
func TestRandomOperator(t *testing.T) {
	t.Parallel()
	seed := uint64(20261130)
	if v := os.Getenv("JETSCHED_OPERATOR_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("JETSCHED_OPERATOR_SEED: %v", err)
		}
		seed = s
	}
	budget := 6 * time.Second
	if v := os.Getenv("JETSCHED_OPERATOR_BUDGET"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("JETSCHED_OPERATOR_BUDGET: %v", err)
		}
		budget = d
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("FAILED with seed %d: rerun with JETSCHED_OPERATOR_SEED=%d go test -run TestRandomOperator ./pkg/fire", seed, seed)
		}
	})
	h := setup(t)
	ctx := context.Background()
	// A short duplicate window, so that a slot published twice more than
	// 3 s apart shows up as two messages instead of being absorbed.
	s, err := h.js.Stream(ctx, "SCHED_FIRES")
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	cfg.Duplicates = 3 * time.Second
	if _, err := h.js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	ev := collectEvents(t, h)
	for _, name := range []string{"op-a", "op-b"} {
		h.engine(fires.Config{Instance: name, ClaimTTL: time.Second, LeaseTTL: 2 * time.Second})
	}
	op := &operator{t: t, h: h, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), model: map[string]*modelled{}}
	end := time.Now().Add(budget)
	n := 0
	for time.Now().Before(end) {
		op.step(ctx)
		n++
		// Operators act at a human pace, several at once: this spacing is
		// the workload, not a wait for a result.
		time.Sleep(time.Duration(op.rng.IntN(60)) * time.Millisecond)
	}
	chaosEnd := time.Now()
	t.Logf("seed %d: %d operator actions in %s: %v", seed, n, budget, op.counts)
	op.checkInvariant(ctx, chaosEnd, ev)
	op.checkNoDuplicates()
}

// modelled is what the operator last did to one id.
type modelled struct {
	exists  bool
	valid   bool
	at      time.Time // a one-shot's time (zero: recurring)
	written time.Time // last spec write
}

type operator struct {
	t      *testing.T
	h      *harness
	rng    *rand.Rand
	model  map[string]*modelled
	counts map[string]int
	// backfills moves back in time, so that no two backfills replay the
	// same slot (a replay asked twice is deliberately fired twice).
	backfills int
}

var operatorIDs = [...]string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"}

func (o *operator) step(ctx context.Context) {
	if o.counts == nil {
		o.counts = map[string]int{}
	}
	id := operatorIDs[o.rng.IntN(len(operatorIDs))]
	m := o.model[id]
	if m == nil {
		m = &modelled{}
		o.model[id] = m
	}
	c := control.Control{Store: o.h.store}
	now := time.Now()
	actions := []struct {
		name   string
		weight int
		do     func() error
	}{
		{"put", 6, func() error {
			spec := o.randomSpec(now)
			if _, err := o.h.store.PutSpec(ctx, id, spec); err != nil {
				return err
			}
			*m = modelled{exists: true, valid: true, written: time.Now()}
			if spec.At != nil {
				m.at = *spec.At
			}
			return nil
		}},
		{"put-invalid", 1, func() error {
			kv, err := o.h.js.KeyValue(ctx, "sched_specs")
			if err != nil {
				return err
			}
			if _, err := kv.Put(ctx, id, []byte(`{"workflow":"wf","every":"often"}`)); err != nil {
				return err
			}
			*m = modelled{exists: true, written: time.Now()}
			return nil
		}},
		{"rm", 2, func() error {
			m.exists = false
			return ignore(o.h.store.DeleteSpec(ctx, id), kvstore.ErrNotFound)
		}},
		{"kv-del-spec", 1, func() error {
			m.exists = false
			kv, err := o.h.js.KeyValue(ctx, "sched_specs")
			if err != nil {
				return err
			}
			return kv.Delete(ctx, id)
		}},
		{"pause", 2, func() error {
			var until time.Time
			if o.rng.IntN(2) == 0 {
				until = now.Add(time.Duration(300+o.rng.IntN(2000)) * time.Millisecond)
			}
			_, err := c.Pause(ctx, id, "random operator", until)
			return err
		}},
		{"resume", 2, func() error { _, err := c.Resume(ctx, id); return err }},
		{"trigger", 2, func() error { _, err := c.Trigger(ctx, id, "random operator"); return err }},
		{"skip", 1, func() error { _, err := c.Skip(ctx, id, 1+o.rng.IntN(2)); return err }},
		{"backfill", 1, func() error {
			o.backfills++
			to := now.Add(-time.Duration(o.backfills) * 10 * time.Second)
			_, err := c.Backfill(ctx, id, to.Add(-5*time.Second), to, 100, "")
			return err
		}},
		{"forge-future", 1, func() error {
			return o.forge(ctx, id, func(st *kvstore.State) { st.Next = time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC) })
		}},
		{"forge-past", 1, func() error {
			return o.forge(ctx, id, func(st *kvstore.State) { st.Next, st.Claim = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), nil })
		}},
		{"forge-claim", 1, func() error {
			return o.forge(ctx, id, func(st *kvstore.State) {
				st.Claim = &kvstore.Claim{Slot: now.UTC(), Token: "forged", Owner: "mallory", At: now.UTC(), Expires: time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)}
			})
		}},
		{"forge-note", 1, func() error {
			return o.forge(ctx, id, func(st *kvstore.State) {
				st.Triggers = append(st.Triggers, kvstore.Trigger{At: now.UTC(), Note: strings.Repeat("n", 100<<10)})
			})
		}},
		{"forge-garbage", 1, func() error { return o.putState(ctx, id, []byte(`{"next": 5, "plan": [}`)) }},
		{"del-state", 1, func() error {
			kv, err := o.h.js.KeyValue(ctx, "sched_state")
			if err != nil {
				return err
			}
			return kv.Delete(ctx, id)
		}},
	}
	total := 0
	for _, a := range actions {
		total += a.weight
	}
	pick := o.rng.IntN(total)
	for _, a := range actions {
		if pick -= a.weight; pick >= 0 {
			continue
		}
		err := a.do()
		// Refusals are part of the game (pause of a removed schedule,
		// resume of one not paused, a state to forge that does not exist
		// yet); anything else is a failure.
		if err != nil && !errors.Is(err, kvstore.ErrNotFound) && !errors.Is(err, kvstore.ErrInvalid) && !errors.Is(err, errNoState) {
			o.t.Fatalf("%s %s: %v", a.name, id, err)
		}
		o.counts[a.name]++
		return
	}
}

func ignore(err, want error) error {
	if errors.Is(err, want) {
		return nil
	}
	return err
}

// randomSpec is a short-period recurrence, or a one-shot due soon.
func (o *operator) randomSpec(now time.Time) kvstore.Spec {
	misfire := [...]string{"", "skip", "fire_once", "fire_all"}[o.rng.IntN(4)]
	switch o.rng.IntN(5) {
	case 0:
		return kvstore.Spec{Workflow: "wf", Every: "1s", Misfire: kvstore.MisfirePolicy(misfire)}
	case 1:
		return kvstore.Spec{Workflow: "wf", Every: "2s", Misfire: kvstore.MisfirePolicy(misfire)}
	case 2:
		return kvstore.Spec{Workflow: "wf", Cron: "* * * * * *", TZ: "Europe/Paris", Misfire: kvstore.MisfirePolicy(misfire)}
	case 3:
		return kvstore.Spec{Workflow: "wf", Cron: "*/2 * * * * *", TZ: "America/New_York", Misfire: kvstore.MisfirePolicy(misfire)}
	}
	at := now.Add(time.Duration(200+o.rng.IntN(2000)) * time.Millisecond).UTC().Truncate(time.Millisecond)
	return kvstore.Spec{Workflow: "wf", At: &at, Misfire: kvstore.MisfirePolicy(misfire)}
}

var errNoState = errors.New("no state record to forge yet")

// forge rewrites id's state record by CAS, as someone with write access to
// sched_state could.
func (o *operator) forge(ctx context.Context, id string, change func(*kvstore.State)) error {
	for range 20 {
		st, rev, err := o.h.store.GetState(ctx, id)
		if errors.Is(err, kvstore.ErrNotFound) {
			return errNoState
		}
		if err != nil && !errors.Is(err, kvstore.ErrInvalid) {
			return err
		}
		change(&st)
		if _, err := o.h.store.UpdateState(ctx, id, st, rev); err == nil || !errors.Is(err, kvstore.ErrConflict) {
			return err
		}
	}
	return nil // the engine kept writing: this forgery lost, as it may
}

func (o *operator) putState(ctx context.Context, id string, raw []byte) error {
	kv, err := o.h.js.KeyValue(ctx, "sched_state")
	if err != nil {
		return err
	}
	_, err = kv.Put(ctx, id, raw)
	return err
}

// events collects the observer events by kind and schedule.
type events struct {
	mu sync.Mutex
	by map[string][]kvstore.Event // "<kind> <id>"
	ch chan struct{}
}

func collectEvents(t *testing.T, h *harness) *events {
	t.Helper()
	ev := &events{by: map[string][]kvstore.Event{}, ch: make(chan struct{}, 1)}
	sub, err := h.js.Conn().Subscribe("sched.event.>", func(m *nats.Msg) {
		var e kvstore.Event
		if json.Unmarshal(m.Data, &e) != nil {
			return
		}
		ev.mu.Lock()
		key := string(e.Kind) + " " + e.Schedule
		ev.by[key] = append(ev.by[key], e)
		ev.mu.Unlock()
		select {
		case ev.ch <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return ev
}

// since reports whether an event of kind about id came at or after t.
func (ev *events) since(kind kvstore.EventKind, id string, t time.Time) bool {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	for _, e := range ev.by[string(kind)+" "+id] {
		if !e.At.Before(t.Add(-time.Second)) { // (the scheduler's clock, not ours)
			return true
		}
	}
	return false
}

// checkInvariant: every schedule that exists is paused, ended, invalid
// with an event, or fires a slot scheduled after the chaos ended.
func (o *operator) checkInvariant(ctx context.Context, chaosEnd time.Time, ev *events) {
	t := o.t
	var wg sync.WaitGroup
	for _, id := range operatorIDs {
		m := o.model[id]
		if m == nil || !m.exists {
			continue
		}
		wg.Go(func() {
			what, err := o.settle(ctx, id, m, chaosEnd, ev)
			if err != nil {
				t.Errorf("schedule %s (%s): %v", id, what, err)
				return
			}
			t.Logf("schedule %s: %s", id, what)
		})
	}
	wg.Wait()
}

// settle waits, with a deadline, for the positive sign of id's state.
func (o *operator) settle(ctx context.Context, id string, m *modelled, chaosEnd time.Time, ev *events) (string, error) {
	deadline := time.Now().Add(30 * time.Second)
	if !m.valid {
		for !ev.since(kvstore.EventInvalid, id, m.written) {
			if time.Now().After(deadline) {
				return "invalid", errors.New("no invalid event for its invalid spec")
			}
			select {
			case <-ev.ch:
			case <-time.After(100 * time.Millisecond):
			}
		}
		return "invalid, reported", nil
	}
	for {
		st, _, err := o.h.store.GetState(ctx, id)
		switch {
		case err == nil && st.Paused != nil && (st.Paused.Until.IsZero() || st.Paused.Until.After(deadline)):
			return "paused: " + st.Paused.Note, nil
		case err == nil && st.Ended:
			return "ended (a one-shot)", nil
		}
		if f, ok := o.firedAfter(id, chaosEnd); ok {
			return fmt.Sprintf("fires (slot %s, %s)", f.meta.SlotID, reasonOr(f.meta.Reason)), nil
		}
		if time.Now().After(deadline) {
			js, _ := json.Marshal(st)
			return "silent", fmt.Errorf("no fire after the chaos ended, not paused, not ended; state %s (err %v)", js, err)
		}
		select {
		case <-o.h.added:
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func reasonOr(r string) string {
	if r == "" {
		return "regular"
	}
	return r
}

// firedAfter finds a fire of id whose slot (or, for an extra slot, whose
// dispatch) is after t.
func (o *operator) firedAfter(id string, t time.Time) (fireMsg, bool) {
	for _, f := range o.h.of(id) {
		if f.meta.ScheduledAt.After(t) || f.meta.DispatchedAt.After(t) && f.meta.Reason != "" {
			return f, true
		}
	}
	return fireMsg{}, false
}

// checkNoDuplicates: every slot id is in the fire stream once.
func (o *operator) checkNoDuplicates() {
	o.h.mu.Lock()
	defer o.h.mu.Unlock()
	seen := map[string]uint64{}
	dups := 0
	for _, f := range o.h.fires {
		if first, ok := seen[f.meta.SlotID]; ok {
			dups++
			o.t.Errorf("slot %s in the stream twice: seq %d and %d", f.meta.SlotID, first, f.seq)
			continue
		}
		seen[f.meta.SlotID] = f.seq
	}
	o.t.Logf("%d fires, %d slots, %d duplicates", len(o.h.fires), len(seen), dups)
}
