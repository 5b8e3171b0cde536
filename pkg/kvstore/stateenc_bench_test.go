package kvstore_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// benchStates are the records BenchmarkEncodeState writes: a fire's
// state record as the window path leaves it (the common write), and one
// with every field set.
func benchStates() []struct {
	name string
	st   kvstore.State
} {
	at := time.Date(2026, 12, 1, 1, 5, 59, 819750, time.UTC)
	slot := time.Date(2026, 12, 1, 1, 5, 59, 0, time.UTC)
	fire := kvstore.State{
		Next: slot.Add(time.Second),
		Plan: "every 1s anchor=2026-12-01T01:05:56Z align=anchor phase= tz=",
		Claim: &kvstore.Claim{Slot: slot, Token: "9358a99ec31a", Owner: "s1", At: at,
			Expires: at.Add(30 * time.Second), Seq: 14, Window: "28/3"},
		Fires: 3, UpdatedAt: at, Owner: "s1",
	}
	full := fire
	full.NextNominal = slot.Add(-time.Hour)
	full.NextReason = "calendar: holiday \"Noël\" rolled to next_business_day"
	full.Claim = &kvstore.Claim{Slot: slot, Token: "9358a99ec31a", Owner: "s1", At: at,
		Expires: at.Add(30 * time.Second), Reason: "moved", Note: "rolled <past> the holiday",
		Nominal: slot.Add(-time.Hour), SlotID: "x3.bf.1796026355000", Cancel: "x3.1796026354000", Seq: 14, Window: "28/3"}
	full.Missed, full.MissedAtLeast, full.Skipped, full.Ended = 7, true, 2, false
	full.Paused = &kvstore.Pause{Note: "db migration", At: at, Until: at.Add(2 * time.Hour)}
	full.ResumedAt = at.Add(-time.Minute)
	full.SkipNext = 2
	full.Triggers = []kvstore.Trigger{{At: at, Note: "by hand"}, {At: at.Add(time.Second)}}
	full.Backfill = &kvstore.Backfill{From: slot.Add(-24 * time.Hour), To: slot, Cursor: slot.Add(-time.Hour),
		Rate: 2.5, NotBefore: at, Note: "replay", Total: 86400, Done: 3600}
	full.Running = &kvstore.Running{SlotID: "x3.1796026354000", Slot: slot, Since: at, Deadline: at.Add(time.Hour)}
	full.LastDone = at.Add(-time.Second)
	return []struct {
		name string
		st   kvstore.State
	}{{"fire", fire}, {"full", full}}
}

// BenchmarkEncodeState measures the encoding of every sched_state write
// (CreateState, UpdateState, UpdateStateAsync): json.Marshal by
// reflection, as State.Encode did before AppendJSON; Encode, into a new
// buffer as the store does; AppendJSON into a reused buffer.
func BenchmarkEncodeState(b *testing.B) {
	for _, bs := range benchStates() {
		b.Run(bs.name+"/json.Marshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(plainState(bs.st)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bs.name+"/Encode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bs.st.Encode(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bs.name+"/AppendJSON", func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				var err error
				if buf, err = kvstore.AppendJSON(bs.st, buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncodeWindow measures PutWindow's encoding of a window claim of
// 1 and of 100 slots: json.Marshal by reflection (before), Encode (after).
func BenchmarkEncodeWindow(b *testing.B) {
	at := time.Date(2026, 12, 1, 1, 5, 59, 819750, time.UTC)
	for _, n := range []int{1, 100} {
		w := jsstore.Window{Shard: 28, Seq: 3, Token: "9358a99ec31a", Owner: "s1", At: at, Expires: at.Add(30 * time.Second)}
		for i := range n {
			w.Slots = append(w.Slots, jsstore.WindowSlot{Schedule: "x" + strconv.Itoa(i), Slot: at.Truncate(time.Second)})
		}
		b.Run(strconv.Itoa(n)+"/json.Marshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(plainWindow(w)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(strconv.Itoa(n)+"/Encode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := w.Encode(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeState measures DecodeState on the same records, to tell
// whether decoding is worth a hand-written parser too.
func BenchmarkDecodeState(b *testing.B) {
	for _, bs := range benchStates() {
		data, err := bs.st.Encode()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bs.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := kvstore.DecodeState(data); err != nil {
					b.Fatal(err)
				}
			}
		})
		// encoding/json, as DecodeState decoded every record before the
		// fast path: the reference in the same run.
		b.Run(bs.name+"/json.Unmarshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var p plainState
				if err := json.Unmarshal(data, &p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
