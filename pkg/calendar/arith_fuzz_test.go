package calendar

import (
	"math/rand/v2"
	"testing"
	"time"
)

// FuzzAddWorkingMatchesWalk holds AddWorking and AddWorkingDays to the
// reference walks on calendars, starts and counts drawn from the fuzzed
// seed (see genCalendar): the fuzzer explores the generator's space.
// The counts are bounded by the calendar's work near the start (see
// capWork and capDays), so that no input walks more than walkSpanDays
// dates either way: a calendar open one day a year (a holiday from 01-18
// to 01-16) made the generator's "150 weeks of the calendar's hours" a
// walk of a thousand years each way, 0.8 s an input alone (3 s with
// -race), reported as a hung fuzzer on a starved CI box.
func FuzzAddWorkingMatchesWalk(f *testing.F) {
	for _, s := range []uint64{0, 1, 52, 1 << 40, 12345678901} {
		f.Add(s, uint64(s*7+1))
	}
	f.Fuzz(func(t *testing.T, seed, stream uint64) {
		r := rand.New(rand.NewPCG(seed, stream))
		js := genCalendar(r, "")
		c, err := Parse([]byte(js))
		if err != nil {
			t.Fatalf("the generator made a bad calendar: %v\n%s", err, js)
		}
		from := genInstant(r)
		if r.IntN(4) == 0 { // start near a change of offset
			if _, end := from.In(c.loc).ZoneBounds(); !end.IsZero() {
				from = end.Add(time.Duration(r.IntN(7201)-3600) * time.Second)
			}
		}
		checkWorkingMatchesWalk(t, js, c, from, capWork(c, from, genCount(r, c)))
		checkDaysMatchesWalk(t, js, c, from, capDays(c, from, genDays(r, c)))
	})
}

// walkSpanDays is how many dates either side of its start the fuzz
// target's counts may walk: about 13.7 years, more than the 10-year
// horizon (where a walk without work ends) and than the 150 weeks
// genCount and genDays draw on a calendar without holidays, so that most
// counts beside a closure of whole years (up to 14) are kept as drawn.
const walkSpanDays = 5000

// capWork is d when both the working time in the walkSpanDays dates after
// from and that in the walkSpanDays dates before it are at least d, and
// otherwise d folded into the smaller of them (1 ns when it is none), so
// that counting d forwards and backwards ends within walkSpanDays dates
// (for 1 ns: at the first work, or at the 10-year horizon).
func capWork(c *Calendar, from time.Time, d time.Duration) time.Duration {
	avail := min(workNear(c, from, 1, d), workNear(c, from, -1, d))
	switch {
	case avail == 0:
		return time.Nanosecond
	case d <= avail:
		return d
	}
	return 1 + (d-1)%avail
}

// workNear is the working time after from (before it when dir is -1) in
// from's date and the walkSpanDays dates after (before) it, summed until
// it reaches limit.
func workNear(c *Calendar, from time.Time, dir int, limit time.Duration) time.Duration {
	day, _, _ := c.local(from)
	var sum time.Duration
	for i := 0; i <= walkSpanDays && sum < limit; i++ {
		for _, s := range c.workSpans(day.add(dir * i)) {
			lo, hi := s.start, s.end
			if dir > 0 && lo.Before(from) {
				lo = from
			}
			if dir < 0 && hi.After(from) {
				hi = from
			}
			if hi.After(lo) {
				sum += hi.Sub(lo)
			}
		}
	}
	return sum
}

// capDays is capWork for a count of working days: n folded into the
// fewer of the working dates among the walkSpanDays dates after and
// before from's date (1 when there are none).
func capDays(c *Calendar, from time.Time, n int) int {
	avail := min(daysNear(c, from, 1, n), daysNear(c, from, -1, n))
	switch {
	case avail == 0:
		return 1
	case n <= avail:
		return n
	}
	return 1 + (n-1)%avail
}

// daysNear counts the working dates among the walkSpanDays dates after
// from's date (before it when dir is -1), up to limit.
func daysNear(c *Calendar, from time.Time, dir, limit int) int {
	day, _, _ := c.local(from)
	n := 0
	for i := 1; i <= walkSpanDays && n < limit; i++ {
		if c.isWorkingDate(day.add(dir * i)) {
			n++
		}
	}
	return n
}
