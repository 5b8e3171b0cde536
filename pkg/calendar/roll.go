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
)

// rollNames are the names ParseRoll reads and String writes.
var rollNames = [...]string{"skip", "next_business_day", "previous_business_day", "modified_following"}

// ParseRoll reads a roll name: "" or "skip", "next_business_day",
// "previous_business_day" or "modified_following". Errors are *[Error]
// with Field "holiday_roll".
func ParseRoll(s string) (Roll, error) {
	if s == "" {
		return RollSkip, nil
	}
	for i, n := range rollNames {
		if n == s {
			return Roll(i), nil
		}
	}
	return 0, fieldError("holiday_roll", s, `unknown roll; want "skip", "next_business_day", "previous_business_day" or "modified_following"`)
}

// String returns the roll's name, as ParseRoll reads it.
func (r Roll) String() string {
	if r >= 0 && int(r) < len(rollNames) {
		return rollNames[r]
	}
	return "Roll(" + strconv.Itoa(int(r)) + ")"
}
