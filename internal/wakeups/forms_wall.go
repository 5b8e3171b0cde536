package wakeups

import (
	"math"
	"time"
)

// formWall is the first instant whose wall-clock reading in loc is the
// given date and time; a reading in a DST gap is the instant the gap ends.
// The date is normalized as by time.Date (day 32 is the next month's 1st).
func formWall(loc *time.Location, y int, mo time.Month, d, h, m, s, ns int) time.Time {
	base := time.Date(y, mo, d, h, m, s, 0, time.UTC)
	l := base.Unix() // the reading, as if it were UTC
	// No UTC offset exceeds 26 hours: the periods of constant offset that
	// cover [l-30h, l+30h] hold every candidate instant.
	type period struct{ start, end, off int64 }
	var ps []period
	for t, to := l-30*3600, l+30*3600; ; {
		tt := time.Unix(t, 0).In(loc)
		_, off := tt.Zone()
		zs, ze := tt.ZoneBounds()
		p := period{start: math.MinInt64, end: math.MaxInt64, off: int64(off)}
		if !zs.IsZero() {
			p.start = zs.Unix()
		}
		if !ze.IsZero() {
			p.end = ze.Unix()
		}
		ps = append(ps, p)
		if p.end >= to || p.end <= t {
			break
		}
		t = p.end
	}
	for _, p := range ps {
		if u := l - p.off; p.start <= u && u < p.end {
			return time.Unix(u, int64(ns)).In(loc)
		}
	}
	for _, p := range ps {
		if p.start != math.MinInt64 && p.start+p.off > l {
			return time.Unix(p.start, 0).In(loc)
		}
	}
	return time.Date(y, mo, d, h, m, s, ns, loc) // not reached
}
