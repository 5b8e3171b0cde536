package calendar

import (
	"slices"
	"time"
)

// Working-time arithmetic jumps instead of walking where it can: its cost
// grows with the years a count spans, not with its days.
//
// A date is regular when no change of UTC offset touches its wall-clock
// readings (00:00 to 24:00, ends included): each reading is then one
// instant, all at the same offset, so the date's working time is its
// hours' wall-clock length, it starts after every earlier date's working
// time has ended, and the walk would count all of it. Over a run of
// regular dates the walk therefore counts exactly the wall-clock hours of
// the run's working dates (weekdays with hours, no holiday), which a
// count per weekday minus the holidays gives at once. AddWorking jumps
// over a whole run (a calendar year cut at its irregular dates) when the
// count does not end in it, else over whole weeks of it; it walks the
// irregular dates, the week the count ends in and the date it starts on.
// AddWorkingDays counts dates, which offsets do not touch: its runs are
// whole years. Both keep the walk's 10-year horizon exactly: a jump
// reports ErrNoWorkingTime where the walk would have.

// yearFacts are what a jump needs to know of one calendar year.
type yearFacts struct {
	y          int
	first, end int64 // unix days of 1 January y and of 1 January y+1
	// holidays are the year's holidays as runs of unix days [lo, hi),
	// sorted, disjoint and not touching.
	holidays []span64
	// irregular are the unix days of the year that a change of UTC offset
	// touches, and its half days (AddWorking only), sorted and distinct.
	irregular []int64
	runs      []dayRun // a buffer for eachHolidayRun
}

// span64 is a run of unix days [lo, hi).
type span64 struct{ lo, hi int64 }

// factsOf computes year y's facts, spending a unit of m per holiday run
// and zone period looked at; zones (nil for AddWorkingDays, which does not
// need them) gives the offset changes.
// The facts reuse f's slices: the caller holds one year's facts at a time.
func (c *Calendar) factsOf(m *meter, y int, zones *zoneYears, f *yearFacts) error {
	*f = yearFacts{y: y, first: daysOf(y, time.January, 1), end: daysOf(y+1, time.January, 1),
		holidays: f.holidays[:0], irregular: f.irregular[:0], runs: f.runs}
	f.runs = c.eachHolidayRun(y, f.runs, func(run dayRun, _ hit) {
		f.holidays = append(f.holidays, span64{run.from.unixDays(), run.to.unixDays() + 1})
	})
	if err := m.spend(1 + len(f.holidays)); err != nil {
		return err
	}
	slices.SortFunc(f.holidays, func(a, b span64) int { return int(a.lo - b.lo) })
	merged := f.holidays[:0]
	for _, h := range f.holidays {
		if n := len(merged); n > 0 && h.lo <= merged[n-1].hi {
			merged[n-1].hi = max(merged[n-1].hi, h.hi)
			continue
		}
		merged = append(merged, h)
	}
	f.holidays = merged
	if zones != nil {
		var err error
		if f.irregular, err = zones.irregular(m, y, f.first, f.end, f.irregular); err != nil {
			return err
		}
		f.irregular = c.withHalfDays(y, f.irregular)
	}
	return nil
}

// zoneYears finds the days of each year that changes of UTC offset
// touch, for one arithmetic call. Once Go derives the zone's offsets from
// its rule (past the zone's last listed transition, which it shows by
// cutting a period at a UTC new year with no change of offset) the changes
// repeat every 400 years, the Gregorian cycle of 146,097 days (20,871
// weeks), so a year 400 years after one looked up is that year shifted.
type zoneYears struct {
	c *Calendar
	// ruled is the first year whose changes, lead-in included, come from
	// the rule (0: none seen yet).
	ruled int
	// byCycle holds the days (from 1 January) of ruled years looked up,
	// by year mod 400.
	byCycle map[int][]int64
}

// irregular appends to out the days of year y [first, end) that changes
// of offset touch.
func (z *zoneYears) irregular(m *meter, y int, first, end int64, out []int64) ([]int64, error) {
	key := ((y % 400) + 400) % 400
	if z.ruled != 0 && y-400 >= z.ruled {
		if rel, ok := z.byCycle[key]; ok {
			for _, r := range rel {
				out = append(out, first+r)
			}
			return out, m.spend(1)
		}
	}
	days, looked, ruleCut := z.c.irregularDays(first, end, out)
	if err := m.spend(looked); err != nil {
		return nil, err
	}
	if ruleCut && z.ruled == 0 {
		z.ruled = y + 1
	}
	if z.ruled != 0 && y >= z.ruled {
		if z.byCycle == nil {
			z.byCycle = make(map[int][]int64)
		}
		rel := make([]int64, len(days))
		for i, d := range days {
			rel[i] = d - first
		}
		z.byCycle[key] = rel
	}
	return days, nil
}

// irregularDays lists the unix days in [first, end) whose readings a
// change of UTC offset touches, how many periods it looked at, and whether
// Go cut a period at 1 January 00:00 UTC with no change of offset (it
// derives offsets from the zone's rule there). A change at instant T from
// offset o1 to o2 touches the readings from T+min(o1, o2) to T+max(o1, o2):
// those skipped, or those read twice. A cut between periods of the same
// offset touches nothing.
// The days are appended to buf.
func (c *Calendar) irregularDays(first, end int64, buf []int64) (days []int64, looked int, ruleCut bool) {
	days = buf
	to := (end + 2) * secondsPerDay
	p := c.zonePeriod((first - 2) * secondsPerDay)
	looked = 1
	for p.end < to {
		q := c.zonePeriod(p.end)
		looked++
		if q.off == p.off {
			ruleCut = ruleCut || p.end == first*secondsPerDay
		} else {
			lo, hi := p.end+min(p.off, q.off), p.end+max(p.off, q.off)
			// Day x's readings [x*86400, (x+1)*86400] meet [lo, hi].
			for x := floorDiv(lo-1, secondsPerDay); x <= floorDiv(hi, secondsPerDay); x++ {
				if x >= first && x < end {
					days = append(days, x)
				}
			}
		}
		p = q
	}
	slices.Sort(days)
	return slices.Compact(days), looked, ruleCut
}

// wallSeconds is the wall-clock working time of each weekday, in seconds.
func (c *Calendar) wallSeconds() [7]int64 {
	var w [7]int64
	for wd, spans := range c.hours {
		for _, s := range spans {
			w[wd] += int64(s.end - s.start)
		}
	}
	return w
}

// runCount is what a run of dates holds: its working dates, and their
// wall-clock working time in seconds.
type runCount struct{ days, secs int64 }

// weekCount counts the dates of [a, b) with working hours, holidays
// included.
func weekCount(wall *[7]int64, a, b int64) runCount {
	var rc runCount
	if b <= a {
		return rc
	}
	q, r := (b-a)/7, (b-a)%7
	wd0 := floorMod(a+4, 7)
	for k := range int64(7) {
		wd := (wd0 + k) % 7
		if wall[wd] == 0 {
			continue
		}
		n := q
		if k < r {
			n++
		}
		rc.days += n
		rc.secs += n * wall[wd]
	}
	return rc
}

// count sums the working dates of [a, b), within f's year.
func (f *yearFacts) count(wall *[7]int64, a, b int64) runCount {
	rc := weekCount(wall, a, b)
	i, _ := slices.BinarySearchFunc(f.holidays, a, func(h span64, x int64) int { return cmpInt(h.hi, x+1) })
	for _, h := range f.holidays[i:] {
		if h.lo >= b {
			break
		}
		off := weekCount(wall, max(h.lo, a), min(h.hi, b))
		rc.days -= off.days
		rc.secs -= off.secs
	}
	return rc
}

// holidayRun returns the holiday run holding unix day x, if any.
func (f *yearFacts) holidayRun(x int64) (span64, bool) {
	i, _ := slices.BinarySearchFunc(f.holidays, x, func(h span64, x int64) int { return cmpInt(h.hi, x+1) })
	if i < len(f.holidays) && f.holidays[i].lo <= x {
		return f.holidays[i], true
	}
	return span64{}, false
}

// cmpInt compares two integers.
func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// firstWorking and lastWorking find the first and last working dates of
// [a, b), which holds at least one.
func (f *yearFacts) firstWorking(wall *[7]int64, a int64) int64 {
	for {
		if h, ok := f.holidayRun(a); ok {
			a = h.hi
			continue
		}
		if wall[weekdayOfDays(a)] > 0 {
			return a
		}
		a++
	}
}

func (f *yearFacts) lastWorking(wall *[7]int64, b int64) int64 {
	for x := b - 1; ; {
		if h, ok := f.holidayRun(x); ok {
			x = h.lo - 1
			continue
		}
		if wall[weekdayOfDays(x)] > 0 {
			return x
		}
		x--
	}
}

// addWorkingJump is AddWorking by runs and weeks (see above).
func (c *Calendar) addWorkingJump(m *meter, t time.Time, d time.Duration) (time.Time, error) {
	w := newWorkWalk(c, t, d, nil)
	wall := c.wallSeconds()
	zones := &zoneYears{c: c}
	var f yearFacts
	f.y = MaxYear + 1 // none yet
	for first := true; ; first = false {
		if err := m.spend(1); err != nil {
			return time.Time{}, err
		}
		x := w.day.unixDays()
		if first || w.day.y > MaxYear {
			if r, done, err := w.step(); done || err != nil {
				return r, err
			}
			continue
		}
		if f.y != w.day.y {
			if err := c.factsOf(m, w.day.y, zones, &f); err != nil {
				return time.Time{}, err
			}
		}
		i, irregular := slices.BinarySearch(f.irregular, x)
		if irregular {
			if r, done, err := w.step(); done || err != nil {
				return r, err
			}
			continue
		}
		runEnd := f.end
		if i < len(f.irregular) {
			runEnd = f.irregular[i]
		}
		jumped, err := w.jump(&f, &wall, x, runEnd)
		if err != nil {
			return time.Time{}, err
		}
		if jumped {
			continue
		}
		// The count ends in this run: jump its whole weeks before the
		// week it ends in, then walk that week.
		if err := jumpWeeks(m, x, runEnd, func(a int64) (bool, error) { return w.jump(&f, &wall, a, a+7) }); err != nil {
			return time.Time{}, err
		}
		for k := 0; k < 7 && w.day.unixDays() < runEnd; k++ {
			if r, done, err := w.step(); done || err != nil {
				return r, err
			}
		}
	}
}

// jumpWeeks jumps the whole weeks from unix day a on that end by end, by
// jump (given a week's first day), until one holds the count's end.
func jumpWeeks(m *meter, a, end int64, jump func(a int64) (bool, error)) error {
	for ; a+7 <= end; a += 7 {
		jumped, err := jump(a)
		if err != nil || !jumped {
			return err
		}
		if err := m.spend(1); err != nil {
			return err
		}
	}
	return nil
}

// jump passes over the regular dates [a, b) (a being w.day) when the
// count does not end in them, as the walk would; jumped is false, and
// nothing changes, when it ends in them. The error is the walk's
// ErrNoWorkingTime when the horizon passes in them.
func (w *workWalk) jump(f *yearFacts, wall *[7]int64, a, b int64) (jumped bool, err error) {
	rc := f.count(wall, a, b)
	if time.Duration(rc.secs)*time.Second >= w.rem {
		return false, nil
	}
	horizon := w.lastWork.addYears(horizonYears).unixDays()
	if rc.days == 0 {
		if horizon < b {
			return false, noWorkingTime(w.current())
		}
		w.day = dateOfDays(b)
		return true, nil
	}
	if horizon < b-1 && horizon < f.firstWorking(wall, a) {
		return false, noWorkingTime(w.current())
	}
	last := dateOfDays(f.lastWorking(wall, b))
	w.rem -= time.Duration(rc.secs) * time.Second
	w.lastWork, w.curOf, w.curStale = last, last, true
	w.day = dateOfDays(b)
	return true, nil
}

// addWorkingDaysJump is AddWorkingDays by years and weeks (see above).
func (c *Calendar) addWorkingDaysJump(m *meter, t time.Time, n int) (time.Time, error) {
	w := newDayWalk(c, t, n, nil)
	wall := c.wallSeconds()
	var f yearFacts
	f.y = MaxYear + 1
	for {
		if err := m.spend(1); err != nil {
			return time.Time{}, err
		}
		next := w.day.add(1) // the next date to count
		if next.y > MaxYear {
			done, err := w.step()
			if err != nil {
				return time.Time{}, err
			}
			if done {
				return w.result()
			}
			continue
		}
		if f.y != next.y {
			if err := c.factsOf(m, next.y, nil, &f); err != nil {
				return time.Time{}, err
			}
		}
		a := next.unixDays()
		jumped, err := w.jump(&f, &wall, a, f.end)
		if err != nil {
			return time.Time{}, err
		}
		if jumped {
			continue
		}
		if err := jumpWeeks(m, a, f.end, func(a int64) (bool, error) { return w.jump(&f, &wall, a, a+7) }); err != nil {
			return time.Time{}, err
		}
		for k := 0; k < 7 && w.day.add(1).unixDays() < f.end; k++ {
			done, err := w.step()
			if err != nil {
				return time.Time{}, err
			}
			if done {
				return w.result()
			}
		}
	}
}

// jump passes over the dates [a, b) (a being the date after w.day) when
// fewer than the days left are working days in them, as the walk would.
func (w *dayWalk) jump(f *yearFacts, wall *[7]int64, a, b int64) (jumped bool, err error) {
	rc := f.count(wall, a, b)
	if rc.days >= int64(w.n) {
		return false, nil
	}
	horizon := w.last.addYears(horizonYears).unixDays()
	// The walk checks the horizon on each date it passes over that is
	// not a working day: those before the first working day here, or all
	// of them when there is none.
	if rc.days == 0 {
		if horizon < b-1 {
			return false, noWorkingTime(w.from)
		}
		w.day = dateOfDays(b - 1)
		return true, nil
	}
	if horizon < b-2 && horizon < f.firstWorking(wall, a)-1 {
		return false, noWorkingTime(w.from)
	}
	w.n -= int(rc.days)
	w.last = dateOfDays(f.lastWorking(wall, b))
	w.day = dateOfDays(b - 1)
	return true, nil
}
