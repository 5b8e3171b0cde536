package calendar

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/testcal"
)

// sparseCalendar is open one minute a week, with holidays.
const sparseCalendar = testcal.MinuteAWeek

func parseT(t testing.TB, js string) *Calendar {
	t.Helper()
	c, err := Parse([]byte(js))
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, js)
	}
	return c
}

// arithCases is how many random cases a property test runs:
// JETSCHED_ARITH_CASES, or 400 (60 with -short).
func arithCases(t *testing.T) int {
	if s := os.Getenv("JETSCHED_ARITH_CASES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("JETSCHED_ARITH_CASES=%q: %v", s, err)
		}
		return n
	}
	if testing.Short() {
		return 60
	}
	return 400
}

// sameOutcome reports whether two results of an arithmetic call are the
// same: the same instant in the same zone, or errors with the same text.
func sameOutcome(a time.Time, aerr error, b time.Time, berr error) bool {
	if aerr != nil || berr != nil {
		return aerr != nil && berr != nil && aerr.Error() == berr.Error()
	}
	return a.Equal(b) && a.Location().String() == b.Location().String()
}

// checkWorkingMatchesWalk holds AddWorking to the reference walk for one
// calendar, start and count.
func checkWorkingMatchesWalk(t *testing.T, js string, c *Calendar, from time.Time, d time.Duration) {
	t.Helper()
	want, werr := c.refAddWorking(from, d)
	got, err := c.AddWorkingContext(context.Background(), from, d)
	if !sameOutcome(got, err, want, werr) {
		t.Fatalf("%s\nAddWorking(%s, %v) = %v, %v\nthe walk gives %v, %v", js, from.Format(time.RFC3339Nano), d, got, err, want, werr)
	}
	if err == nil {
		if n, err := c.WorkingTimeBetween(context.Background(), from, got); err != nil || n != d {
			t.Fatalf("%s\nWorkingTimeBetween(%s, %s) = %v, %v; want %v", js, from.Format(time.RFC3339Nano), got.Format(time.RFC3339Nano), n, err, d)
		}
	}
	// Backwards, against the backward walk.
	want, werr = newBackWalk(c, from, d, nil).walk(newMeter(context.Background(), "walk", jumpBudget))
	got, err = c.AddWorkingContext(context.Background(), from, -d)
	if !sameOutcome(got, err, want, werr) {
		t.Fatalf("%s\nAddWorking(%s, -%v) = %v, %v\nthe walk gives %v, %v", js, from.Format(time.RFC3339Nano), d, got, err, want, werr)
	}
	if err == nil {
		if n, err := c.WorkingTimeBetween(context.Background(), from, got); err != nil || n != -d {
			t.Fatalf("%s\nWorkingTimeBetween(%s, %s) = %v, %v; want -%v", js, from.Format(time.RFC3339Nano), got.Format(time.RFC3339Nano), n, err, d)
		}
	}
}

// checkDaysMatchesWalk holds AddWorkingDays to the reference walk.
func checkDaysMatchesWalk(t *testing.T, js string, c *Calendar, from time.Time, n int) {
	t.Helper()
	want, werr := c.refAddWorkingDays(from, n)
	got, err := c.AddWorkingDaysContext(context.Background(), from, n)
	if !sameOutcome(got, err, want, werr) {
		t.Fatalf("%s\nAddWorkingDays(%s, %d) = %v, %v\nthe walk gives %v, %v", js, from.Format(time.RFC3339Nano), n, got, err, want, werr)
	}
	// Backwards, against the backward walk; the count back is -n.
	want, werr = newDayWalk(c, from, -n, nil).walk(newMeter(context.Background(), "walk", jumpBudget))
	got, err = c.AddWorkingDaysContext(context.Background(), from, -n)
	if !sameOutcome(got, err, want, werr) {
		t.Fatalf("%s\nAddWorkingDays(%s, -%d) = %v, %v\nthe walk gives %v, %v", js, from.Format(time.RFC3339Nano), n, got, err, want, werr)
	}
	if err == nil {
		if k, err := c.WorkingDaysBetween(context.Background(), from, got); err != nil || k != -n {
			t.Fatalf("%s\nWorkingDaysBetween(%s, %s) = %d, %v; want -%d", js, from.Format(time.RFC3339Nano), got.Format(time.RFC3339Nano), k, err, n)
		}
	}
}

// forRandomCalendars calls check with arithCases random calendars (see
// genCalendar), three times each, drawn from a generator seeded with seed.
func forRandomCalendars(t *testing.T, seed uint64, check func(js string, c *Calendar, r *rand.Rand)) {
	r := rand.New(rand.NewPCG(52, seed))
	for range arithCases(t) {
		js := genCalendar(r, "")
		c := parseT(t, js)
		for range 3 {
			check(js, c, r)
		}
	}
}

// TestAddWorkingMatchesWalk: over random calendars (own hours, a weekend
// or the default; split, partial and 24-hour days; every kind of holiday
// rule, observed shifts and closures of whole years), zones with and
// without DST, random starts and counts, AddWorking gives exactly what the
// day-by-day walk gives, errors included.
func TestAddWorkingMatchesWalk(t *testing.T) {
	t.Parallel()
	forRandomCalendars(t, 5, func(js string, c *Calendar, r *rand.Rand) {
		checkWorkingMatchesWalk(t, js, c, genInstant(r), genCount(r, c))
	})
}

// TestAddWorkingDaysMatchesWalk is TestAddWorkingMatchesWalk for
// AddWorkingDays.
func TestAddWorkingDaysMatchesWalk(t *testing.T) {
	t.Parallel()
	forRandomCalendars(t, 6, func(js string, c *Calendar, r *rand.Rand) {
		checkDaysMatchesWalk(t, js, c, genInstant(r), genDays(r, c))
	})
}

// TestAddWorkingMatchesWalkAtDSTChanges starts counts on the days the
// clocks change, in the property calendars' zones, where a week has
// another length in absolute time.
func TestAddWorkingMatchesWalkAtDSTChanges(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(52, 7))
	for _, zone := range arithZones {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		var changes []time.Time
		for at := time.Date(2009, 1, 1, 0, 0, 0, 0, time.UTC); at.Year() < 2027; {
			_, end := at.In(loc).ZoneBounds()
			if end.IsZero() {
				break
			}
			changes = append(changes, end)
			at = end
		}
		for _, ch := range changes {
			js := genCalendar(r, zone)
			c := parseT(t, js)
			for _, off := range []time.Duration{-26 * time.Hour, -time.Hour, 0, time.Hour} {
				checkWorkingMatchesWalk(t, js, c, ch.Add(off), genCount(r, c))
			}
		}
	}
}

// TestAddWorkingPastYear9999: a count that the calendar cannot reach
// before the end of year 9999 is ErrOutOfRange, naming the year, and costs
// no more than the years it sums (a walk would have gone on for millions of
// days and returned a time no record can hold).
func TestAddWorkingPastYear9999(t *testing.T) {
	t.Parallel()
	c := parseT(t, sparseCalendar)
	from := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	for _, d := range []time.Duration{30000 * time.Hour, 876000 * time.Hour} {
		_, err := c.AddWorkingContext(context.Background(), from, d)
		if !errors.Is(err, ErrOutOfRange) || !strings.Contains(err.Error(), "9999") {
			t.Fatalf("AddWorking(%v) on a minute a week: %v, want ErrOutOfRange naming 9999", d, err)
		}
	}
	// One working day a year (1 January): 36525 of them are past 9999.
	yearly := parseT(t, `{"zone": "UTC", "hours": {"mon-sun": ["09:00-17:00"]}, "holidays": [{"name": "Closed", "from": "01-02", "to": "12-31"}]}`)
	if _, err := yearly.AddWorkingDaysContext(context.Background(), from, 36525); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("AddWorkingDays(36525) on a day a year: %v, want ErrOutOfRange", err)
	}
	// Just inside the range: the last working minutes of 9999 count.
	got, err := c.AddWorkingContext(context.Background(), time.Date(9999, 12, 1, 0, 0, 0, 0, time.UTC), 2*time.Minute)
	if err != nil || got.Year() != 9999 || got.Month() != time.December {
		t.Fatalf("two minutes from December 9999: %v, %v", got, err)
	}
	if _, err := c.AddWorkingContext(context.Background(), time.Date(9999, 12, 1, 0, 0, 0, 0, time.UTC), 5*time.Minute); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("five minutes from December 9999: %v, want ErrOutOfRange", err)
	}
}

// TestAddWorkingLongCountIsExact: 6000 working hours on a minute a week
// (about 7,000 years) is the 360,000th working Monday at 09:01, counted
// here Monday by Monday with IsWorkingDay alone.
func TestAddWorkingLongCountIsExact(t *testing.T) {
	t.Parallel()
	c := parseT(t, sparseCalendar)
	from := time.Date(2026, 1, 5, 0, 0, 0, 0, c.loc) // a Monday
	got, err := c.AddWorkingContext(context.Background(), from, 6000*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if want := nthWorkingMonday(c, from, 360000); !got.Equal(want) {
		t.Fatalf("6000 whours: %v, want %v", got, want)
	}
}

// nthWorkingMonday is 09:01 on the n-th working Monday from from's date
// on, in c's zone.
func nthWorkingMonday(c *Calendar, from time.Time, n int) time.Time {
	y, m, d := from.In(c.loc).Date()
	day := time.Date(y, m, d, 12, 0, 0, 0, c.loc)
	for ; ; day = day.AddDate(0, 0, 7) {
		if c.IsWorkingDay(day) {
			if n--; n == 0 {
				y, m, d := day.Date()
				return time.Date(y, m, d, 9, 1, 0, 0, c.loc)
			}
		}
	}
}

// TestAddWorkingStopsWithItsContext: a cancelled context stops a long
// count with the context's error.
func TestAddWorkingStopsWithItsContext(t *testing.T) {
	t.Parallel()
	c := parseT(t, sparseCalendar)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	from := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	if _, err := c.AddWorkingContext(ctx, from, 6000*time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("AddWorkingContext with a cancelled context: %v", err)
	}
	if _, err := c.AddWorkingDaysContext(ctx, from, 36000); !errors.Is(err, context.Canceled) {
		t.Fatalf("AddWorkingDaysContext with a cancelled context: %v", err)
	}
	if _, _, err := c.AddWorkingExplainContext(ctx, from, 600*time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("AddWorkingExplainContext with a cancelled context: %v", err)
	}
}

// TestAddWorkingExplainHasABudget: an explanation lists every interval and
// skipped day, so it has a budget; past it the error is ErrOverBudget
// (while the plain count answers).
func TestAddWorkingExplainHasABudget(t *testing.T) {
	t.Parallel()
	c := parseT(t, sparseCalendar)
	from := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	if _, _, err := c.AddWorkingExplainContext(context.Background(), from, 6000*time.Hour); !errors.Is(err, ErrOverBudget) {
		t.Fatalf("AddWorkingExplain(6000h) on a minute a week: %v, want ErrOverBudget", err)
	}
	if _, _, err := c.AddWorkingDaysExplainContext(context.Background(), from, 36000); !errors.Is(err, ErrOverBudget) {
		t.Fatalf("AddWorkingDaysExplain(36000) on a day a week: %v, want ErrOverBudget", err)
	}
	got, ex, err := c.AddWorkingExplainContext(context.Background(), from, 10*time.Minute)
	want, _ := c.AddWorkingContext(context.Background(), from, 10*time.Minute)
	if err != nil || !got.Equal(want) || len(ex.Intervals) != 10 {
		t.Fatalf("AddWorkingExplain(10m) = %v (%d intervals), %v; AddWorking gives %v", got, len(ex.Intervals), err, want)
	}
}

// TestHorizonEdgesMatchWalk: a closure that ends the day before, on, or
// the days after the 10-year horizon (from the last working day, 29
// February among them) gives the walk's answer: a result, or
// ErrNoWorkingTime.
func TestHorizonEdgesMatchWalk(t *testing.T) {
	t.Parallel()
	for _, zone := range []string{"UTC", "America/New_York"} {
		for _, open := range []string{"2029-12-31", "2029-12-30", "2028-02-29"} {
			last, _ := time.Parse(time.DateOnly, open)
			horizon := last.AddDate(horizonYears, 0, 0)
			for shift := -2; shift <= 2; shift++ {
				reopen := horizon.AddDate(0, 0, shift) // the first working day after the closure
				closeTo := reopen.AddDate(0, 0, -1)
				js := fmt.Sprintf(`{"zone": %q, "hours": {"mon-sun": ["00:00-24:00"]}, "holidays": [
					{"name": "closed", "dates": [%s]}]}`, zone, quotedDays(last.AddDate(0, 0, 1), closeTo))
				c := parseT(t, js)
				from := time.Date(last.Year(), last.Month(), last.Day(), 6, 0, 0, 0, c.loc)
				for _, d := range []time.Duration{18 * time.Hour, 30 * time.Hour, 70 * time.Hour, 9600 * time.Hour} {
					checkWorkingMatchesWalk(t, js[:60], c, from, d)
				}
				for _, n := range []int{1, 2, 5, 400} {
					checkDaysMatchesWalk(t, js[:60], c, from.AddDate(0, 0, -1), n)
				}
			}
		}
	}
}

// quotedDays lists the days from a to b as JSON strings.
func quotedDays(a, b time.Time) string {
	var out []string
	for d := a; !d.After(b); d = d.AddDate(0, 0, 1) {
		out = append(out, `"`+d.Format(time.DateOnly)+`"`)
	}
	return strings.Join(out, ", ")
}

// TestAddWorkingBudget: a count that needs more units of work than its
// budget stops with ErrOverBudget, saying why (here with a budget of
// 2,000 units, reached about 300 years into a count to 9999; the real one,
// 4,194,304, takes a calendar of thousands of holiday rules).
func TestAddWorkingBudget(t *testing.T) {
	t.Parallel()
	c := parseT(t, sparseCalendar)
	from := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	_, err := c.addWorkingJump(newMeter(context.Background(), "AddWorking", 2000), from, 876000*time.Hour)
	if !errors.Is(err, ErrOverBudget) || !strings.Contains(err.Error(), "holiday rules") {
		t.Fatalf("AddWorking over a budget of 2000: %v", err)
	}
	_, err = c.addWorkingDaysJump(newMeter(context.Background(), "AddWorkingDays", 2000), from, 36000)
	if !errors.Is(err, ErrOverBudget) {
		t.Fatalf("AddWorkingDays over a budget of 2000: %v", err)
	}
}
