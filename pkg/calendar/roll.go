package calendar

import "strconv"

// Roll says what a [Schedule] does with an occurrence on a non-business
// day (a holiday, or a day without working hours).
type Roll int

const (
	// RollSkip drops the occurrence ("skip", the default).
	RollSkip Roll = iota
	// RollNext moves it to the same wall-clock time on the next business
	// day ("next_business_day").
	RollNext
	// RollPrevious moves it to the same wall-clock time on the previous
	// business day ("previous_business_day").
	RollPrevious
	// RollModifiedFollowing moves it to the next business day unless that
	// is in another month, then to the previous one ("modified_following").
	RollModifiedFollowing
	// RollModifiedPreceding moves it to the previous business day unless
	// that is in another month, then to the next one ("modified_preceding").
	RollModifiedPreceding
)

// rollNames are the names ParseRoll reads and String writes.
var rollNames = [...]string{"skip", "next_business_day", "previous_business_day", "modified_following", "modified_preceding"}

// ParseRoll reads a roll name: "" or "skip", "next_business_day",
// "previous_business_day", "modified_following" or "modified_preceding".
// Errors are *[Error] with Field "holiday_roll".
func ParseRoll(s string) (Roll, error) {
	if s == "" {
		return RollSkip, nil
	}
	for i, n := range rollNames {
		if n == s {
			return Roll(i), nil
		}
	}
	return 0, fieldError("holiday_roll", s, `unknown roll; want "skip", "next_business_day", "previous_business_day", "modified_following" or "modified_preceding"`)
}

// String returns the roll's name, as ParseRoll reads it.
func (r Roll) String() string {
	if r >= 0 && int(r) < len(rollNames) {
		return rollNames[r]
	}
	return "Roll(" + strconv.Itoa(int(r)) + ")"
}

// roll finds the business day an occurrence on non-business day d moves
// to; how describes the move, "" when the roll skips.
func (c *Calendar) roll(d date, r Roll) (target date, ok bool, how string) {
	return c.rollBy(d, r, c.isBusinessDate)
}

// rollBy is roll over the days good accepts (business days for
// schedules, working days for arithmetic).
func (c *Calendar) rollBy(d date, r Roll, good func(date) bool) (target date, ok bool, how string) {
	const next, prev = "rolled to the next business day", "rolled to the previous business day"
	switch r {
	case RollNext:
		target, ok = c.dateFrom(d, 1, good)
		return target, ok, next
	case RollPrevious:
		target, ok = c.dateFrom(d, -1, good)
		return target, ok, prev
	case RollModifiedFollowing:
		target, ok = c.dateFrom(d, 1, good)
		if ok && target.y == d.y && target.m == d.m {
			return target, true, next
		}
		if p, okPrev := c.dateFrom(d, -1, good); okPrev {
			return p, true, prev + " (modified following: the next one is in another month)"
		}
		return target, ok, next
	case RollModifiedPreceding:
		target, ok = c.dateFrom(d, -1, good)
		if ok && target.y == d.y && target.m == d.m {
			return target, true, prev
		}
		if n, okNext := c.dateFrom(d, 1, good); okNext {
			return n, true, next + " (modified preceding: the previous one is in another month)"
		}
		return target, ok, prev
	}
	return date{}, false, ""
}
