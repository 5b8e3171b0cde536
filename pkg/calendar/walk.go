package calendar

import (
	"strconv"
	"time"
)

// workWalk is AddWorking's state as it goes through the calendar a day at
// a time (step) or a run of regular days at once (see jump.go): the next
// date to count, the working time left, the instant counted up to and the
// last date with working time, for the 10-year horizon.
type workWalk struct {
	c        *Calendar
	from     time.Time
	count    time.Duration
	day      date
	rem      time.Duration
	cur      time.Time
	lastWork date
	// curOf, when set, is a date whose last working interval's end cur
	// is, not yet computed (a jump passed over it).
	curOf    date
	curStale bool
	ex       *Explanation
}

// newWorkWalk starts counting d of working time from t.
func newWorkWalk(c *Calendar, t time.Time, d time.Duration, ex *Explanation) *workWalk {
	day, _, _ := c.local(t)
	return &workWalk{c: c, from: t, count: d, day: day, rem: d, cur: t, lastWork: day, ex: ex}
}

// current is cur, computing it first when a jump left it pending.
func (w *workWalk) current() time.Time {
	if w.curStale {
		spans := w.c.workSpans(w.curOf)
		w.cur, w.curStale = spans[len(spans)-1].end, false
	}
	return w.cur
}

// step counts w.day: the working time of its intervals after cur. done
// is true with the result when the count ends in it; the error wraps
// ErrNoWorkingTime past the 10-year horizon and ErrOutOfRange past year
// 9999.
func (w *workWalk) step() (time.Time, bool, error) {
	c := w.c
	spans := c.workSpans(w.day)
	if len(spans) > 0 {
		cur := w.current()
		for _, s := range spans {
			if !s.end.After(cur) {
				continue
			}
			start := s.start
			if cur.After(start) {
				start = cur
			}
			avail := s.end.Sub(start)
			if w.rem <= avail {
				end := start.Add(w.rem).In(c.loc)
				w.ex.used(start, end)
				if end.After(maxTime) {
					return time.Time{}, false, outOfRange(w.from, w.count.String()+" of working time")
				}
				return end, true, nil
			}
			w.ex.used(start, s.end)
			w.rem -= avail
			cur = s.end
		}
		w.cur = cur
		w.lastWork = w.day
	} else {
		w.ex.skip(c, w.day)
	}
	if w.day = w.day.add(1); w.lastWork.addYears(horizonYears).before(w.day) {
		return time.Time{}, false, noWorkingTime(w.current())
	}
	if w.day.unixDays() >= stopDays {
		return time.Time{}, false, outOfRange(w.from, w.count.String()+" of working time")
	}
	return time.Time{}, false, nil
}

// walk steps until the count ends, spending a unit of m per day.
func (w *workWalk) walk(m *meter) (time.Time, error) { return stepUntil(m, w.step) }

// stepUntil calls step until it is done or fails, spending a unit of m
// per call.
func stepUntil(m *meter, step func() (time.Time, bool, error)) (time.Time, error) {
	for {
		if err := m.spend(1); err != nil {
			return time.Time{}, err
		}
		if r, done, err := step(); done || err != nil {
			return r, err
		}
	}
}

// dayWalk is AddWorkingDays's state: the last date counted or passed
// over, the working days left, the direction (1 forward, -1 backward) and
// the last working day, for the 10-year horizon.
type dayWalk struct {
	c         *Calendar
	from      time.Time
	count     int
	day       date
	sec, nsec int
	n         int
	dir       int
	last      date
	ex        *Explanation
}

// newDayWalk starts counting n working days from t (backwards when n < 0).
func newDayWalk(c *Calendar, t time.Time, n int, ex *Explanation) *dayWalk {
	day, sec, nsec := c.local(t)
	w := &dayWalk{c: c, from: t, count: n, day: day, sec: sec, nsec: nsec, n: n, dir: 1, last: day, ex: ex}
	if n < 0 {
		w.n, w.dir = -n, -1
	}
	return w
}

// pastHorizon reports whether d is more than 10 years past the last
// working day, in the walk's direction.
func (w *dayWalk) pastHorizon(d date) bool {
	if w.dir < 0 {
		return d.before(w.last.addYears(-horizonYears))
	}
	return w.last.addYears(horizonYears).before(d)
}

// step moves to the next date (the previous one, backwards) and counts it
// when it is a working day; done is true once n days are counted.
func (w *dayWalk) step() (bool, error) {
	c := w.c
	if w.day = w.day.add(w.dir); c.isWorkingDate(w.day) {
		w.n--
		w.last = w.day
		w.ex.count(c, w.day)
		return w.n == 0, nil
	}
	w.ex.skip(c, w.day)
	if w.pastHorizon(w.day) {
		return false, w.noWorkingTime()
	}
	if x := w.day.unixDays(); x >= stopDays || x < startDays {
		return false, outOfRange(w.from, w.countText())
	}
	return false, nil
}

// noWorkingTime is the horizon's error, in the walk's direction.
func (w *dayWalk) noWorkingTime() error {
	if w.dir < 0 {
		return noWorkingTimeBefore(w.from)
	}
	return noWorkingTime(w.from)
}

// result is the same wall-clock time as from on the date reached.
func (w *dayWalk) result() (time.Time, error) {
	r := w.c.atWall(w.day, w.sec, w.nsec)
	if r.After(maxTime) || r.Before(minTime) {
		return time.Time{}, outOfRange(w.from, w.countText())
	}
	return r, nil
}

// countText is the count for errors: "3 working days", "-1 working day".
func (w *dayWalk) countText() string {
	if w.count == 1 || w.count == -1 {
		return strconv.Itoa(w.count) + " working day"
	}
	return strconv.Itoa(w.count) + " working days"
}

// walk steps until n days are counted, spending a unit of m per day.
func (w *dayWalk) walk(m *meter) (time.Time, error) {
	for {
		if err := m.spend(1); err != nil {
			return time.Time{}, err
		}
		done, err := w.step()
		if err != nil {
			return time.Time{}, err
		}
		if done {
			return w.result()
		}
	}
}
