package calendar

import (
	"time"
)

// Counting backwards mirrors counting forwards (walk.go, jump.go): the
// walk goes a day at a time from t's date towards year 1, using the
// working intervals before the instant counted back to, latest first; a
// jump passes over a run of regular dates whose working time (or working
// days) is less than what is left, so that the count does not end in it.
// The 10-year horizon and the walk's errors are kept: a jump is taken
// only where the walk would pass the run without an error.

// backWalk is AddWorking's state counting backwards: the next date to
// count, the working time left, the instant counted back to (working
// time before it is what counts) and the last date with working time,
// for the 10-year horizon.
type backWalk struct {
	c        *Calendar
	from     time.Time
	count    time.Duration
	day      date
	rem      time.Duration
	cur      time.Time
	lastWork date
	ex       *Explanation
}

// newBackWalk starts counting d of working time back from t.
func newBackWalk(c *Calendar, t time.Time, d time.Duration, ex *Explanation) *backWalk {
	day, _, _ := c.local(t)
	return &backWalk{c: c, from: t, count: d, day: day, rem: d, cur: t, lastWork: day, ex: ex}
}

// countText is the count for errors: "-48h0m0s of working time".
func (w *backWalk) countText() string { return (-w.count).String() + " of working time" }

// step counts w.day backwards: the working time of its intervals before
// cur, latest first. done is true with the result when the count ends in
// it: an interval's start when it ends exactly there.
func (w *backWalk) step() (time.Time, bool, error) {
	c := w.c
	spans := c.workSpans(w.day)
	if len(spans) > 0 {
		cur := w.cur
		for i := len(spans) - 1; i >= 0; i-- {
			s := spans[i]
			if !s.start.Before(cur) {
				continue
			}
			end := s.end
			if cur.Before(end) {
				end = cur
			}
			avail := end.Sub(s.start)
			if w.rem <= avail {
				start := end.Add(-w.rem).In(c.loc)
				w.ex.used(start, end)
				if start.Before(minTime) {
					return time.Time{}, false, outOfRange(w.from, w.countText())
				}
				return start, true, nil
			}
			w.ex.used(s.start, end)
			w.rem -= avail
			cur = s.start
		}
		w.cur = cur
		w.lastWork = w.day
	} else {
		w.ex.skip(c, w.day)
	}
	if w.day = w.day.add(-1); w.day.before(w.lastWork.addYears(-horizonYears)) {
		return time.Time{}, false, noWorkingTimeBefore(w.cur)
	}
	if w.day.unixDays() < startDays {
		return time.Time{}, false, outOfRange(w.from, w.countText())
	}
	return time.Time{}, false, nil
}

// walk steps until the count ends, spending a unit of m per day.
func (w *backWalk) walk(m *meter) (time.Time, error) { return stepUntil(m, w.step) }

// jump passes backwards over the regular dates [a, b) (b-1 being w.day)
// when the count does not end in them and the walk would pass them
// without reaching the horizon; jumped is false, and nothing changes,
// otherwise.
func (w *backWalk) jump(f *yearFacts, wall *[7]int64, a, b int64) bool {
	rc := f.count(wall, a, b)
	if time.Duration(rc.secs)*time.Second >= w.rem {
		return false
	}
	horizon := w.lastWork.addYears(-horizonYears).unixDays()
	if rc.days == 0 {
		if a-1 < horizon {
			return false
		}
		w.day = dateOfDays(a - 1)
		return true
	}
	if f.lastWorking(wall, b) < horizon {
		return false
	}
	w.rem -= time.Duration(rc.secs) * time.Second
	w.lastWork = dateOfDays(f.firstWorking(wall, a))
	// As the walk leaves it: the start of the earliest interval counted.
	// The run is regular, so every earlier date's working time is before.
	w.cur = w.c.workSpans(w.lastWork)[0].start
	w.day = dateOfDays(a - 1)
	return true
}

// subWorkingJump is AddWorking backwards (d > 0 of working time before
// t), by runs and weeks as addWorkingJump.
func (c *Calendar) subWorkingJump(m *meter, t time.Time, d time.Duration) (time.Time, error) {
	w := newBackWalk(c, t, d, nil)
	wall := c.wallSeconds()
	zones := &zoneYears{c: c}
	var f yearFacts
	f.y = MaxYear + 1 // none yet
	for first := true; ; first = false {
		if err := m.spend(1); err != nil {
			return time.Time{}, err
		}
		x := w.day.unixDays()
		i, regular, err := c.regularAt(m, zones, &f, w.day)
		if err != nil {
			return time.Time{}, err
		}
		if first || !regular {
			if r, done, err := w.step(); done || err != nil {
				return r, err
			}
			continue
		}
		runStart := f.first
		if i > 0 {
			runStart = f.irregular[i-1] + 1
		}
		if w.jump(&f, &wall, runStart, x+1) {
			continue
		}
		if err := jumpWeeksBack(m, runStart, x+1, func(b int64) bool { return w.jump(&f, &wall, b-7, b) }); err != nil {
			return time.Time{}, err
		}
		for k := 0; k < 7 && w.day.unixDays() >= runStart; k++ {
			if r, done, err := w.step(); done || err != nil {
				return r, err
			}
		}
	}
}

// jumpWeeksBack jumps the whole weeks ending at b, then b-7, ..., down to
// start, by jump (given a week's end), until one does not jump.
func jumpWeeksBack(m *meter, start, b int64, jump func(b int64) bool) error {
	for ; b-7 >= start; b -= 7 {
		if !jump(b) {
			return nil
		}
		if err := m.spend(1); err != nil {
			return err
		}
	}
	return nil
}

// subWorkingDaysJump is AddWorkingDays backwards (w.dir < 0), by years
// and weeks as addWorkingDaysJump.
func (c *Calendar) subWorkingDaysJump(m *meter, w *dayWalk) (time.Time, error) {
	wall := c.wallSeconds()
	var f yearFacts
	f.y = MaxYear + 1
	for {
		if err := m.spend(1); err != nil {
			return time.Time{}, err
		}
		next := w.day.add(-1) // the next date to count
		if next.y <= 1 || next.y > MaxYear {
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
		b := next.unixDays() + 1
		if w.jumpBack(&f, &wall, f.first, b) {
			continue
		}
		if err := jumpWeeksBack(m, f.first, b, func(b int64) bool { return w.jumpBack(&f, &wall, b-7, b) }); err != nil {
			return time.Time{}, err
		}
		for k := 0; k < 7 && w.day.add(-1).unixDays() >= f.first; k++ {
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

// jumpBack passes backwards over the dates [a, b) (b-1 being the date
// before w.day) when fewer than the days left are working days in them
// and the walk would pass them without reaching the horizon.
func (w *dayWalk) jumpBack(f *yearFacts, wall *[7]int64, a, b int64) bool {
	rc := f.count(wall, a, b)
	if rc.days >= int64(w.n) {
		return false
	}
	horizon := w.last.addYears(-horizonYears).unixDays()
	if rc.days == 0 {
		if a < horizon {
			return false
		}
		w.day = dateOfDays(a)
		return true
	}
	if f.lastWorking(wall, b) < horizon {
		return false
	}
	w.n -= int(rc.days)
	w.last = dateOfDays(f.firstWorking(wall, a))
	w.day = dateOfDays(a)
	return true
}
