package fires

import (
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestDecidePolicies covers misfire, overlap and operator controls: the
// action, the slot and what is recorded as not fired.
func TestDecidePolicies(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	every := cronx.Interval{Every: time.Second}
	base := compile.Policy{Misfire: kvstore.MisfireSkip, CatchupWindow: 24 * time.Hour, Overlap: kvstore.OverlapAllow, CompletionTimeout: time.Hour}
	with := func(f func(*compile.Policy)) compile.Policy { p := base; f(&p); return p }
	running := &kvstore.Running{SlotID: "s.1796029200000", Slot: at(0), Since: at(0), Deadline: at(100)}
	tests := []struct {
		name   string
		now    time.Time
		policy compile.Policy
		state  kvstore.State
		check  func(t *testing.T, d Decision)
	}{
		{"fire_all catches up every slot in order", at(300), with(func(p *compile.Policy) { p.Misfire = kvstore.MisfireFireAll }),
			kvstore.State{Next: at(10)}, func(t *testing.T, d Decision) {
				want(t, d.Action == ActClaim && d.Slot.Equal(at(10)) && d.Reason == kvstore.ReasonCatchup && d.Next.Equal(at(11)) && d.Missed == 0, d)
			}},
		{"fire_all drops slots older than the catch-up window", at(300), with(func(p *compile.Policy) {
			p.Misfire, p.CatchupWindow = kvstore.MisfireFireAll, 100*time.Second
		}), kvstore.State{Next: at(10)}, func(t *testing.T, d Decision) {
			want(t, d.Action == ActMisfire && d.Missed == 190 && d.LastMissed.Equal(at(199)) && d.Next.Equal(at(200)), d)
		}},
		{"fire_once fires the latest misfired slot and records the ones before it merged", at(300.5), with(func(p *compile.Policy) { p.Misfire = kvstore.MisfireFireOnce }),
			kvstore.State{Next: at(10)}, func(t *testing.T, d Decision) {
				// 240 is the last slot late past the 1 m threshold; 241
				// through 300 are on time and fire as usual afterwards.
				want(t, d.Action == ActClaim && d.Slot.Equal(at(240)) && d.Reason == kvstore.ReasonCatchup && d.Missed == 230 &&
					d.FirstMissed.Equal(at(10)) && d.LastMissed.Equal(at(239)) && d.Next.Equal(at(241)) &&
					d.MissedNote == "fire_once: merged into the catch-up fire of 2026-11-30T09:04:00Z", d)
			}},
		// Issue 51, case 3: back just after a slot, a fire_once schedule
		// (threshold 3 s) recorded the slot before it missed, "2.112s late,
		// threshold 3s", and fired only the latest; skip fired both.
		{"fire_once leaves the slots within the threshold to fire", at(13.5), with(func(p *compile.Policy) {
			p.Misfire, p.MisfireThreshold = kvstore.MisfireFireOnce, 3*time.Second
		}), kvstore.State{Next: at(10)}, func(t *testing.T, d Decision) {
			// 10 is 3.5 s late: the one catch-up; 11 (2.5 s late) through
			// 13 are within the threshold and fire as usual.
			want(t, d.Action == ActClaim && d.Slot.Equal(at(10)) && d.Reason == kvstore.ReasonCatchup && d.Missed == 0 && d.Next.Equal(at(11)), d)
		}},
		{"fire_once with nothing late past the threshold fires on time", at(12.112), with(func(p *compile.Policy) {
			p.Misfire, p.MisfireThreshold = kvstore.MisfireFireOnce, 3*time.Second
		}), kvstore.State{Next: at(10)}, func(t *testing.T, d Decision) {
			want(t, d.Action == ActClaim && d.Slot.Equal(at(10)) && d.Reason == "" && d.Missed == 0, d)
		}},
		{"a spec's threshold wins over the scheduler's", at(12), with(func(p *compile.Policy) { p.MisfireThreshold = time.Second }),
			kvstore.State{Next: at(10)}, func(t *testing.T, d Decision) {
				// 10 is 2 s late: missed; 11 is within the threshold: it fires next.
				want(t, d.Action == ActMisfire && d.Missed == 1 && d.Next.Equal(at(11)) && d.MissedThreshold == time.Second, d)
			}},
		{"overlap skip while running", at(10), with(func(p *compile.Policy) { p.Overlap = kvstore.OverlapSkip }),
			kvstore.State{Next: at(10), Running: running}, func(t *testing.T, d Decision) {
				want(t, d.Action == ActMisfire && d.Missed == 1 && d.Next.Equal(at(11)) && d.MissedReason == "overlap: s.1796029200000 is still running", d)
			}},
		{"overlap allow ignores running", at(10), base,
			kvstore.State{Next: at(10), Running: running}, func(t *testing.T, d Decision) {
				want(t, d.Action == ActClaim && d.Slot.Equal(at(10)), d)
			}},
		{"buffer waits for the running fire, or its timeout", at(10), with(func(p *compile.Policy) { p.Overlap = kvstore.OverlapBufferAll }),
			kvstore.State{Next: at(10), Running: running}, func(t *testing.T, d Decision) {
				want(t, d.Action == ActWait && d.Until.Equal(at(100)), d)
			}},
		{"buffer_all fires the held slot late, then the next", at(500), with(func(p *compile.Policy) { p.Overlap = kvstore.OverlapBufferAll }),
			kvstore.State{Next: at(10), LastDone: at(400)}, func(t *testing.T, d Decision) {
				want(t, d.Action == ActClaim && d.Slot.Equal(at(10)) && d.Next.Equal(at(11)) && d.Missed == 0, d)
			}},
		{"buffer_one fires the held slot and skips the others due", at(20.5), with(func(p *compile.Policy) { p.Overlap = kvstore.OverlapBufferOne }),
			kvstore.State{Next: at(10), LastDone: at(20.2)}, func(t *testing.T, d Decision) {
				want(t, d.Action == ActClaim && d.Slot.Equal(at(10)) && d.Missed == 10 && d.FirstMissed.Equal(at(11)) &&
					d.LastMissed.Equal(at(20)) && d.Next.Equal(at(21)), d)
			}},
		{"cancel_other claims and cancels the running one", at(10), with(func(p *compile.Policy) { p.Overlap = kvstore.OverlapCancelOther }),
			kvstore.State{Next: at(10), Running: running}, func(t *testing.T, d Decision) {
				want(t, d.Action == ActClaim && d.Cancel == running.SlotID, d)
			}},
		{"paused: nothing until resumed", at(10), base,
			kvstore.State{Next: at(10), Paused: &kvstore.Pause{At: at(5)}}, func(t *testing.T, d Decision) {
				want(t, d.Action == ActWait && d.Until.IsZero(), d)
			}},
		{"paused until a time: wait for it", at(10), base,
			kvstore.State{Next: at(10), Paused: &kvstore.Pause{At: at(5), Until: at(30)}}, func(t *testing.T, d Decision) {
				want(t, d.Action == ActWait && d.Until.Equal(at(30)), d)
			}},
		{"pause over: the slots it covered are skipped", at(30.5), base,
			kvstore.State{Next: at(10), Paused: &kvstore.Pause{At: at(5), Until: at(30)}}, func(t *testing.T, d Decision) {
				want(t, d.Action == ActMisfire && d.MissedReason == reasonPaused && d.Missed == 20 && d.Next.Equal(at(30)), d)
			}},
		{"resumed: slots before the resume are skipped", at(30.5), base,
			kvstore.State{Next: at(10), ResumedAt: at(25.5)}, func(t *testing.T, d Decision) {
				want(t, d.Action == ActMisfire && d.MissedReason == reasonPaused && d.Missed == 16 && d.Next.Equal(at(26)), d)
			}},
		{"skip next N", at(10), base,
			kvstore.State{Next: at(10), SkipNext: 2}, func(t *testing.T, d Decision) {
				want(t, d.Action == ActMisfire && d.Missed == 1 && d.SkipNext == 1 && d.Next.Equal(at(11)) && d.MissedReason == reasonOperator, d)
			}},
		{"a trigger comes first, even paused", at(5), base,
			kvstore.State{Next: at(10), Paused: &kvstore.Pause{At: at(1)}, Triggers: []kvstore.Trigger{{At: at(4)}}}, func(t *testing.T, d Decision) {
				want(t, d.Action == ActTrigger && d.Slot.Equal(at(4)), d)
			}},
		{"backfill replays the next slot of its range", at(5), base,
			kvstore.State{Next: at(10), Backfill: &kvstore.Backfill{From: at(-100), To: at(-98), Rate: 1}}, func(t *testing.T, d Decision) {
				want(t, d.Action == ActBackfill && d.Slot.Equal(at(-100)) && d.Reason == kvstore.ReasonBackfill, d)
			}},
		{"backfill waits for its rate, the regular slot still wakes", at(5), base,
			kvstore.State{Next: at(10), Backfill: &kvstore.Backfill{From: at(-100), To: at(-98), Rate: 1, Cursor: at(-100), NotBefore: at(6)}}, func(t *testing.T, d Decision) {
				want(t, d.Action == ActWait && d.Until.Equal(at(6)), d)
			}},
		{"backfill past its range ends", at(7), base,
			kvstore.State{Next: at(10), Backfill: &kvstore.Backfill{From: at(-100), To: at(-98), Rate: 1, Cursor: at(-98), NotBefore: at(6)}}, func(t *testing.T, d Decision) {
				want(t, d.Action == ActBackfill && d.Slot.IsZero(), d)
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.state
			st.Plan = "p"
			in := Input{Now: tc.now, Plan: "p", Schedule: every, Policy: tc.policy, State: &st, MisfireThreshold: time.Minute}
			d := Decide(in)
			tc.check(t, d)
			// Due agrees with Decide.
			due, ok := Due(in)
			if d.Action == ActWait {
				if ok != !d.Until.IsZero() || ok && !due.Equal(d.Until) {
					t.Fatalf("Due = %v,%v for %+v", due, ok, d)
				}
			} else if !ok || !due.Equal(tc.now) {
				t.Fatalf("Due = %v,%v, want now for %s", due, ok, d.Action)
			}
		})
	}
}

func want(t *testing.T, ok bool, d Decision) {
	t.Helper()
	if !ok {
		t.Fatalf("unexpected decision: %+v", d)
	}
}
