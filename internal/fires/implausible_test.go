package fires

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/claimttl"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestDecideImplausibleState: a state no scheduler of this spec could have
// written is re-planned from now with the reason, never left waiting for a
// slot that does not come or walked through millions of slots.
func TestDecideImplausibleState(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	every := cronx.Interval{Every: time.Second}
	daily, err := cronx.NewCron("0 2 * * *", cronx.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	claimed := func(slot float64) *kvstore.Claim {
		return &kvstore.Claim{Slot: at(slot), Token: "tok", Owner: "o", At: at(slot), Expires: at(slot + 30)}
	}
	tests := []struct {
		name     string
		sched    cronx.Schedule
		now      time.Time
		state    kvstore.State
		created  time.Time
		written  time.Time
		want     string // substring of Implausible; "" for a plausible state
		wantNext time.Time
	}{
		{name: "far-future next", sched: every, now: at(0.5), state: kvstore.State{Next: time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)},
			want: "beyond the recurrence's next slot", wantNext: at(1)},
		{name: "next within the threshold (a scheduler with its clock ahead)", sched: every, now: at(0.5), state: kvstore.State{Next: at(45)}},
		{name: "next one slot ahead of the threshold", sched: every, now: at(0.5), state: kvstore.State{Next: at(61)}},
		{name: "next two slots past the threshold", sched: every, now: at(0.5), state: kvstore.State{Next: at(63)},
			want: "beyond", wantNext: at(1)},
		{name: "daily cron: tomorrow's slot is plausible", sched: daily, now: t0, state: kvstore.State{Next: time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)}},
		{name: "daily cron: a slot a week out is not", sched: daily, now: t0, state: kvstore.State{Next: time.Date(2026, 12, 7, 2, 0, 0, 0, time.UTC)},
			want: "beyond", wantNext: time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)},
		{name: "next before the schedule existed", sched: every, now: at(0.5), created: at(-3600),
			state: kvstore.State{Next: time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)}, want: "before the schedule was created", wantNext: at(1)},
		{name: "overdue but after creation: the misfire policy applies", sched: every, now: at(0.5), created: at(-3600),
			state: kvstore.State{Next: at(-1800)}},
		{name: "next not after the slot last claimed", sched: every, now: at(10.5), state: kvstore.State{Next: at(5), Claim: claimed(7)},
			want: "not after the slot last claimed", wantNext: at(11)},
		// Issue 51: a restored backup's record, its next slot beyond the
		// recurrence, decided once its claim ran out: planned from the
		// slot after the claim, so the slots due meanwhile follow the
		// misfire policy instead of being passed over.
		{name: "re-planned from the slot last claimed, not from now", sched: every, now: at(40.5), written: at(-100),
			state: kvstore.State{Next: at(200), Claim: claimed(5)}, want: "beyond the recurrence's next slot", wantNext: at(6)},
		{name: "without a claim, from the spec's write", sched: every, now: at(40.5), written: at(-2.5),
			state: kvstore.State{Next: at(200)}, want: "beyond the recurrence's next slot", wantNext: at(-2)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.state
			st.Plan = "p"
			in := Input{Now: tc.now, Plan: "p", Schedule: tc.sched, State: &st, Settled: "tok", MisfireThreshold: time.Minute, Created: tc.created, Written: tc.written}
			d := Decide(in)
			if tc.want == "" {
				if d.Implausible != "" || d.Action == ActReplan {
					t.Fatalf("plausible state re-planned: %+v", d)
				}
				return
			}
			if d.Action != ActReplan || !strings.Contains(d.Implausible, tc.want) || !d.Next.Equal(tc.wantNext) {
				t.Fatalf("got %s %q next %v; want a re-plan to %v because %q", d.Action, d.Implausible, d.Next, tc.wantNext, tc.want)
			}
			// The re-planned state is plausible: no loop of re-plans.
			st.Next = d.Next
			if again := Decide(in); again.Implausible != "" {
				t.Fatalf("the re-planned state is implausible again: %q", again.Implausible)
			}
		})
	}
}

// TestReplanIsAlwaysPlausible: whatever the next slot, one re-plan makes
// the state plausible (property, seeded).
func TestReplanIsAlwaysPlausible(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 34))
	exprs := []string{"* * * * *", "0 2 * * *", "*/7 * * * * *", "0 0 29 2 *", "0 9 * * 1-5"}
	for i := range 2000 {
		c, err := cronx.NewCron(exprs[i%len(exprs)], cronx.Options{Location: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int64N(int64(365 * 24 * time.Hour))))
		next := now.Add(time.Duration(rng.Int64N(int64(5*365*24*time.Hour))) - time.Hour)
		in := Input{Now: now, Plan: "p", Schedule: c, State: &kvstore.State{Plan: "p", Next: next}, MisfireThreshold: time.Minute}
		d := Decide(in)
		if d.Action != ActReplan {
			continue
		}
		in.State = &kvstore.State{Plan: "p", Next: d.Next}
		if again := Decide(in); again.Action == ActReplan {
			t.Fatalf("%s at %v: next %v re-planned to %v, then again: %q", exprs[i%len(exprs)], now, next, d.Next, again.Implausible)
		}
	}
}

// TestMissedCountedExactly: an interval counts every missed slot however
// many (a century of seconds); a cron walks up to the bound and says "at
// least".
func TestMissedCountedExactly(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 500e6, time.UTC)
	from := time.Date(1926, 11, 30, 9, 0, 0, 0, time.UTC)
	in := Input{Now: now, Plan: "p", Schedule: cronx.Interval{Every: time.Second}, State: &kvstore.State{Plan: "p", Next: from}, MisfireThreshold: time.Minute}
	d := Decide(in)
	last := now.Add(-time.Minute).Truncate(time.Second) // the slots within the threshold fire
	want := int(last.Unix()-from.Unix()) + 1
	if d.Action != ActMisfire || d.Missed != want || d.MissedAtLeast || !d.LastMissed.Equal(last) || !d.Next.Equal(last.Add(time.Second)) {
		t.Fatalf("interval: %s missed %d (at least %v) last %v next %v; want %d through %v", d.Action, d.Missed, d.MissedAtLeast, d.LastMissed, d.Next, want, last)
	}
	c, err := cronx.NewCron("* * * * * *", cronx.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	in.Schedule = c
	d = Decide(in)
	if d.Action != ActMisfire || d.Missed != maxMissedCount || !d.MissedAtLeast || !d.Next.Equal(last.Add(time.Second)) {
		t.Fatalf("cron: %s missed %d (at least %v) next %v", d.Action, d.Missed, d.MissedAtLeast, d.Next)
	}
}

// TestForgedClaimCannotHoldASlot: a claim record that says it expires in
// 2099, or that was made in 2099, is bounded by claimttl.Max: it is
// checked (and taken over if its fire is missing) like any expired claim.
func TestForgedClaimCannotHoldASlot(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	far := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	every := cronx.Interval{Every: time.Second}
	for _, tc := range []struct {
		name  string
		claim kvstore.Claim
		now   time.Time
		want  Action
	}{
		{"expires in 2099, made 11 minutes ago", kvstore.Claim{Slot: t0, Token: "x", At: t0, Expires: far}, t0.Add(11 * time.Minute), ActCheckClaim},
		{"expires in 2099, made a minute ago: still live", kvstore.Claim{Slot: t0, Token: "x", At: t0, Expires: far}, t0.Add(time.Minute), ActWait},
		{"made in 2099", kvstore.Claim{Slot: t0, Token: "x", At: far, Expires: far}, t0.Add(time.Second), ActCheckClaim},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.claim
			st := &kvstore.State{Plan: "p", Next: every.Next(tc.now), Claim: &c}
			in := Input{Now: tc.now, Plan: "p", Schedule: every, State: st, Checked: "x", MisfireThreshold: time.Minute}
			d := Decide(in)
			if d.Action != tc.want {
				t.Fatalf("got %s (until %v), want %s", d.Action, d.Until, tc.want)
			}
			if d.Action == ActWait && d.Until.After(c.At.Add(claimttl.Max)) {
				t.Fatalf("waits until %v, past the longest claim", d.Until)
			}
		})
	}
}
