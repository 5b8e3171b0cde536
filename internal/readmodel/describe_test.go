package readmodel_test

import (
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestNextFiresMarksWhatTheStateSkips: the fires a pause covers are
// marked paused; skip-next marks the fires after them, as many as it
// counts; a DST gap is explained in the schedule's zone.
func TestNextFiresMarksWhatTheStateSkips(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	sched, err := cronx.Parse("30 2 * * *", cronx.Options{Location: ny})
	if err != nil {
		t.Fatal(err)
	}
	next := time.Date(2027, 3, 12, 2, 30, 0, 0, ny)
	st := &kvstore.State{Next: next, SkipNext: 1, Paused: &kvstore.Pause{Note: "x", Until: next.Add(25 * time.Hour)}}
	got := readmodel.NextFires("s", compile.Compiled{Schedule: sched}, st, next.Add(-time.Hour), 4, ny)
	if len(got) != 4 {
		t.Fatalf("%d fires, want 4", len(got))
	}
	wantSkip := []string{"paused", "paused", "skip-next", ""}
	for i, f := range got {
		if skip := f.Skip; len(skip) < len(wantSkip[i]) || skip[:len(wantSkip[i])] != wantSkip[i] || (wantSkip[i] == "" && skip != "") {
			t.Errorf("fire %d at %s: skip %q, want %q", i, f.At, skip, wantSkip[i])
		}
	}
	if dst := got[2]; dst.At.Hour() != 3 || len(dst.Notes) != 1 || dst.Notes[0] != "moved: 02:30 does not exist on 2027-03-14 (DST gap); fires when the gap ends" {
		t.Errorf("the DST gap's fire: %s %q", dst.At, dst.Notes)
	}
	if got := readmodel.NextFires("s", compile.Compiled{Schedule: sched}, &kvstore.State{}, next, 1, ny); len(got) != 1 || !got[0].At.Equal(next.AddDate(0, 0, 1)) {
		t.Errorf("a record without a next slot: %+v, want the first fire after now", got)
	}
}
