package fires

import (
	"reflect"
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func TestDecide(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	every := cronx.Interval{Every: time.Second}
	plan := "every 1s"
	claim := func(slot, claimedAt float64, token string) *kvstore.Claim {
		return &kvstore.Claim{Slot: at(slot), Token: token, Owner: "other", At: at(claimedAt), Expires: at(claimedAt + 30)}
	}
	tests := []struct {
		name    string
		now     time.Time
		state   *kvstore.State
		settled string
		checked string
		since   time.Time // Input.TenureSince
		want    Decision
	}{
		{
			name: "no state: plan the first slot strictly after now",
			now:  at(0.5), state: nil,
			want: Decision{Action: ActInit, Next: at(1)},
		},
		{
			name: "recurrence changed: re-plan from now",
			now:  at(0.5), state: &kvstore.State{Next: at(100), Plan: "every 5s"},
			want: Decision{Action: ActReplan, Next: at(1)},
		},
		{
			name: "not due yet: wait for the slot",
			now:  at(0.5), state: &kvstore.State{Next: at(1), Plan: plan},
			want: Decision{Action: ActWait, Until: at(1)},
		},
		{
			name: "due now: claim it, next from the scheduled time",
			now:  at(1), state: &kvstore.State{Next: at(1), Plan: plan},
			want: Decision{Action: ActClaim, Slot: at(1), Next: at(2)},
		},
		{
			name: "late within threshold: still claim the old slot, cadence kept",
			now:  at(31.7), state: &kvstore.State{Next: at(1), Plan: plan},
			want: Decision{Action: ActClaim, Slot: at(1), Next: at(2)},
		},
		{
			name: "later than the threshold: missed; the slots within it fire as usual",
			now:  at(61.5), state: &kvstore.State{Next: at(1), Plan: plan},
			want: Decision{Action: ActMisfire, Slot: at(1), FirstMissed: at(1), LastMissed: at(1), Missed: 1, Next: at(2),
				MissedReason: "misfire: 1m0.5s late, threshold 1m0s", MissedThreshold: time.Minute},
		},
		{
			name: "an outage: every slot older than the threshold missed, the next is due",
			now:  at(600.5), state: &kvstore.State{Next: at(1), Plan: plan},
			want: Decision{Action: ActMisfire, Slot: at(1), FirstMissed: at(1), LastMissed: at(540), Missed: 540, Next: at(541),
				MissedReason: "misfire: 9m59.5s late, threshold 1m0s", MissedThreshold: time.Minute},
		},
		{
			name: "previous claim settled by us: claim the next slot",
			now:  at(2), state: &kvstore.State{Next: at(2), Plan: plan, Claim: claim(1, 1, "tok")}, settled: "tok",
			want: Decision{Action: ActClaim, Slot: at(2), Next: at(3)},
		},
		{
			name: "previous claim unknown, next slot due: look its tick up",
			now:  at(2), state: &kvstore.State{Next: at(2), Plan: plan, Claim: claim(1, 1, "tok")},
			want: Decision{Action: ActCheckClaim, Slot: at(1)},
		},
		{
			name: "previous claim unknown, next slot not due: wait for the slot",
			now:  at(1.5), state: &kvstore.State{Next: at(2), Plan: plan, Claim: claim(1, 1, "tok")},
			want: Decision{Action: ActWait, Until: at(2)},
		},
		{
			name: "live claim looked up without a tick: wait for its expiry",
			now:  at(2), state: &kvstore.State{Next: at(2), Plan: plan, Claim: claim(1, 1, "tok")}, checked: "tok",
			want: Decision{Action: ActWait, Until: at(31)},
		},
		{
			name: "previous claim unknown and expired: check it before anything else",
			now:  at(31), state: &kvstore.State{Next: at(2), Plan: plan, Claim: claim(1, 1, "tok")}, settled: "older",
			want: Decision{Action: ActCheckClaim, Slot: at(1)},
		},
		{
			name: "live claim made before this tenure (a previous owner's): check it now, not at its expiry",
			now:  at(2), state: &kvstore.State{Next: at(2), Plan: plan, Claim: claim(1, 1, "tok")}, checked: "tok", since: at(1.5),
			want: Decision{Action: ActCheckClaim, Slot: at(1)},
		},
		{
			name: "previous owner's claim, next slot not due yet: still checked now",
			now:  at(1.2), state: &kvstore.State{Next: at(2), Plan: plan, Claim: claim(1, 1, "tok")}, since: at(1.1),
			want: Decision{Action: ActCheckClaim, Slot: at(1)},
		},
		{
			name: "claim made in this tenure: waited for as before",
			now:  at(2), state: &kvstore.State{Next: at(2), Plan: plan, Claim: claim(1, 1, "tok")}, checked: "tok", since: at(0.5),
			want: Decision{Action: ActWait, Until: at(31)},
		},
		{
			name: "ended recurrence: nothing to do",
			now:  at(5), state: &kvstore.State{Plan: plan, Ended: true},
			want: Decision{Action: ActWait},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Now: tc.now, Plan: plan, Schedule: every, State: tc.state, Settled: tc.settled, Checked: tc.checked, MisfireThreshold: time.Minute,
				TenureSince: tc.since}
			got := Decide(in)
			if !got.Step.At.Equal(got.Next) {
				t.Fatalf("Step.At %v differs from Next %v", got.Step.At, got.Next)
			}
			got.Step = cronx.Step{}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Decide:\n got %+v\nwant %+v", got, tc.want)
			}
			due, ok := Due(in)
			switch {
			case got.Action == ActWait && got.Until.IsZero():
				if ok {
					t.Fatalf("Due = %v, want none", due)
				}
			case got.Action == ActWait:
				if !ok || !due.Equal(got.Until) {
					t.Fatalf("Due = %v,%v; want %v", due, ok, got.Until)
				}
			default:
				if !ok || due.After(tc.now) {
					t.Fatalf("Due = %v,%v; want at or before now %v for %s", due, ok, tc.now, got.Action)
				}
			}
		})
	}
}

func TestDecideOneShot(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	once := cronx.Once{At: t0.Add(time.Minute)}
	in := Input{Now: t0, Plan: "at", Schedule: once, MisfireThreshold: time.Minute}
	d := Decide(in)
	if d.Action != ActInit || !d.Next.Equal(once.At) || !d.Step.Nominal.Equal(once.At) {
		t.Fatalf("init: %+v", d)
	}
	in.Now = once.At
	in.State = &kvstore.State{Next: once.At, Plan: "at"}
	d = Decide(in)
	if d.Action != ActClaim || !d.Next.IsZero() {
		t.Fatalf("fire: %+v, want a claim with no next slot", d)
	}
}

// TestDecideNeverSkipsOrRepeats walks a schedule through many claims at
// random lateness (below the threshold) and checks that the claimed slots
// are exactly the recurrence's slots, in order.
func TestDecideNeverSkipsOrRepeats(t *testing.T) {
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	c, err := cronx.NewCron("*/7 * * * * *", cronx.Options{Location: loc})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 8, 1, 59, 0, 0, loc) // across the spring-forward gap
	st := &kvstore.State{Next: c.Next(start), Plan: "p"}
	want := st.Next
	for i := range 500 {
		now := st.Next.Add(time.Duration(i%13) * time.Second)
		d := Decide(Input{Now: now, Plan: "p", Schedule: c, State: st, MisfireThreshold: time.Minute})
		if d.Action != ActClaim {
			t.Fatalf("step %d: %+v, want claim", i, d)
		}
		if !d.Slot.Equal(want) {
			t.Fatalf("step %d: claimed %v, want %v", i, d.Slot, want)
		}
		want = c.Next(want)
		st = &kvstore.State{Next: d.Next, Plan: "p"}
	}
}
