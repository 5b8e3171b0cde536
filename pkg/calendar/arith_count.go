package calendar

import (
	"context"
	"fmt"
	"math"
	"time"
)

// WorkingDaysBetween counts the working days (the days
// [Calendar.AddWorkingDaysContext] counts: working hours and no holiday)
// among the dates of [a, b) in the calendar's zone: a's date counts, b's
// does not, as numpy's busday_count. When b is before a the count is
// negative: minus the working days of [b, a). So for a on a working day,
// WorkingDaysBetween(a, AddWorkingDays(a, n)) is n, and for any a and
// n > 0, WorkingDaysBetween(a, AddWorkingDays(a, -n)) is -n. Its cost
// grows with the years between a and b (whole years are summed); past the
// budget the error wraps [ErrOverBudget], and when ctx ends first it wraps
// ctx's error.
func (c *Calendar) WorkingDaysBetween(ctx context.Context, a, b time.Time) (int, error) {
	if b.Before(a) {
		n, err := c.WorkingDaysBetween(ctx, b, a)
		return -n, err
	}
	m := newMeter(ctx, "WorkingDaysBetween", jumpBudget)
	lo, _, _ := c.local(a)
	hi, _, _ := c.local(b)
	wall := c.wallSeconds()
	var f yearFacts
	var n int64
	for x, end := lo.unixDays(), hi.unixDays(); x < end; {
		if err := m.spend(1); err != nil {
			return 0, err
		}
		d := dateOfDays(x)
		if d.y < 1 || d.y > MaxYear {
			if c.isWorkingDate(d) {
				n++
			}
			x++
			continue
		}
		if err := c.factsOf(m, d.y, nil, &f); err != nil {
			return 0, err
		}
		to := min(end, f.end)
		n += f.count(&wall, x, to).days
		x = to
	}
	return int(n), nil
}

// WorkingTimeBetween is the working time in [a, b): elapsed time inside
// working intervals, as [Calendar.AddWorkingContext] counts it (a
// 00:00-24:00 day is 23 or 25 hours when the clocks change). When b is
// before a it is negative: minus the working time of [b, a), counted
// backwards from a as AddWorkingContext counts a negative duration. So
// WorkingTimeBetween(a, AddWorking(a, d)) is d for any a and d, forwards
// or backwards. (Where clocks went back across midnight, as St John's did
// at 00:01 until 2011, the readings of two dates interleave and each
// direction counts the overlap from its own side: there alone the
// forward and backward counts of one range can differ.) Like
// AddWorkingContext it sums whole runs of regular days and walks only the
// days the clocks change on and the first and last dates. The error wraps
// [ErrOutOfRange] when the working time is longer than a time.Duration
// holds (about 292 years), [ErrOverBudget] past the budget, and ctx's
// error when ctx ends first.
func (c *Calendar) WorkingTimeBetween(ctx context.Context, a, b time.Time) (time.Duration, error) {
	m := newMeter(ctx, "WorkingTimeBetween", jumpBudget)
	if b.Before(a) {
		w := &timeCount{c: c, lo: b, hi: a, cur: a, back: true}
		d, err := w.run(m)
		return -d, err
	}
	w := &timeCount{c: c, lo: a, hi: b, cur: a}
	return w.run(m)
}

// timeCount counts the working time of [lo, hi) as AddWorking does,
// forwards from lo or (back) backwards from hi: cur is the instant
// counted up to (back: down to), secs and part the working time so far.
type timeCount struct {
	c      *Calendar
	lo, hi time.Time
	cur    time.Time
	back   bool
	secs   int64 // whole seconds
	part   time.Duration
}

// walk counts date d's working time beyond cur, within [lo, hi).
func (w *timeCount) walk(d date) {
	spans := w.c.workSpans(d)
	for k := range spans {
		s := spans[k]
		if w.back {
			s = spans[len(spans)-1-k]
			if !s.start.Before(w.cur) {
				continue
			}
			s.end = earlier(s.end, w.cur)
			w.cur = s.start
		} else {
			if !s.end.After(w.cur) {
				continue
			}
			if s.start.Before(w.cur) {
				s.start = w.cur
			}
			w.cur = s.end
		}
		start, end := s.start, earlier(s.end, w.hi)
		if start.Before(w.lo) {
			start = w.lo
		}
		if start.Before(end) {
			w.part += end.Sub(start)
		}
	}
	w.secs, w.part = w.secs+int64(w.part/time.Second), w.part%time.Second
}

// run counts, jumping runs of regular dates between the first and last.
func (w *timeCount) run(m *meter) (time.Duration, error) {
	c := w.c
	lo, _, _ := c.local(w.lo)
	hi, _, _ := c.local(w.hi)
	first, last := lo.unixDays(), hi.unixDays()
	wall := c.wallSeconds()
	zones := &zoneYears{c: c}
	var f yearFacts
	f.y = MaxYear + 1
	x, step := first, int64(1)
	if w.back {
		x, step = last, -1
	}
	for ; x >= first && x <= last; x += step {
		if err := m.spend(1); err != nil {
			return 0, err
		}
		d := dateOfDays(x)
		i, regular, err := c.regularAt(m, zones, &f, d)
		if err != nil {
			return 0, err
		}
		if x == first || x == last || !regular {
			w.walk(d)
			continue
		}
		// The regular run holding x, within the year and strictly
		// between the first and last dates.
		runLo, runHi := max(f.first, first+1), min(f.end, last)
		if i > 0 {
			runLo = max(runLo, f.irregular[i-1]+1)
		}
		if i < len(f.irregular) {
			runHi = min(runHi, f.irregular[i])
		}
		if w.back {
			runHi = x + 1
		} else {
			runLo = x
		}
		rc := f.count(&wall, runLo, runHi)
		w.secs += rc.secs
		// As the walk leaves cur. The run is regular: the working time of
		// the dates beyond it is all beyond its own.
		switch {
		case !w.back:
			w.cur = c.atWall(dateOfDays(runHi), 0, 0)
			x = runHi - 1
		case rc.days > 0:
			w.cur = c.workSpans(dateOfDays(f.firstWorking(&wall, runLo)))[0].start
			x = runLo
		default:
			x = runLo
		}
	}
	if w.secs > math.MaxInt64/int64(time.Second)-1 {
		return 0, fmt.Errorf("%w: the working time from %s to %s is longer than 292 years", ErrOutOfRange,
			w.lo.Format(time.RFC3339), w.hi.Format(time.RFC3339))
	}
	return time.Duration(w.secs)*time.Second + w.part, nil
}
