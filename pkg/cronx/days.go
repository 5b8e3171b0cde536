package cronx

import (
	"fmt"
	"time"
)

// secondsPerDay is the length of a civil day in wall-clock seconds.
const secondsPerDay = 86400

// maxDayNumber bounds the dates a DayInterval computes with (about three
// billion years either side of 1970), so that nothing overflows.
const maxDayNumber = 1 << 40

// DayInterval fires every Days days at the same wall-clock time in
// Location: Clock after midnight on the dates Start + k*Days, for every
// integer k, where Start is a date written as days since 1970-01-01. It is
// what an interval of whole days means to people: "every 7 days at 09:00
// Paris time" stays at 09:00 across DST changes, where an [Interval] of
// 168h would move by an hour twice a year.
//
// A time of day that a DST gap skips fires when the gap ends; one that an
// overlap repeats fires at its first occurrence (as [Cron] does with its
// natural policies). Fire times are computed exactly and without
// allocating, however far from Start. A DayInterval with Days < 1, a Clock
// outside [0, 24h) or a date more than a billion years from 1970 does not
// fire; a nil Location is UTC. Zones are assumed to change their offset at
// most once in any 48 hours, as every IANA zone does.
type DayInterval struct {
	Days     int64
	Start    int64
	Clock    time.Duration
	Location *time.Location
}

var (
	_ Schedule  = DayInterval{}
	_ counter   = DayInterval{}
	_ Explainer = DayInterval{}
)

// DaysFrom is the DayInterval of every (a whole number of days) in phase
// with anchor: its date and time of day as read in loc (nil: UTC).
func DaysFrom(every time.Duration, anchor time.Time, loc *time.Location) (DayInterval, error) {
	if loc == nil {
		loc = time.UTC
	}
	days, err := wholeDays(every)
	if err != nil {
		return DayInterval{}, err
	}
	a := anchor.In(loc)
	h, m, s := a.Clock()
	clock := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second + time.Duration(a.Nanosecond())
	return DayInterval{Days: days, Start: dayNumber(a), Clock: clock, Location: loc}, nil
}

// DaysFromEpoch is the DayInterval of every (a whole number of days)
// aligned to the epoch in loc's wall clock: the days counted from
// 1970-01-01, shifted by phase (its whole days move the date, the rest is
// the time of day), so that every 1d with phase 9h fires at 09:00 in loc
// every day and every 7d with phase 0 at midnight on Thursdays, the
// weekday of 1970-01-01.
func DaysFromEpoch(every, phase time.Duration, loc *time.Location) (DayInterval, error) {
	if loc == nil {
		loc = time.UTC
	}
	days, err := wholeDays(every)
	if err != nil {
		return DayInterval{}, err
	}
	if phase < 0 {
		return DayInterval{}, &ParseError{Field: "phase", Value: phase.String(), Reason: "must not be negative"}
	}
	const day = 24 * time.Hour
	return DayInterval{Days: days, Start: int64(phase / day), Clock: phase % day, Location: loc}, nil
}

// wholeDays is every in days; an error unless it is a positive multiple
// of 24 hours.
func wholeDays(every time.Duration) (int64, error) {
	const day = 24 * time.Hour
	if every < day || every%day != 0 {
		return 0, &ParseError{Field: "every", Value: FormatDuration(every), Reason: "not a whole number of days"}
	}
	return int64(every / day), nil
}

// IsWholeDays reports whether every is a positive whole number of days,
// the intervals a DayInterval can follow.
func IsWholeDays(every time.Duration) bool {
	_, err := wholeDays(every)
	return err == nil
}

// valid reports whether the interval can fire at all.
func (di DayInterval) valid() bool {
	return di.Days >= 1 && di.Clock >= 0 && di.Clock < 24*time.Hour &&
		di.Start > -maxDayNumber && di.Start < maxDayNumber && di.Days < maxDayNumber
}

func (di DayInterval) loc() *time.Location {
	if di.Location == nil {
		return time.UTC
	}
	return di.Location
}

// Next returns the first fire time strictly after after, in Location, or
// the zero time.
func (di DayInterval) Next(after time.Time) time.Time {
	t, _ := di.next(after)
	return t
}

// Explain is Next, saying when a DST gap moved the fire time.
func (di DayInterval) Explain(after time.Time) Step {
	t, wall := di.next(after)
	st := Step{At: t, Nominal: t}
	if !wall.IsZero() {
		st.Moved = Adjustment{Kind: "moved", Wall: wall}.String()
	}
	return st
}

// next is Next; wall is the reading a DST gap skipped (zero otherwise).
func (di DayInterval) next(after time.Time) (t, wall time.Time) {
	if !di.valid() {
		return time.Time{}, time.Time{}
	}
	day := dayNumber(after.In(di.loc()))
	if day <= -maxDayNumber || day >= maxDayNumber {
		return time.Time{}, time.Time{}
	}
	k := floorDiv(day-di.Start, di.Days)
	// The fire on or before after's date, then the ones after it: the
	// second is on a later date, so strictly after after.
	for range 3 {
		t, wall := di.at(k)
		if t.After(after) {
			return t, wall
		}
		k++
	}
	return time.Time{}, time.Time{} // not reached
}

// at is the k-th fire time (k = 0 on Start), and the wall reading when a
// DST gap moved it.
func (di DayInterval) at(k int64) (time.Time, time.Time) {
	day := di.Start + k*di.Days
	sec := int64(di.Clock / time.Second)
	return wallInstant(di.loc(), day*secondsPerDay+sec, int(di.Clock%time.Second))
}

// Count returns how many fire times fall in (after, through], exactly and
// without walking them. ok is false when the interval cannot fire.
func (di DayInterval) Count(after, through time.Time) (n uint64, ok bool) {
	if !di.valid() {
		return 0, false
	}
	if !through.After(after) {
		return 0, true
	}
	a, okA := di.index(after)
	b, okB := di.index(through)
	if !okA || !okB {
		return 0, false
	}
	return uint64(b - a), true
}

// index is the k of the last fire time at or before t.
func (di DayInterval) index(t time.Time) (int64, bool) {
	day := dayNumber(t.In(di.loc()))
	if day <= -maxDayNumber || day >= maxDayNumber {
		return 0, false
	}
	k := floorDiv(day-di.Start, di.Days)
	// The k-th fire is on or before t's date; the (k+1)-th on a later
	// date, so after t. Only the k-th can be after t (later that day).
	if at, _ := di.at(k); at.After(t) {
		k--
	}
	return k, true
}

// String describes the interval, e.g. "every 7d at 09:00 from 2026-03-02
// (Europe/Paris)".
func (di DayInterval) String() string {
	start := time.Unix(di.Start*secondsPerDay, 0).UTC()
	clock := time.Unix(0, 0).UTC().Add(di.Clock)
	layout := "15:04"
	if di.Clock%time.Minute != 0 {
		layout = "15:04:05.999999999"
	}
	return fmt.Sprintf("every %s at %s from %s (%s)", FormatDuration(time.Duration(di.Days)*24*time.Hour),
		clock.Format(layout), start.Format("2006-01-02"), di.loc())
}

// dayNumber is t's date, as read in t's location, in days since
// 1970-01-01.
func dayNumber(t time.Time) int64 {
	y, m, d := t.Date()
	return floorDiv(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix(), secondsPerDay)
}

// floorDiv is a/b rounded down, for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// wallInstant is the first instant whose wall-clock reading in loc is l
// (seconds since 1970-01-01 00:00 read as UTC) plus nsec; a reading that a
// DST gap skips is the instant the gap ends, and then wall is the reading
// (as a UTC time, for messages).
func wallInstant(loc *time.Location, l int64, nsec int) (t, wall time.Time) {
	// The offsets a day before and a day after the reading: a zone that
	// changes at most once in that span has one of them at the reading.
	_, offA := time.Unix(l-secondsPerDay, 0).In(loc).Zone()
	_, offB := time.Unix(l+secondsPerDay, 0).In(loc).Zone()
	uA, uB := l-int64(offA), l-int64(offB)
	_, atA := time.Unix(uA, 0).In(loc).Zone()
	_, atB := time.Unix(uB, 0).In(loc).Zone()
	okA, okB := atA == offA, atB == offB
	switch {
	case okA && okB: // an overlap, or no change: the first
		return time.Unix(min(uA, uB), int64(nsec)).In(loc), time.Time{}
	case okA:
		return time.Unix(uA, int64(nsec)).In(loc), time.Time{}
	case okB:
		return time.Unix(uB, int64(nsec)).In(loc), time.Time{}
	}
	// A gap: the reading is after the change on the old offset and
	// before it on the new one; the change is where uA's period starts.
	start, _ := time.Unix(uA, 0).In(loc).ZoneBounds()
	return start.In(loc), time.Unix(l, int64(nsec)).UTC()
}
