package fires

import (
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestDecideEndsAtTheTimeRange: a slot at or past kvstore.MaxTime is
// never planned; the recurrence ends there (issue 52: a plan past the
// engine's Unix nanoseconds pinned a core), whether it is a new
// schedule's first slot or the one after a claim or a misfire.
func TestDecideEndsAtTheTimeRange(t *testing.T) {
	yearly := cronx.Interval{Every: 365 * 24 * time.Hour, Anchor: time.Date(2261, 6, 1, 0, 0, 0, 0, time.UTC)}
	last := time.Date(2261, 6, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		in     Input
		action Action
	}{
		{name: "a new schedule's first slot past the range",
			in:     Input{Now: last.Add(time.Hour), Schedule: yearly, Written: last.Add(time.Minute)},
			action: ActInit},
		{name: "a one-shot past the range",
			in:     Input{Now: last, Schedule: cronx.At(time.Date(2262, 4, 11, 23, 47, 17, 0, time.UTC))},
			action: ActInit},
		{name: "the slot after a claim",
			in:     Input{Now: last.Add(time.Second), Plan: "p", Schedule: yearly, State: &kvstore.State{Plan: "p", Next: last}},
			action: ActClaim},
		{name: "the slot after a misfire",
			in:     Input{Now: last.Add(time.Hour), Plan: "p", Schedule: yearly, State: &kvstore.State{Plan: "p", Next: last}},
			action: ActMisfire},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.MisfireThreshold = time.Minute
			d := Decide(tt.in)
			if d.Action != tt.action || !d.Next.IsZero() || !d.Step.At.IsZero() {
				t.Fatalf("Decide = %v next %s (step %s), want %v and the recurrence ended (next zero)", d.Action, d.Next, d.Step.At, tt.action)
			}
		})
	}
	// Just inside the range, the slot is planned as any other.
	inside := cronx.At(kvstore.MaxTime.Add(-time.Second))
	if d := Decide(Input{Now: last, Schedule: inside, MisfireThreshold: time.Minute}); !d.Next.Equal(kvstore.MaxTime.Add(-time.Second)) {
		t.Fatalf("Decide of a one-shot just inside the range: next %s", d.Next)
	}
}

// TestPlanKeptInMemoryOnlyWhenItPacks: a new schedule's plan that the
// entry cannot hold packed (a time outside Unix nanoseconds, or the epoch
// itself, which packs as "none") is written by a worker, never left for
// the loop to plan again: the loop re-planned it, found it did not pack,
// and handed it to a worker that kept it in memory only, around and
// around at a core's full speed (issue 52).
func TestPlanKeptInMemoryOnlyWhenItPacks(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		next time.Time
		skip bool
		keep bool
	}{
		{name: "a plain plan", next: now.Add(time.Hour), keep: true},
		{name: "a plan that skips slots", next: now.Add(time.Hour), skip: true},
		{name: "past Unix nanoseconds", next: time.Date(2262, 4, 11, 23, 47, 17, 0, time.UTC)},
		{name: "the epoch", next: time.Unix(0, 0).UTC()},
		{name: "before Unix nanoseconds", next: time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decision{Action: ActInit, Next: tt.next, Step: cronx.Step{At: tt.next}}
			if tt.skip {
				d.Step.Skipped = []cronx.Skip{{Nominal: now, Reason: "holiday"}}
			}
			_, keep := inMemoryPlan("p", d, now)
			if keep != tt.keep {
				t.Fatalf("kept in memory: %v, want %v", keep, tt.keep)
			}
		})
	}
}

// FuzzDecideInRange: whatever the recurrence and the time, the slot
// Decide plans is none or inside the supported range, and a new
// schedule's plan is one a worker can write (a plan past year 9999 does
// not encode) or the loop can keep.
func FuzzDecideInRange(f *testing.F) {
	maxSec := kvstore.MaxTime.Unix()
	for _, seed := range [][4]int64{
		{0, 3600, 1_796_000_000, 0},
		{maxSec - 10, 365 * 86400, maxSec - 5, 0},
		{0, 0, maxSec - 1, maxSec + 1},
		{0, 0, 1_796_000_000, 9_223_372_036},
		{1, 2_000_000_000, 9_000_000_000, 0},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	f.Fuzz(func(t *testing.T, anchor, every, now, at int64) {
		// A time in the range the engine is ever at, and a recurrence
		// within what compiles (every below 2^61 ns).
		nowT := time.Unix(kvstore.MinTime.Unix()+mod(now, maxSec-kvstore.MinTime.Unix()), 0).UTC()
		var s cronx.Schedule = cronx.At(time.Unix(mod(at, 1<<40), 0).UTC())
		if e := mod(every, 1<<31); e > 0 {
			s = cronx.Interval{Every: time.Duration(e) * time.Second, Anchor: time.Unix(mod(anchor, 1<<40), 0).UTC()}
		}
		in := Input{Now: nowT, Schedule: s, Written: nowT, MisfireThreshold: time.Minute}
		d := Decide(in)
		if !d.Next.IsZero() && !kvstore.InTimeRange(d.Next) && d.Next.After(kvstore.MinTime) {
			t.Fatalf("Decide planned %s, outside the supported range", d.Next)
		}
		if d.Action != ActInit {
			return
		}
		st := plannedState("p", d, nowT)
		if _, err := st.Encode(); err != nil {
			t.Fatalf("the plan does not encode: %v", err)
		}
		if !d.Next.IsZero() {
			// A planned slot (in range) is decided again as the record says.
			in.Plan, in.State = "p", st
			if again := Decide(in); !again.Next.IsZero() && !again.Next.Before(kvstore.MaxTime) {
				t.Fatalf("Decide on the plan planned %s", again.Next)
			}
		}
	})
}

// mod is x modulo m in [0, m).
func mod(x, m int64) int64 {
	r := x % m
	if r < 0 {
		r += m
	}
	return r
}

// TestConfigDurationsBounded: a lease TTL or misfire threshold of
// centuries is refused, naming the field: 9/10 of a 300-year lease TTL
// overflowed to a negative guard that never opened (issue 52).
func TestConfigDurationsBounded(t *testing.T) {
	for _, tc := range []struct {
		field string
		cfg   Config
	}{
		{"LeaseTTL", Config{LeaseTTL: 2562047 * time.Hour}},
		{"MisfireThreshold", Config{MisfireThreshold: 2562047 * time.Hour}},
	} {
		tc.cfg.Store = &jsstore.Store{}
		err := tc.cfg.withDefaults().validate()
		if err == nil || !strings.Contains(err.Error(), "Config."+tc.field) {
			t.Errorf("%s of centuries: err %v, want one naming Config.%s", tc.field, err, tc.field)
		}
	}
}
