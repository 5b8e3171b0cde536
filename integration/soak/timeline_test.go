package soak

// The accounting of one schedule's regular slots across the chaos: a
// timeline of segments, each the cadence the schedule had (or none: paused,
// removed, on a holiday) from an operator action on.

import (
	"slices"
	"time"
)

// cadence is a fixed-step recurrence: slots at k*step + phase since the
// Unix epoch. Every recurrence of the soak is one (intervals, and cron
// expressions with a fixed second step in zones whose offsets are whole
// minutes). The zero cadence is "no slot" (paused, removed, holiday).
type cadence struct{ step, phase time.Duration }

func (c cadence) active() bool { return c.step > 0 }

// on reports whether ms (unix ms) is a slot.
func (c cadence) on(ms int64) bool {
	return floorMod(ms-c.phase.Milliseconds(), c.step.Milliseconds()) == 0
}

// after is the first slot strictly after ms.
func (c cadence) after(ms int64) int64 {
	st, p := c.step.Milliseconds(), c.phase.Milliseconds()
	return floorDiv(ms-p, st)*st + st + p
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// segment is a stretch of a schedule's life: from an operator action (or
// its registration) on, it has cadence cad.
type segment struct {
	// begin is when the action's call began: a slot of cad after it may
	// fire.
	begin time.Time
	// start is when the call returned; the slots of cad later than
	// start+grace are owed, until the next segment begins less its lead;
	// the previous cadence's slots may still fire until the next action's
	// start+grace (a watch has not delivered it yet).
	start time.Time
	grace time.Duration
	// lead is how long before begin the previous segment stops owing
	// slots: a slot due then but fired late (its owner crashed, and a
	// takeover waits up to the claim and lease TTLs) meets the schedule as
	// the action left it, paused, removed, re-planned or on a holiday, and
	// is rightly not fired.
	lead time.Duration
	cad  cadence
}

// tally is the accounting of regular slots: expected and fired are slots
// owed and found; lost are owed and missing; duplicates are messages of a
// slot already seen; unexpected are slots fired that no segment allows
// (a paused or removed schedule firing, an old cadence firing long after a
// change, a slot before the schedule existed).
type tally struct {
	expected, fired, lost, duplicates, unexpected int
	lostSlots, dupSlots, unexpectedSlots          []int64
}

func (a *tally) add(b tally) {
	a.expected += b.expected
	a.fired += b.fired
	a.lost += b.lost
	a.duplicates += b.duplicates
	a.unexpected += b.unexpected
}

// account counts a schedule's regular fired slots (unix ms, sorted) against
// its timeline, owed up to tEnd.
func account(tl []segment, slots []int64, tEnd time.Time) tally {
	var r tally
	end := tEnd.UnixMilli()
	distinct := make([]int64, 0, len(slots))
	for i, ms := range slots {
		if i > 0 && ms == slots[i-1] {
			r.duplicates++
			r.dupSlots = append(r.dupSlots, ms)
			continue
		}
		distinct = append(distinct, ms)
	}
	for i, seg := range tl {
		if !seg.cad.active() {
			continue
		}
		hi := end
		if i+1 < len(tl) {
			next := tl[i+1]
			hi = min(hi, next.begin.Add(-next.lead).UnixMilli())
		}
		step := seg.cad.step.Milliseconds()
		for ms := seg.cad.after(seg.start.Add(seg.grace).UnixMilli()); ms <= hi; ms += step {
			r.expected++
			if _, ok := slices.BinarySearch(distinct, ms); ok {
				r.fired++
			} else {
				r.lost++
				r.lostSlots = append(r.lostSlots, ms)
			}
		}
	}
	for _, ms := range distinct {
		if !allowed(tl, ms) {
			r.unexpected++
			r.unexpectedSlots = append(r.unexpectedSlots, ms)
		}
	}
	return r
}

// allowed reports whether slot ms may fire: it is a slot of a segment's
// cadence after the segment began and before the next action surely took
// effect (its start plus grace).
func allowed(tl []segment, ms int64) bool {
	for i, seg := range tl {
		if !seg.cad.active() || !seg.cad.on(ms) || ms <= seg.begin.UnixMilli() {
			continue
		}
		if i+1 == len(tl) {
			return true
		}
		next := tl[i+1]
		if ms <= next.start.Add(next.grace).UnixMilli() {
			return true
		}
	}
	return false
}

// settleTarget is the slot a schedule must have fired to be done at the end
// of a run: its first slot after both tEnd and its last action's grace.
// Every soak schedule is fire_all, so a fire at or past it means every owed
// slot before it has been dealt with. ok is false when its last segment has
// no cadence.
func settleTarget(tl []segment, tEnd time.Time) (ms int64, ok bool) {
	last := tl[len(tl)-1]
	if !last.cad.active() {
		return 0, false
	}
	from := max(tEnd.UnixMilli(), last.start.Add(last.grace).UnixMilli())
	return last.cad.after(from), true
}
