package calendar_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
)

var _ cronx.Schedule = calendar.Schedule{}

// fires walks s n times from after.
func fires(s cronx.Schedule, after time.Time, n int) []time.Time {
	var out []time.Time
	for range n {
		after = s.Next(after)
		if after.IsZero() {
			break
		}
		out = append(out, after)
	}
	return out
}

// TestScheduleBusinessHoursOnly: a 02:00 weekday fire moves to 09:00 the
// same day; a weekend fire moves to Monday 09:00.
func TestScheduleBusinessHoursOnly(t *testing.T) {
	us := mustParse(t, usCalendar)
	spec := mustParse(t, specExample)
	ny := us.Location()
	for _, tt := range []struct {
		name  string
		s     calendar.Schedule
		after string
		at    string
		nom   string
		moved string
	}{
		{"02:00 weekday", calendar.Schedule{Base: mustCron(t, "0 2 * * 1-5", ny), Calendar: us, BusinessHoursOnly: true},
			"2026-01-12T00:00:00-05:00", "2026-01-12T09:00:00-05:00", "2026-01-12T02:00:00-05:00",
			"outside working hours: moved to the next working start"},
		{"inside hours", calendar.Schedule{Base: mustCron(t, "0 11 * * 1-5", ny), Calendar: us, BusinessHoursOnly: true},
			"2026-01-12T00:00:00-05:00", "2026-01-12T11:00:00-05:00", "2026-01-12T11:00:00-05:00", ""},
		{"18:00 Friday", calendar.Schedule{Base: mustCron(t, "0 18 * * 5", ny), Calendar: us, BusinessHoursOnly: true},
			"2026-01-09T12:00:00-05:00", "2026-01-12T09:00:00-05:00", "2026-01-09T18:00:00-05:00",
			"outside working hours: moved to the next working start"},
		{"Saturday, rolled", calendar.Schedule{Base: mustCron(t, "0 2 * * 6", ny), Calendar: us, Roll: calendar.RollNext, BusinessHoursOnly: true},
			"2026-01-09T12:00:00-05:00", "2026-01-12T09:00:00-05:00", "2026-01-10T02:00:00-05:00",
			"rolled to the next business day: no working hours on Saturday; outside working hours: moved to the next working start"},
		{"Saturday after hours", calendar.Schedule{Base: mustCron(t, "0 15 * * 6", ny), Calendar: spec, BusinessHoursOnly: true},
			"2026-01-23T12:00:00-05:00", "2026-01-26T09:00:00-05:00", "2026-01-24T15:00:00-05:00",
			"outside working hours: moved to the next working start"},
		// With the default skip roll, business hours move a weekend fire
		// to Monday 09:00 (the seed's business-hours mode).
		{"Saturday, business hours", calendar.Schedule{Base: mustCron(t, "0 2 * * 6", ny), Calendar: us, BusinessHoursOnly: true},
			"2026-01-09T12:00:00-05:00", "2026-01-12T09:00:00-05:00", "2026-01-10T02:00:00-05:00",
			"outside working hours: moved to the next working start"},
		// Without business hours, skip drops a weekend occurrence.
		{"Saturday, skipped", calendar.Schedule{Base: mustCron(t, "0 2 * * 6", ny), Calendar: us},
			"2026-01-09T12:00:00-05:00", "", "", ""},
	} {
		st := tt.s.Explain(ts(t, tt.after))
		if tt.at == "" {
			if st.SkippedCount == 0 || st.Skipped[0].Reason != "no working hours on Saturday" {
				t.Errorf("%s: Skipped %+v", tt.name, st.Skipped)
			}
			continue
		}
		if !st.At.Equal(ts(t, tt.at)) || !st.Nominal.Equal(ts(t, tt.nom)) || st.Moved != tt.moved {
			t.Errorf("%s: Plan = At %s Nominal %s Moved %q; want %s %s %q", tt.name, fmtT(st.At), fmtT(st.Nominal), st.Moved, tt.at, tt.nom, tt.moved)
		}
		if next := tt.s.Next(ts(t, tt.after)); !next.Equal(st.At) {
			t.Errorf("%s: Next = %s, Plan.At = %s", tt.name, fmtT(next), fmtT(st.At))
		}
		if st.At.Location() != us.Location() && st.At.Location() != spec.Location() {
			t.Errorf("%s: At in %s", tt.name, st.At.Location())
		}
	}
}

// TestScheduleMerges: the nominal occurrences of a weekend all move to
// Monday 09:00 and fire once there; Next stays strictly increasing.
func TestScheduleMerges(t *testing.T) {
	us := mustParse(t, usCalendar)
	ny := us.Location()
	for _, tt := range []struct {
		expr string
		want []string
	}{
		// Friday 18:00 .. Monday 08:00 all move to Monday 09:00.
		{"0 * * * *", []string{"2026-01-09T17:00:00-05:00", "2026-01-12T09:00:00-05:00", "2026-01-12T10:00:00-05:00", "2026-01-12T11:00:00-05:00"}},
		// Saturday, Sunday and Monday 02:00 all move to Monday 09:00.
		{"0 2 * * *", []string{"2026-01-12T09:00:00-05:00", "2026-01-13T09:00:00-05:00", "2026-01-14T09:00:00-05:00"}},
	} {
		s := calendar.Schedule{Base: mustCron(t, tt.expr, ny), Calendar: us, Roll: calendar.RollNext, BusinessHoursOnly: true}
		after := ts(t, "2026-01-09T16:30:00-05:00") // Friday
		got := fires(s, after, len(tt.want))
		for i := range tt.want {
			if i >= len(got) || !got[i].Equal(ts(t, tt.want[i])) {
				t.Fatalf("%q: fires %v, want %v", tt.expr, got, tt.want)
			}
		}
		// Strictly increasing, always in working hours, one fire per
		// Monday 09:00, for weeks.
		prev, mondays := after, 0
		for _, f := range fires(s, after, 1000) {
			if !f.After(prev) || !us.IsWorkingTime(f) {
				t.Fatalf("%q: fire %s after %s", tt.expr, fmtT(f), fmtT(prev))
			}
			if f.Weekday() == time.Monday && f.Hour() == 9 && f.Minute() == 0 {
				mondays++
			}
			prev = f
		}
		if weeks := int(prev.Sub(after).Hours()/24/7) + 1; mondays > weeks {
			t.Errorf("%q: %d Monday 09:00 fires in %d weeks", tt.expr, mondays, weeks)
		}
	}
	// Plan says where the Monday fire came from.
	s := calendar.Schedule{Base: mustCron(t, "0 2 * * *", ny), Calendar: us, Roll: calendar.RollNext, BusinessHoursOnly: true}
	st := s.Explain(ts(t, "2026-01-09T16:30:00-05:00"))
	if !st.Nominal.Equal(ts(t, "2026-01-10T02:00:00-05:00")) || st.SkippedCount != 0 ||
		st.Moved != "rolled to the next business day: no working hours on Saturday; outside working hours: moved to the next working start" {
		t.Errorf("Plan = %+v", st)
	}
}

// TestScheduleRolls: each Roll on a holiday and on a weekend day.
func TestScheduleRolls(t *testing.T) {
	c := mustParse(t, `{"zone": "America/New_York", "weekend": ["sat", "sun"], "holidays": [
		{"name": "Christmas Day", "date": "12-25", "observed": "nearest"},
		{"name": "Company day", "dates": ["2026-07-31"]}
	]}`)
	ny := c.Location()
	const christmas = `holiday "Christmas Day" (fixed 12-25, observed nearest)`
	const company = `holiday "Company day" (date 2026-07-31)`
	for _, tt := range []struct {
		expr  string
		roll  calendar.Roll
		after string
		at    string
		moved string
		skips []string // "nominal|reason"
	}{
		{"0 10 24,25 12 *", calendar.RollSkip, "2026-12-24T12:00:00-05:00", "2029-12-24T10:00:00-05:00", "", []string{
			"2026-12-25T10:00:00-05:00|" + christmas,
			"2027-12-24T10:00:00-05:00|" + christmas + ", observed for Saturday 2027-12-25",
			"2027-12-25T10:00:00-05:00|" + christmas,
			"2028-12-24T10:00:00-05:00|no working hours on Sunday",
			"2028-12-25T10:00:00-05:00|" + christmas,
		}},
		{"0 10 25 12 *", calendar.RollNext, "2026-12-01T00:00:00-05:00", "2026-12-28T10:00:00-05:00",
			"rolled to the next business day: " + christmas, nil},
		{"0 10 25 12 *", calendar.RollPrevious, "2026-12-01T00:00:00-05:00", "2026-12-24T10:00:00-05:00",
			"rolled to the previous business day: " + christmas, nil},
		{"0 10 25 12 *", calendar.RollModifiedFollowing, "2026-12-01T00:00:00-05:00", "2026-12-28T10:00:00-05:00",
			"rolled to the next business day: " + christmas, nil},
		// The last business day of July is a holiday: modified following
		// stays in July.
		{"0 10 31 7 *", calendar.RollModifiedFollowing, "2026-07-01T00:00:00-04:00", "2026-07-30T10:00:00-04:00",
			"rolled to the previous business day (modified following: the next one is in another month): " + company, nil},
		{"0 10 31 7 *", calendar.RollNext, "2026-07-01T00:00:00-04:00", "2026-08-03T10:00:00-04:00",
			"rolled to the next business day: " + company, nil},
		// 31 January 2026 is a Saturday.
		{"0 10 L * *", calendar.RollModifiedFollowing, "2026-01-15T00:00:00-05:00", "2026-01-30T10:00:00-05:00",
			"rolled to the previous business day (modified following: the next one is in another month): no working hours on Saturday", nil},
		{"0 10 L * *", calendar.RollPrevious, "2026-01-15T00:00:00-05:00", "2026-01-30T10:00:00-05:00",
			"rolled to the previous business day: no working hours on Saturday", nil},
		// 1 February 2026 is a Sunday.
		{"0 10 1 * *", calendar.RollModifiedFollowing, "2026-01-15T00:00:00-05:00", "2026-02-02T10:00:00-05:00",
			"rolled to the next business day: no working hours on Sunday", nil},
		// Modified preceding: the previous business day, unless that is
		// in another month. 1 February 2026 is a Sunday: the Friday
		// before is in January, so Monday 2 February.
		{"0 10 1 * *", calendar.RollModifiedPreceding, "2026-01-15T00:00:00-05:00", "2026-02-02T10:00:00-05:00",
			"rolled to the next business day (modified preceding: the previous one is in another month): no working hours on Sunday", nil},
		{"0 10 25 12 *", calendar.RollModifiedPreceding, "2026-12-01T00:00:00-05:00", "2026-12-24T10:00:00-05:00",
			"rolled to the previous business day: " + christmas, nil},
		// 31 January 2026 is a Saturday: Friday 30 is in January.
		{"0 10 L * *", calendar.RollModifiedPreceding, "2026-01-15T00:00:00-05:00", "2026-01-30T10:00:00-05:00",
			"rolled to the previous business day: no working hours on Saturday", nil},
		// Daily, rolled back: the weekend merges into Friday's own fire.
		{"0 10 * * *", calendar.RollPrevious, "2026-01-09T10:00:00-05:00", "2026-01-12T10:00:00-05:00", "",
			[]string{"2026-01-10T10:00:00-05:00|merged into the fire at 2026-01-09T10:00:00-05:00",
				"2026-01-11T10:00:00-05:00|merged into the fire at 2026-01-09T10:00:00-05:00"}},
		{"0 10 * * *", calendar.Roll(42), "2026-01-09T10:00:00-05:00", "2026-01-12T10:00:00-05:00", "",
			[]string{"2026-01-10T10:00:00-05:00|no working hours on Saturday", "2026-01-11T10:00:00-05:00|no working hours on Sunday"}},
	} {
		s := calendar.Schedule{Base: mustCron(t, tt.expr, ny), Calendar: c, Roll: tt.roll}
		st := s.Explain(ts(t, tt.after))
		name := fmt.Sprintf("%q %v", tt.expr, tt.roll)
		if !st.At.Equal(ts(t, tt.at)) || st.Moved != tt.moved {
			t.Errorf("%s: At %s Moved %q; want %s %q", name, fmtT(st.At), st.Moved, tt.at, tt.moved)
		}
		var skips []string
		for _, sk := range st.Skipped {
			skips = append(skips, sk.Nominal.Format(time.RFC3339)+"|"+sk.Reason)
		}
		if strings.Join(skips, "\n") != strings.Join(tt.skips, "\n") || st.SkippedCount != len(tt.skips) {
			t.Errorf("%s: Skipped (%d)\n%s\nwant\n%s", name, st.SkippedCount, strings.Join(skips, "\n"), strings.Join(tt.skips, "\n"))
		}
		if got := s.Next(ts(t, tt.after)); !got.Equal(st.At) {
			t.Errorf("%s: Next %s != Plan.At %s", name, fmtT(got), fmtT(st.At))
		}
	}
}

// TestScheduleNeverFires: nil parts, no business days, a finished base.
func TestScheduleNeverFires(t *testing.T) {
	closed := mustParse(t, `{"zone": "UTC", "hours": {}}`)
	us := mustParse(t, usCalendar)
	every := mustCron(t, "* * * * *", time.UTC)
	after := ts(t, "2026-01-05T00:00:00Z")
	for name, s := range map[string]calendar.Schedule{
		"nil base":        {Calendar: us},
		"nil calendar":    {Base: every},
		"no business day": {Base: every, Calendar: closed, Roll: calendar.RollNext},
		"no working time": {Base: every, Calendar: closed, BusinessHoursOnly: true, Roll: calendar.RollPrevious},
		"base ends":       {Base: cronx.Once{At: after.Add(-time.Hour)}, Calendar: us},
	} {
		if st := s.Explain(after); !st.At.IsZero() {
			t.Errorf("%s: fires at %s", name, fmtT(st.At))
		}
	}
	// Skipping gives up after 10,000 consecutive occurrences.
	s := calendar.Schedule{Base: every, Calendar: closed}
	st := s.Explain(after)
	if !st.At.IsZero() || st.SkippedCount != 10000 || len(st.Skipped) != 100 || st.Skipped[0].Reason != "no working hours on Monday" {
		t.Errorf("closed calendar: At %s, %d skipped (%d listed)", fmtT(st.At), st.SkippedCount, len(st.Skipped))
	}
	if !s.Next(after).IsZero() {
		t.Error("Next fires on a closed calendar")
	}
}

// TestScheduleConcurrent runs Plan from several goroutines (-race).
func TestScheduleConcurrent(t *testing.T) {
	c := mustParse(t, specExample)
	s := calendar.Schedule{Base: mustCron(t, "*/30 * * * *", c.Location()), Calendar: c, Roll: calendar.RollNext, BusinessHoursOnly: true}
	after := ts(t, "2026-12-20T00:00:00Z")
	want := fires(s, after, 50)
	done := make(chan bool)
	for range 4 {
		go func() {
			got := fires(s, after, 50)
			ok := len(got) == len(want)
			for i := range got {
				ok = ok && got[i].Equal(want[i])
			}
			done <- ok
		}()
	}
	for range 4 {
		if !<-done {
			t.Error("concurrent walks differ")
		}
	}
}

// TestScheduleFrequentOverHoliday: a schedule firing every second passes
// a whole holiday (86,400 occurrences) in one step per day, instead of
// giving up after 10,000 skipped occurrences.
func TestScheduleFrequentOverHoliday(t *testing.T) {
	cal := mustParse(t, `{"zone":"UTC","hours":{"mon-sun":["00:00-24:00"]},"holidays":[{"name":"Day off","dates":["2026-12-25","2026-12-26"]}]}`)
	for _, roll := range []calendar.Roll{calendar.RollSkip, calendar.RollPrevious} {
		s := calendar.Schedule{Base: mustCron(t, "* * * * * *", time.UTC), Calendar: cal, Roll: roll}
		st := s.Explain(ts(t, "2026-12-24T23:59:59Z"))
		if !st.At.Equal(ts(t, "2026-12-27T00:00:00Z")) {
			t.Fatalf("roll %s: next after the holidays = %s, want 2026-12-27T00:00:00Z (%d skipped)", roll, fmtT(st.At), st.SkippedCount)
		}
		if st.SkippedCount != 2 {
			t.Fatalf("roll %s: %d skip entries, want one per day: %+v", roll, st.SkippedCount, st.Skipped)
		}
	}
}

// TestScheduleHolidaysOnly: a calendar without hours or weekend skips and
// rolls on its holidays only (issue 13, item 4); business hours still
// default to Monday to Friday, 09:00-18:00.
func TestScheduleHolidaysOnly(t *testing.T) {
	us := mustParse(t, usHolidays)
	ny := us.Location()
	const christmas = `holiday "Christmas Day" (fixed 12-25, observed nearest)`
	for _, tt := range []struct {
		name, expr string
		roll       calendar.Roll
		bho        bool
		after      string
		want       []string // fire|moved
	}{
		{"daily fires on weekends", "0 10 * * *", calendar.RollSkip, false, "2026-01-09T12:00:00-05:00",
			[]string{"2026-01-10T10:00:00-05:00|", "2026-01-11T10:00:00-05:00|", "2026-01-12T10:00:00-05:00|"}},
		{"a holiday is skipped", "0 10 * * *", calendar.RollSkip, false, "2026-12-24T12:00:00-05:00",
			[]string{"2026-12-26T10:00:00-05:00|"}},
		{"a holiday rolls to Saturday", "0 10 25 12 *", calendar.RollNext, false, "2026-12-01T00:00:00-05:00",
			[]string{"2026-12-26T10:00:00-05:00|rolled to the next business day: " + christmas}},
		{"the last day of the month stays on Saturday", "0 10 L * *", calendar.RollPrevious, false, "2026-01-15T00:00:00-05:00",
			[]string{"2026-01-31T10:00:00-05:00|"}},
		{"business hours: Monday to Friday by default", "0 2 * * *", calendar.RollSkip, true, "2026-01-09T12:00:00-05:00",
			[]string{"2026-01-12T09:00:00-05:00|outside working hours: moved to the next working start",
				"2026-01-13T09:00:00-05:00|outside working hours: moved to the next working start"}},
	} {
		s := calendar.Schedule{Base: mustCron(t, tt.expr, ny), Calendar: us, Roll: tt.roll, BusinessHoursOnly: tt.bho}
		after := ts(t, tt.after)
		for i, w := range tt.want {
			at, moved, _ := strings.Cut(w, "|")
			st := s.Explain(after)
			if !st.At.Equal(ts(t, at)) || st.Moved != moved {
				t.Errorf("%s: fire %d = %s %q, want %s %q", tt.name, i, fmtT(st.At), st.Moved, at, moved)
				break
			}
			after = st.At
		}
	}
	for day, want := range map[string]bool{"2026-01-10": true, "2026-01-11": true, "2026-12-25": false, "2026-05-25": false, "2026-01-12": true} {
		d := local(t, ny, day+" 12:00")
		if got := us.IsBusinessDay(d); got != want {
			t.Errorf("IsBusinessDay(%s) = %v, want %v", day, got, want)
		}
		if got, work := us.IsWorkingDay(d), want && d.Weekday() != time.Saturday && d.Weekday() != time.Sunday; got != work {
			t.Errorf("IsWorkingDay(%s) = %v, want %v", day, got, work)
		}
	}
	if r := us.NonWorkingReason(local(t, ny, "2026-01-10 12:00")); r != "" {
		t.Errorf("Saturday: NonWorkingReason %q, want none", r)
	}
	// Working-time arithmetic keeps the default hours: Friday + 1 working
	// day is Monday.
	got, err := us.AddWorkingDaysContext(context.Background(), local(t, ny, "2026-01-09 10:00"), 1)
	checkTime(t, "AddWorkingDays(Friday, 1)", got, err, "2026-01-12T10:00:00-05:00")
}
