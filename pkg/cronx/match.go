package cronx

import (
	"math/bits"
	"time"
)

// civil is a wall-clock reading: a date and a time of day, with no zone.
type civil struct {
	year, month, day, hour, min, sec int
}

func civilOf(t time.Time) civil {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return civil{y, int(mo), d, h, mi, s}
}

// asUTC is the civil reading as if it were UTC: civil arithmetic and order
// without a zone's gaps and overlaps.
func (c civil) asUTC() time.Time {
	return time.Date(c.year, time.Month(c.month), c.day, c.hour, c.min, c.sec, 0, time.UTC)
}

func (c civil) before(o civil) bool { return c.asUTC().Before(o.asUTC()) }

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// weekday of the first of the month, 0 = Sunday.
func firstWeekday(year, month int) int {
	return int(time.Date(year, time.Month(month), 1, 0, 0, 0, 0, time.UTC).Weekday())
}

// dayMask returns the days (bit d for day d) of a month that match the
// day-of-month and day-of-week fields.
func (c *Cron) dayMask(year, month int) uint32 {
	n := daysIn(year, month)
	valid := uint32(1)<<uint(n+1) - 2 // bits 1..n
	x := &c.days
	wd1 := firstWeekday(year, month)

	domSet := uint32(c.vals[fDOM]) & valid
	if x.domSpecial() {
		for k := x.lastOffsets; k != 0; k &= k - 1 {
			if d := n - bits.TrailingZeros32(k); d >= 1 {
				domSet |= 1 << uint(d)
			}
		}
		for k := x.lastNearest; k != 0; k &= k - 1 {
			if d := nearestWeekday(n-bits.TrailingZeros32(k), n, wd1); d > 0 {
				domSet |= 1 << uint(d)
			}
		}
		for k := x.nearestWeekdy; k != 0; k &= k - 1 {
			if d := nearestWeekday(bits.TrailingZeros32(k), n, wd1); d > 0 {
				domSet |= 1 << uint(d)
			}
		}
	}
	var dowSet uint32
	for w := range 7 {
		first := 1 + (w-wd1+7)%7
		if c.vals[fDOW]&(1<<uint(w)) != 0 {
			for d := first; d <= n; d += 7 {
				dowSet |= 1 << uint(d)
			}
		}
		if x.lastDOW&(1<<uint(w)) != 0 {
			dowSet |= 1 << uint(first+7*((n-first)/7))
		}
		for k := x.nth[w]; k != 0; k &= k - 1 {
			if d := first + 7*(bits.TrailingZeros8(k)-1); d <= n {
				dowSet |= 1 << uint(d)
			}
		}
	}
	// The day-of-month/day-of-week rule (Options.DomDow), resolved at
	// parse time.
	if c.dayAnd {
		return domSet & dowSet
	}
	return domSet | dowSet
}

// nearestWeekday is Quartz's nW: the weekday nearest to day n of the month,
// never crossing into another month; 0 when the month has no day n (or n
// is not positive, as L-30W in February).
func nearestWeekday(n, days, wd1 int) int {
	if n > days || n < 1 {
		return 0
	}
	switch (wd1 + n - 1) % 7 {
	case 6: // Saturday: Friday, or Monday if the 1st
		if n == 1 {
			return 3
		}
		return n - 1
	case 0: // Sunday: Monday, or Friday if the month's last day
		if n == days {
			return n - 2
		}
		return n + 1
	}
	return n
}

// nextCivil returns the first civil reading at or after from that matches
// every field, up to the end of 2199.
func (c *Cron) nextCivil(from civil) (civil, bool) {
	y, mo, d, h, mi, s := from.year, from.month, from.day, from.hour, from.min, from.sec
	if y < minYear {
		y, mo, d, h, mi, s = minYear, 1, 1, 0, 0, 0
	}
	for y <= maxYear {
		if ny := c.years.next(y - minYear); ny < 0 {
			return civil{}, false
		} else if ny+minYear != y {
			y, mo, d, h, mi, s = ny+minYear, 1, 1, 0, 0, 0
		}
		nmo := next64(c.vals[fMonth], mo)
		if nmo < 0 || nmo > 12 {
			y, mo, d, h, mi, s = y+1, 1, 1, 0, 0, 0
			continue
		}
		if nmo != mo {
			mo, d, h, mi, s = nmo, 1, 0, 0, 0
		}
		days := c.dayMask(y, mo) &^ (uint32(1)<<uint(min(d, 32)) - 1)
		if days == 0 {
			mo, d, h, mi, s = mo+1, 1, 0, 0, 0
			if mo > 12 {
				y, mo = y+1, 1
			}
			continue
		}
		if nd := bits.TrailingZeros32(days); nd != d {
			d, h, mi, s = nd, 0, 0, 0
		}
		nh := next64(c.vals[fHour], h)
		if nh < 0 || nh > 23 {
			d, h, mi, s = d+1, 0, 0, 0
			continue
		}
		if nh != h {
			h, mi, s = nh, 0, 0
		}
		nmi := next64(c.vals[fMinute], mi)
		if nmi < 0 || nmi > 59 {
			h, mi, s = h+1, 0, 0
			continue
		}
		if nmi != mi {
			mi, s = nmi, 0
		}
		ns := next64(c.vals[fSecond], s)
		if ns < 0 || ns > 59 {
			mi, s = mi+1, 0
			continue
		}
		return civil{y, mo, d, h, mi, ns}, true
	}
	return civil{}, false
}
