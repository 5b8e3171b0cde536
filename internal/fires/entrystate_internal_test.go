package fires

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// randomState is a state record with a random subset of its fields set,
// times now and then in another zone, at the epoch or past 2262.
func randomState(r *rand.Rand) kvstore.State {
	tm := func() time.Time {
		switch r.IntN(8) {
		case 0:
			return time.Time{}
		case 1:
			return time.Unix(0, 0).UTC()
		case 2:
			return time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)
		case 3:
			return time.Unix(r.Int64N(4e9), r.Int64N(1e9)).In(time.FixedZone("x", 7200))
		}
		return time.Unix(r.Int64N(4e9), r.Int64N(1e9)).UTC()
	}
	var st kvstore.State
	st.Next, st.NextNominal, st.UpdatedAt = tm(), tm(), tm()
	st.Plan, st.NextReason, st.Owner = "p"+string(rune('a'+r.IntN(3))), []string{"", "calendar"}[r.IntN(2)], []string{"", "s1"}[r.IntN(2)]
	st.Fires, st.Missed, st.Skipped = r.Uint64(), uint64(r.IntN(3)), uint64(r.IntN(3))
	st.Ended, st.MissedAtLeast = r.IntN(2) == 0, r.IntN(2) == 0
	switch r.IntN(12) {
	case 0:
		st.Claim = &kvstore.Claim{Token: "t"}
	case 1:
		st.Paused = &kvstore.Pause{At: tm()}
	case 2:
		st.ResumedAt = time.Unix(5, 0).UTC()
	case 3:
		st.SkipNext = 1
	case 4:
		st.Triggers = []kvstore.Trigger{}
	case 5:
		st.Backfill = &kvstore.Backfill{}
	case 6:
		st.Running = &kvstore.Running{}
	case 7:
		st.LastDone = time.Unix(5, 0).UTC()
	}
	return st
}

// An entry's state is the record it was given, whether it packed it or
// kept it whole; a record packs when it has only the plain fields.
func TestEntryStateKeepsTheRecord(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var packed, whole int
	for range 20000 {
		st := randomState(r)
		want := st
		en := &entry{compiled: sched{Plan: "pa"}}
		en.setState(&st, "s1")
		var buf kvstore.State
		got := *en.view(&buf)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("form %d: state %+v, want %+v", en.form, got, want)
		}
		if cur := en.current(); !reflect.DeepEqual(*cur, want) {
			t.Fatalf("current %+v, want %+v", *cur, want)
		}
		if !en.hasRecord() || !en.hasState() {
			t.Fatal("a record is not reported")
		}
		switch en.form {
		case statePacked:
			packed++
		case stateFull:
			whole++
		}
		_, plain := packState(&want)
		if plain != (en.form == statePacked) {
			t.Fatalf("packState says %v for a record kept in form %d", plain, en.form)
		}
	}
	if packed == 0 || whole == 0 {
		t.Fatalf("packed %d, whole %d: both forms should occur", packed, whole)
	}
	en := &entry{}
	en.setState(nil, "s1")
	var buf kvstore.State
	if en.hasState() || en.hasRecord() || en.view(&buf) != nil {
		t.Fatal("an entry without a state record has one")
	}
}

// A plan reads with the compiled plan's fingerprint and is not a record.
func TestEntryPlanIsNotARecord(t *testing.T) {
	next := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	en := &entry{compiled: sched{Plan: "fp"}}
	en.setPlan(packedState{next: next.UnixNano()})
	if en.hasRecord() || !en.hasState() {
		t.Fatal("a plan is reported as a record, or not at all")
	}
	st := en.current()
	if st.Plan != "fp" || !st.Next.Equal(next) {
		t.Fatalf("plan state %+v", st)
	}
	en.clearPlan()
	if en.hasState() {
		t.Fatal("clearPlan kept the plan")
	}
	en.setState(&kvstore.State{Plan: "fp"}, "")
	en.clearPlan()
	if !en.hasRecord() {
		t.Fatal("clearPlan dropped a record")
	}
}

// An entry fits the 352-byte size class: a scheduler holds one per
// schedule, and the next class up costs 32 MB at a million.
func TestEntryIsSmall(t *testing.T) {
	if n := unsafe.Sizeof(entry{}); n > 352 {
		t.Errorf("an entry is %d bytes, want at most 352", n)
	}
}
