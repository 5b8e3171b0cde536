package cronx

import (
	"fmt"
	"time"
)

// maxSegments bounds the zone periods one Next walks (two transitions a
// year through 2199 is well under it).
const maxSegments = 2000

// Adjustment says why a fire time is not simply "the wall-clock time that
// matched": it fell in a DST gap or overlap.
type Adjustment struct {
	// Kind is "" (no adjustment), "moved" (a gap occurrence fires at the
	// gap's end), "shifted" (a gap occurrence fires at the same offset
	// after the gap began), "first" (the first of an overlap's two
	// occurrences) or "repeated" (the second).
	Kind string
	// Wall is the matching wall-clock time, e.g. 02:30.
	Wall time.Time
}

// String explains the adjustment, e.g. "shifted: 02:30 does not exist on
// 2026-03-08 (DST gap); fires one gap later".
func (a Adjustment) String() string {
	clock := a.Wall.Format("15:04")
	if a.Wall.Second() != 0 {
		clock = a.Wall.Format("15:04:05")
	}
	day := a.Wall.Format("2006-01-02")
	switch a.Kind {
	case "moved":
		return fmt.Sprintf("moved: %s does not exist on %s (DST gap); fires when the gap ends", clock, day)
	case "shifted":
		return fmt.Sprintf("shifted: %s does not exist on %s (DST gap); fires one gap later", clock, day)
	case "first":
		return fmt.Sprintf("first of two: %s occurs twice on %s (DST overlap)", clock, day)
	case "repeated":
		return fmt.Sprintf("repeated: %s occurs twice on %s (DST overlap); this is the second", clock, day)
	}
	return ""
}

// Next returns the first fire time strictly after after, in the Cron's
// location, or the zero time when there is none (after 2199). Fire times
// are whole seconds.
func (c *Cron) Next(after time.Time) time.Time {
	t, _ := c.next(after)
	return t
}

// NextExplained is Next, plus why the fire time moved when a DST gap or
// overlap was involved.
func (c *Cron) NextExplained(after time.Time) (time.Time, Adjustment) {
	return c.next(after)
}

func (c *Cron) next(after time.Time) (time.Time, Adjustment) {
	if c == nil || c.spec == "" {
		return time.Time{}, Adjustment{}
	}
	loc := c.Location()
	t := after.In(loc).Truncate(time.Second).Add(time.Second) // first whole second > after
	if t.Year() < minYear {
		t = time.Date(minYear, 1, 1, 0, 0, 0, 0, loc)
	}
	for range maxSegments {
		// The period [start, end) of constant offset off holding t. Its
		// readings are [start+off, end+off); before it, the offset was
		// prev, after it, next.
		_, off := t.Zone()
		start, end := zoneBounds(t)
		prev, next := off, off
		if !start.IsZero() {
			_, prev = start.Add(-time.Second).In(loc).Zone()
		}
		if !end.IsZero() {
			_, next = end.In(loc).Zone()
		}
		best, adj := c.regular(civilOf(t), off, prev, next, start, end)
		if prev < off {
			if g, gadj := c.gapFire(t, start, prev, off); !g.IsZero() && (best.IsZero() || g.Before(best)) {
				best, adj = g, gadj
			}
		}
		if !best.IsZero() {
			return best.In(loc), adj
		}
		if end.IsZero() {
			return time.Time{}, Adjustment{}
		}
		t = end.In(loc)
		// Skip the periods with no matching reading: jump to the start of
		// the period holding the instant a day (more than any UTC offset)
		// before the next reading. Nothing is skipped: a reading lost in a
		// gap or repeated in an overlap is itself the next reading, and
		// the period is entered at its start, so its gap is handled.
		cand, ok := c.nextCivil(civilOf(t))
		if !ok {
			return time.Time{}, Adjustment{}
		}
		if j := cand.asUTC().Add(-26 * time.Hour); j.After(t) {
			if s, _ := zoneBounds(j.In(loc)); s.After(t) {
				t = s.In(loc)
			}
		}
	}
	return time.Time{}, Adjustment{}
}

// regular finds the first matching reading at or after from that exists
// in the period [start, end) with offset off, applying the overlap policy
// to readings the period shares with its neighbours.
func (c *Cron) regular(from civil, off, prev, next int, start, end time.Time) (time.Time, Adjustment) {
	shift := time.Duration(off) * time.Second
	for {
		cand, ok := c.nextCivil(from)
		if !ok {
			return time.Time{}, Adjustment{}
		}
		w := cand.asUTC()
		inst := w.Add(-shift)
		if !end.IsZero() && !inst.Before(end) {
			return time.Time{}, Adjustment{} // in a later period
		}
		switch {
		case prev > off && w.Before(start.Add(time.Duration(prev)*time.Second).UTC()):
			if !c.fireSecond() {
				from = civilOf(w.Add(time.Second))
				continue
			}
			return inst, Adjustment{Kind: "repeated", Wall: w}
		case next < off && !w.Before(end.Add(time.Duration(next)*time.Second).UTC()):
			return inst, Adjustment{Kind: "first", Wall: w}
		}
		return inst, Adjustment{}
	}
}

// gapFire applies the gap policy to the readings lost when the clocks
// jumped forward at start (from offset prev to off): the first resulting
// fire time at or after t, or zero.
func (c *Cron) gapFire(t, start time.Time, prev, off int) (time.Time, Adjustment) {
	gapFrom := start.Add(time.Duration(prev) * time.Second).UTC()
	gapTo := start.Add(time.Duration(off) * time.Second).UTC()
	switch c.gapPolicy() {
	case GapShift:
		// A reading g fires at g-prev; it must not be before t.
		g := t.Add(time.Duration(prev) * time.Second).UTC()
		if g.Before(gapFrom) {
			g = gapFrom
		}
		if cand, ok := c.nextCivil(civilOf(g)); ok && cand.asUTC().Before(gapTo) {
			return cand.asUTC().Add(-time.Duration(prev) * time.Second), Adjustment{Kind: "shifted", Wall: cand.asUTC()}
		}
	case GapNatural:
		if start.Before(t) {
			return time.Time{}, Adjustment{} // the moved fire was at start
		}
		if cand, ok := c.nextCivil(civilOf(gapFrom)); ok && cand.asUTC().Before(gapTo) {
			return start, Adjustment{Kind: "moved", Wall: cand.asUTC()}
		}
	}
	return time.Time{}, Adjustment{}
}

// gapPolicy resolves GapNatural: a schedule that does not fire at a fixed
// time of day behaves as GapSkip.
func (c *Cron) gapPolicy() GapPolicy {
	if c.opts.Gap == GapNatural && !c.fixedTime {
		return GapSkip
	}
	return c.opts.Gap
}

// fireSecond reports whether the second occurrence of an overlap fires.
func (c *Cron) fireSecond() bool {
	switch c.opts.Overlap {
	case OverlapTwice:
		return true
	case OverlapOnce:
		return c.wildTime
	}
	return c.hourFree
}

// zoneBounds returns the period of constant offset holding t (see zoneEnd
// for the end).
func zoneBounds(t time.Time) (start, end time.Time) {
	start, end = t.ZoneBounds()
	if end.IsZero() || end.After(t) {
		return start, end
	}
	return start, zoneEnd(t)
}

// zoneEnd returns an instant after t up to which t's UTC offset does not
// change (the end of t's zone period, or an earlier instant where Go splits
// a period at a year boundary), or the zero time if the offset never
// changes again.
func zoneEnd(t time.Time) time.Time {
	_, end := t.ZoneBounds()
	if end.IsZero() || end.After(t) {
		return end
	}
	// Past a zone's last explicit transition Go derives periods from the
	// zone's rule one UTC year at a time and ends a year 365 days after its
	// start, so during the last UTC day of a leap year ZoneBounds reports
	// an end that is not after t. The offset is constant until the next
	// UTC midnight, where Go's computation for the next year takes over.
	return t.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour).In(t.Location())
}
