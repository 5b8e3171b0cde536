package calendar_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
)

// chain is every fire of s after from, n of them, each found from the
// step before it as the scheduler finds them (cronx.ExplainAfter).
func chain(s cronx.Schedule, from time.Time, n int) []cronx.Step {
	var out []cronx.Step
	st := cronx.Explain(s, from)
	for len(out) < n && !st.At.IsZero() {
		out = append(out, st)
		st = cronx.ExplainAfter(s, st.At, st.Nominal)
	}
	return out
}

// TestScheduleMovedPastLaterOccurrences is issue 51's second case: a
// business-hours-only schedule whose Thursday occurrence moves past
// Friday's (a holiday, rolled to Tuesday 17:30, then moved to Wednesday
// 09:00). The plan looked only at occurrences after the previous fire
// (Tuesday 09:00), so Good Friday's occurrence was never considered: the
// next fire was Friday 04-10, and neither the ledger nor preview --explain
// mentioned 04-03. Found from the occurrence the previous fire came from,
// every occurrence fires or says why not.
func TestScheduleMovedPastLaterOccurrences(t *testing.T) {
	ny := `{"zone": "America/New_York", "hours": {"mon-fri": ["09:00-17:30"]},
	  "holidays": [{"name": "Good Friday", "easter": -2}, {"name": "Easter Monday", "easter": 1}]}`
	sixDay := `{"zone": "Europe/Paris", "hours": {"mon-sat": ["09:00-17:00"]}, "holidays": []}`
	tests := []struct {
		name     string
		cal      string
		expr     string
		roll     calendar.Roll
		from     string
		want     []string // fire <- nominal
		oldNext  string   // what Next from the moved fire gave: the occurrence it passed over
		explains string   // a moved fire's explanation names its occurrence
	}{
		{
			name: "good friday", cal: ny, expr: "30 17 * * 4,5", roll: calendar.RollNext, from: "2026-04-01T00:00:00-04:00",
			want: []string{
				"2026-04-07T09:00:00-04:00 <- 2026-04-02T17:30:00-04:00",
				"2026-04-08T09:00:00-04:00 <- 2026-04-03T17:30:00-04:00",
				"2026-04-10T09:00:00-04:00 <- 2026-04-09T17:30:00-04:00",
				"2026-04-13T09:00:00-04:00 <- 2026-04-10T17:30:00-04:00",
			},
			oldNext:  "2026-04-10T09:00:00-04:00",
			explains: `rolled to the next business day: holiday "Good Friday"`,
		},
		{
			// Sunday under modified_following on a six-day week: Saturday
			// 18:00 moves to Monday 09:00, Sunday 18:00 rolls to Monday
			// 18:00 and moves to Tuesday 09:00.
			name: "sunday on a six-day week", cal: sixDay, expr: "0 18 * * 6,0", roll: calendar.RollModifiedFollowing, from: "2026-06-05T00:00:00+02:00",
			want: []string{
				"2026-06-08T09:00:00+02:00 <- 2026-06-06T18:00:00+02:00",
				"2026-06-09T09:00:00+02:00 <- 2026-06-07T18:00:00+02:00",
				"2026-06-15T09:00:00+02:00 <- 2026-06-13T18:00:00+02:00",
			},
			oldNext:  "2026-06-15T09:00:00+02:00",
			explains: "rolled to the next business day",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, tt.cal)
			s := calendar.Schedule{Base: mustCron(t, tt.expr, c.Location()), Calendar: c, Roll: tt.roll, BusinessHoursOnly: true}
			from, err := time.Parse(time.RFC3339, tt.from)
			if err != nil {
				t.Fatal(err)
			}
			got := chain(s, from, len(tt.want))
			var lines []string
			for _, st := range got {
				lines = append(lines, st.At.Format(time.RFC3339)+" <- "+st.Nominal.In(c.Location()).Format(time.RFC3339))
			}
			if strings.Join(lines, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("fires\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(tt.want, "\n"))
			}
			if !strings.Contains(got[1].Moved, tt.explains) {
				t.Errorf("second fire explained %q, want it to say %q", got[1].Moved, tt.explains)
			}
			// Next from the first (moved) fire's time alone starts past the
			// second fire's occurrence: it is what lost it.
			if old := s.Next(got[0].At); old.Format(time.RFC3339) != tt.oldNext {
				t.Errorf("Next(%s) = %s, want %s (the plan from the fire's time)", got[0].At, old, tt.oldNext)
			}
		})
	}
}

// TestScheduleMergedRunsAreOneStep: a business-hours-only schedule firing
// every second merges a weekend's 226,800 occurrences into the next
// working start in a few runs (Skips with Through), rather than walking
// each one and giving up after 10,000 (which ended the schedule).
func TestScheduleMergedRunsAreOneStep(t *testing.T) {
	c := mustParse(t, usCalendar)
	s := calendar.Schedule{Base: mustCron(t, "* * * * * *", c.Location()), Calendar: c, BusinessHoursOnly: true}
	from := time.Date(2026, 6, 5, 17, 59, 58, 500, c.Location()) // a Friday
	got := chain(s, from, 3)
	want := []time.Time{
		time.Date(2026, 6, 5, 17, 59, 59, 0, c.Location()),
		time.Date(2026, 6, 8, 9, 0, 0, 0, c.Location()), // 18:00 Friday moved to Monday's start
		time.Date(2026, 6, 8, 9, 0, 1, 0, c.Location()),
	}
	for i, w := range want {
		if i >= len(got) || !got[i].At.Equal(w) {
			t.Fatalf("fires %v, want %v", got, want)
		}
	}
	// The weekend and Monday's early occurrences merged into Monday 09:00,
	// said in a few runs.
	third := got[2]
	if third.SkippedCount == 0 || third.SkippedCount > 10 {
		t.Fatalf("the step after Monday 09:00 passed over %d runs, want a few: %+v", third.SkippedCount, third.Skipped)
	}
	if !third.Skipped[len(third.Skipped)-1].Through.Equal(want[1]) {
		t.Errorf("the last run ends %s, want at Monday's start", third.Skipped[len(third.Skipped)-1].Through)
	}
	for _, sk := range third.Skipped {
		if !strings.HasPrefix(sk.Reason, "merged into the fire at 2026-06-08T09:00:00-04:00") {
			t.Errorf("skip %+v, want merged into Monday's start", sk)
		}
	}
}

// TestScheduleRunStopsAtADSTGap: the run merged into a fire on a day
// rolled to the fire's date ends at the fire's wall-clock time on that
// day; when that time falls in the day's DST gap it ends before the gap,
// not at its end, or an occurrence shifted to the gap's end was passed
// over unnamed. Found by TestPlanMatchesModel (seed
// 13126804446614483051): Chatham's DST begins Sunday 2026-09-27 at 02:45
// (to 03:45); "15,45 2 * * 0,6" with dst_gap shift fires that Sunday at
// 02:15 and 03:45, both rolled to Friday.
func TestScheduleRunStopsAtADSTGap(t *testing.T) {
	c := mustParse(t, `{"zone": "Pacific/Chatham", "weekend": ["sat", "sun"], "holidays": []}`)
	base, err := cronx.Parse("15,45 2 * * 0,6", cronx.Options{Location: c.Location(), Gap: cronx.GapShift})
	if err != nil {
		t.Fatal(err)
	}
	s := calendar.Schedule{Base: base, Calendar: c, Roll: calendar.RollPrevious}
	got := chain(s, time.Date(2026, 9, 24, 0, 0, 0, 0, c.Location()), 3)
	var lines []string
	for _, st := range got {
		lines = append(lines, st.At.Format(time.RFC3339)+" <- "+st.Nominal.In(c.Location()).Format(time.RFC3339))
	}
	want := []string{
		"2026-09-25T02:15:00+12:45 <- 2026-09-26T02:15:00+12:45",
		"2026-09-25T02:45:00+12:45 <- 2026-09-26T02:45:00+12:45",
		"2026-09-25T03:45:00+12:45 <- 2026-09-27T03:45:00+13:45",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("fires\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// TestScheduleExplainsTheRecurrencesDSTMove: a calendar over a cron says
// the cron's own move of an occurrence (a DST gap) as the cron alone
// does, and joins it to the calendar's when both move it.
func TestScheduleExplainsTheRecurrencesDSTMove(t *testing.T) {
	c := mustParse(t, `{"zone": "America/New_York", "holidays": [{"name": "Spring", "dates": ["2027-03-14"]}]}`)
	base, err := cronx.Parse("30 2 * * *", cronx.Options{Location: c.Location()})
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2027, 3, 13, 12, 0, 0, 0, c.Location())
	for _, tc := range []struct {
		roll calendar.Roll
		want string
	}{
		{calendar.RollSkip, `skipped 2027-03-14 03:00: holiday "Spring" (date 2027-03-14)`},
		{calendar.RollNext, `moved: 02:30 does not exist on 2027-03-14 (DST gap); fires when the gap ends; rolled to the next business day: holiday "Spring" (date 2027-03-14)`},
	} {
		st := chain(calendar.Schedule{Base: base, Calendar: c, Roll: tc.roll}, from, 1)[0]
		if got := strings.Join(st.Notes(c.Location(), "2006-01-02 15:04"), "; "); got != tc.want {
			t.Errorf("roll %s: %q\nwant %q", tc.roll, got, tc.want)
		}
	}
	c = mustParse(t, `{"zone": "America/New_York", "holidays": []}`)
	st := chain(calendar.Schedule{Base: base, Calendar: c}, from, 1)[0]
	if got := strings.Join(st.Notes(c.Location(), "2006-01-02 15:04"), "; "); !strings.Contains(got, "DST gap") {
		t.Errorf("no holiday: %q, want the DST gap said", got)
	}
}
