package fires_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/account"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// backlogWatch is an Observer that keeps the due backlog and the events.
type backlogWatch struct {
	claimCounter
	mu      sync.Mutex
	n, peak int
	oldest  time.Duration
	events  map[kvstore.EventKind]int
}

func (b *backlogWatch) DueBacklog(n int, oldest time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n, b.oldest, b.peak = n, oldest, max(b.peak, n)
}

func (b *backlogWatch) Event(kind kvstore.EventKind) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.events[kind]++
}

// state is the backlog now, its peak and the count of events of kind.
func (b *backlogWatch) state(kind kvstore.EventKind) (n, peak int, oldest time.Duration, events int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n, b.peak, b.oldest, b.events[kind]
}

// TestOverloadShedsByPolicyAndRecovers starves an engine (its due work is
// held from the workers, as a process without CPU would hold it) while
// schedules every second under skip, fire_once and fire_all fall behind,
// then gives it back: the backlog is a measurement and an overloaded
// event while it lasts, each schedule is one entry however late (it
// does not grow with the slots), every slot owed is then fired once or
// recorded missed with its reason (none unaccounted), the backlog falls
// to 0 with a caught_up event, and each schedule fires its regular slots
// again.
func TestOverloadShedsByPolicyAndRecovers(t *testing.T) {
	h := setup(t)
	obs := &backlogWatch{events: map[kvstore.EventKind]int{}}
	release := make(chan struct{})
	e := h.engine(fires.Config{Observer: obs, Workers: 4}, fires.HoldDispatch(release))
	policies := []kvstore.MisfirePolicy{kvstore.MisfireSkip, kvstore.MisfireFireOnce, kvstore.MisfireFireAll}
	var ids []string
	for i := range 12 {
		id := fmt.Sprintf("busy-%02d", i)
		ids = append(ids, id)
		h.put(id, kvstore.Spec{Workflow: "wf", Every: "1s", Misfire: policies[i%3], MisfireThreshold: "1s"})
	}
	// Starved until every schedule waits and the oldest is past its
	// threshold by two slots or more.
	err := testwait.Until(30*time.Second, "every schedule in the backlog, 3 s late, and the overloaded event", func() error {
		n, _, oldest, overloaded := obs.state(kvstore.EventOverloaded)
		if n < len(ids) || oldest < 3*time.Second || overloaded != 1 {
			return fmt.Errorf("backlog %d, oldest %s late, %d overloaded events", n, oldest, overloaded)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _, _ := obs.state(""); n > len(ids) {
		t.Errorf("backlog %d: more than one entry a schedule (%d)", n, len(ids))
	}
	close(release)
	released := time.Now()
	err = testwait.Until(30*time.Second, "the backlog drained and the caught_up event", func() error {
		n, _, _, caught := obs.state(kvstore.EventCaughtUp)
		if n != 0 || caught != 1 {
			return fmt.Errorf("backlog %d, %d caught_up events", n, caught)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Back on time: each schedule fires a slot after the release as a
	// regular fire (no catch-up or misfire reason).
	for _, id := range ids {
		h.waitFires(id, 30*time.Second, func(fs []fireMsg) bool {
			for _, f := range fs {
				if f.meta.ScheduledAt.After(released) && f.meta.Reason == "" {
					return true
				}
			}
			return false
		})
	}
	// Every slot owed up to the release: fired once, or not fired with
	// its reason; a fire_all schedule's all fired.
	for _, id := range ids {
		var bad []string
		var sum account.Summary
		err := testwait.Until(30*time.Second, "every slot of "+id+" accounted for", func() error {
			sum, bad = accountSlots(t, h, id, released)
			if sum.Unaccounted+sum.Pending > 0 || len(bad) > 0 {
				return fmt.Errorf("%s: %s; %v", id, sum.Line(), bad)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
		// Shed by policy: skip and fire_once recorded the slots past
		// the threshold missed instead of firing them late.
		if i := slices.Index(ids, id); policies[i%3] != kvstore.MisfireFireAll && sum.NotFired == 0 {
			t.Errorf("%s (%s): %s: want the slots past the threshold recorded missed", id, policies[i%3], sum.Line())
		}
		seen := map[string]int{}
		for _, f := range h.of(id) {
			if seen[f.meta.SlotID]++; seen[f.meta.SlotID] > 1 {
				t.Errorf("%s: slot %s fired twice", id, f.meta.SlotID)
			}
		}
	}
	if _, peak, _, _ := obs.state(""); peak < len(ids) {
		t.Errorf("backlog peak %d, want every schedule (%d)", peak, len(ids))
	}
	_ = e
}

// accountSlots accounts schedule id's slots from its creation to to, as
// `schedule account` does, and lists a fire_all slot not fired.
func accountSlots(t *testing.T, h *harness, id string, to time.Time) (account.Summary, []string) {
	t.Helper()
	ctx := context.Background()
	e, err := h.store.GetSpec(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	c, err := compile.Compile(e.Spec, id, h.store.CalendarSource(ctx), nil)
	if err != nil {
		t.Fatal(err)
	}
	ledger, err := h.store.Ledger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	owed := account.OwedFrom(e.Spec.At, e.Written)
	in := account.Input{ID: id, Recurrence: account.RecurrenceOf(c.Schedule), Owed: owed, From: owed, To: to, Now: time.Now(),
		State: (readmodel.Model{Store: h.store, Planner: fires.Planner{}}).Info(ctx, nil, e, nil).State, Ledger: ledger}
	var bad []string
	sum := account.Account(in, func(en account.Entry) {
		if e.Spec.Misfire == kvstore.MisfireFireAll && en.Fate != account.FateFired {
			bad = append(bad, fmt.Sprintf("%s under fire_all: %s (%s)", en.Nominal.Format(time.RFC3339Nano), en.Fate, en.Reason))
		}
	})
	return sum, bad
}
