package fires

import (
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestDecideFirstSlot covers where a new schedule's first slot comes from:
// every slot due since the spec's write is owed, however late the first
// scheduler sees it, and a one-shot is owed its slot however late it is
// seen.
func TestDecideFirstSlot(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	every := cronx.Interval{Every: time.Second}
	tests := []struct {
		name      string
		sched     cronx.Schedule
		now       time.Time
		written   time.Time
		oneShot   time.Time
		threshold time.Duration // spec's
		want      time.Time
	}{
		{name: "write time unknown: first slot after now", sched: every, now: at(10.5), want: at(11)},
		{name: "written 2.5 s ago: the slots since are owed", sched: every, now: at(10.5), written: at(8), want: at(8)},
		{name: "written on a slot boundary: that slot is owed", sched: every, now: at(10.5), written: at(9), want: at(9)},
		// Every slot since the write is owed, however long ago (issue
		// 51: a schedule indexed, then every scheduler stopped before its
		// first fire, lost the slots in between without a trace): the
		// misfire policy then fires or records each one.
		{name: "written long ago: every slot since is owed", sched: every, now: at(100.5), written: at(1), want: at(1)},
		{name: "written long ago, whatever the threshold", sched: every, now: at(100.5), written: at(1), threshold: 5 * time.Second, want: at(1)},
		{name: "written in the future (clock skew): from now", sched: every, now: at(10.5), written: at(20), want: at(11)},
		{name: "one-shot seen after its time", sched: cronx.At(at(3)), now: at(10.5), written: at(4), oneShot: at(3), want: at(3)},
		{name: "one-shot seen an hour late", sched: cronx.At(at(3)), now: at(3603), written: at(4), oneShot: at(3), want: at(3)},
		{name: "one-shot in the future", sched: cronx.At(at(30)), now: at(10.5), written: at(4), oneShot: at(30), want: at(30)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(Input{Now: tt.now, Schedule: tt.sched, Written: tt.written, At: tt.oneShot,
				MisfireThreshold: time.Minute, Policy: compile.Policy{MisfireThreshold: tt.threshold}})
			if d.Action != ActInit || !d.Next.Equal(tt.want) {
				t.Fatalf("Decide = %v next %s, want ActInit next %s", d.Action, d.Next.Format(time.RFC3339Nano), tt.want.Format(time.RFC3339Nano))
			}
			// A record an operator action created first (empty plan) is
			// planned the same way, keeping the action's fields.
			paused := &kvstore.State{Paused: &kvstore.Pause{Note: "freeze"}}
			d = Decide(Input{Now: tt.now, Schedule: tt.sched, Plan: "p", State: paused, Written: tt.written, At: tt.oneShot,
				MisfireThreshold: time.Minute, Policy: compile.Policy{MisfireThreshold: tt.threshold}})
			if d.Action != ActReplan || !d.Next.Equal(tt.want) {
				t.Fatalf("Decide on an operator-created record = %v next %s, want ActReplan next %s", d.Action, d.Next.Format(time.RFC3339Nano), tt.want.Format(time.RFC3339Nano))
			}
		})
	}
}

// TestDecideFromMovedFiresOccurrence: the slot after a fire that a
// calendar moved is planned from the occurrence that fire came from, so
// an occurrence moved past it (issue 51: Good Friday's, rolled to Tuesday
// 17:30 and moved to Wednesday 09:00, behind Thursday's moved to Tuesday
// 09:00) fires, said moved, instead of vanishing. The same through a
// misfire that walks over both.
func TestDecideFromMovedFiresOccurrence(t *testing.T) {
	cal, err := calendar.Parse([]byte(`{"zone": "America/New_York", "hours": {"mon-fri": ["09:00-17:30"]},
	  "holidays": [{"name": "Good Friday", "easter": -2}, {"name": "Easter Monday", "easter": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	base, err := cronx.NewCron("30 17 * * 4,5", cronx.Options{Location: cal.Location()})
	if err != nil {
		t.Fatal(err)
	}
	s := calendar.Schedule{Base: base, Calendar: cal, Roll: calendar.RollNext, BusinessHoursOnly: true}
	ny := cal.Location()
	tue := time.Date(2026, 4, 7, 9, 0, 0, 0, ny)
	thu := time.Date(2026, 4, 2, 17, 30, 0, 0, ny)
	wed := time.Date(2026, 4, 8, 9, 0, 0, 0, ny)
	st := &kvstore.State{Plan: "p", Next: tue.UTC(), NextNominal: thu.UTC(), NextReason: "outside working hours: moved to the next working start"}
	in := Input{Now: tue, Plan: "p", Schedule: s, State: st, MisfireThreshold: time.Minute}
	d := Decide(in)
	if d.Action != ActClaim || !d.Slot.Equal(tue) || !d.Next.Equal(wed) || !strings.Contains(d.Step.Moved, "Good Friday") {
		t.Fatalf("Decide = %v slot %s next %s (%q), want a claim of Tuesday 09:00 and Good Friday's occurrence next, Wednesday 09:00", d.Action, d.Slot, d.Next, d.Step.Moved)
	}
	// Back a week later with skip: both slots are recorded missed, one by
	// one, and the schedule goes on from the next occurrence after them.
	in.Now = time.Date(2026, 4, 9, 12, 0, 0, 0, ny)
	d = Decide(in)
	if d.Action != ActMisfire || d.Missed != 2 || !d.LastMissed.Equal(wed) || !d.Next.Equal(time.Date(2026, 4, 10, 9, 0, 0, 0, ny)) {
		t.Fatalf("Decide = %v missed %d (last %s) next %s, want Tuesday and Wednesday missed, Friday 09:00 next", d.Action, d.Missed, d.LastMissed, d.Next)
	}
}
