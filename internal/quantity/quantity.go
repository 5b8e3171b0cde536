// Package quantity is the lexer of jetsched's duration grammar
// (cronx.ParseDuration documents it): one "<number> <unit>" at a time, and
// the units of time it knows. The timer forms (internal/wakeups) share it
// with units of their own, such as working hours.
package quantity

import (
	"strings"
	"time"
	"unicode"
)

// Unit returns the length of a unit of the duration grammar ("h",
// "hours", "MS"; case-insensitive), or false for any other text.
func Unit(unit string) (time.Duration, bool) {
	switch strings.ToLower(unit) {
	case "ns", "nsec", "nsecs", "nanosecond", "nanoseconds":
		return time.Nanosecond, true
	case "us", "µs", "μs", "usec", "usecs", "microsecond", "microseconds": // micro sign U+00B5, Greek mu U+03BC
		return time.Microsecond, true
	case "ms", "msec", "msecs", "millisecond", "milliseconds":
		return time.Millisecond, true
	case "s", "sec", "secs", "second", "seconds":
		return time.Second, true
	case "m", "min", "mins", "minute", "minutes":
		return time.Minute, true
	case "h", "hr", "hrs", "hour", "hours":
		return time.Hour, true
	case "d", "day", "days":
		return 24 * time.Hour, true
	}
	return 0, false
}

// Cut reads one "<number> [spaces] <unit>" from the start of s:
// the number (digits with an optional fraction), then, after optional
// spaces, the unit (a run of letters), and returns what follows with
// leading spaces removed. The unit is not checked against any list, so
// callers with units of their own (the timer forms' "whours") can use the
// same lexer. ok is false when s does not start with a number followed by
// a unit.
func Cut(s string) (number, unit, rest string, ok bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	number = s[:i]
	if number == "" || number == "." {
		return "", "", s, false
	}
	rest = strings.TrimLeftFunc(s[i:], unicode.IsSpace)
	j := strings.IndexFunc(rest, func(r rune) bool { return !unicode.IsLetter(r) })
	if j < 0 {
		j = len(rest)
	}
	if j == 0 {
		return number, "", rest, false
	}
	return number, rest[:j], strings.TrimLeftFunc(rest[j:], unicode.IsSpace), true
}
