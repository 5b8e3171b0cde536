package cronx

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/jetsched/jetsched/internal/quantity"
)

// The duration grammar is one for every place a user writes a length of
// time: a schedule's every, "@every" in a cron field, and the interval
// forms of timers (package wakeup). [ParseDuration] reads it:
//
//	duration = [ "+" ] ( millis | part { [ spaces ] part } )
//	millis   = digits                          a bare integer: milliseconds
//	part     = number [ spaces ] unit
//	number   = digits [ "." [ digits ] ] | "." digits
//
// Units are case-insensitive: ns, us (µs, μs), ms, s, m, h and d, and the
// words nanosecond, microsecond, millisecond, second, minute, hour and day,
// singular or plural, with the abbreviations nsec, usec, msec, sec, min and
// hr (plural too). A day is 24 hours. So "3600000", "1h", "1 h", "2 hours",
// "90 minutes", "1d12h", "1 d 3 h" and "1 day 3 hours" are all durations.
// [FormatDuration] writes the canonical form, which ParseDuration reads
// back to the same duration.

// unitsWanted lists the units in error messages.
const unitsWanted = "want ms, s, m, h or d, or a word such as seconds, minutes, hours, days"

// ParseDuration reads a length of time in the grammar above: "3600000"
// (milliseconds), "90m", "1h30m", "1.5h", "1 h", "2 hours", "1 day 3
// hours", "1d12h". Surrounding spaces are ignored; zero is allowed,
// negative durations are not. Fractions are truncated to whole
// nanoseconds. Errors are *ParseError with Field "duration", naming the
// token that is wrong.
func ParseDuration(s string) (time.Duration, error) {
	d, reason := parseDuration(s)
	if reason != "" {
		return 0, &ParseError{Field: "duration", Value: strings.TrimSpace(s), Reason: reason}
	}
	return d, nil
}

// parseDuration is ParseDuration; a non-empty reason is the error.
func parseDuration(s string) (time.Duration, string) {
	rest := strings.TrimSpace(s)
	switch {
	case rest == "":
		return 0, "empty duration"
	case rest[0] == '-':
		return 0, "negative duration; want a positive one"
	case rest[0] == '+':
		rest = strings.TrimLeftFunc(rest[1:], unicode.IsSpace)
	}
	if rest != "" && isDigits(rest) {
		ms, err := strconv.ParseUint(rest, 10, 64)
		if err != nil || ms > math.MaxInt64/uint64(time.Millisecond) {
			return 0, fmt.Sprintf("%q milliseconds is out of range (at most about 292 years)", rest)
		}
		return time.Duration(ms) * time.Millisecond, ""
	}
	var total time.Duration
	for first := true; first || rest != ""; first = false {
		num, unit, after, ok := quantity.Cut(rest)
		switch {
		case ok:
		case num != "" && (strings.HasPrefix(after, ".") || strings.Count(num, ".") > 1):
			return 0, fmt.Sprintf("malformed number %q", num+after[:min(len(after), 1)])
		case num != "":
			return 0, fmt.Sprintf("missing unit after %q; %s", num, unitsWanted)
		case first && rest == "":
			return 0, "empty duration"
		default:
			return 0, fmt.Sprintf("expected a number at %q; want e.g. 30s, 1h30m, 2 hours, 7d or 3600000 (milliseconds)", rest)
		}
		size, known := quantity.Unit(unit)
		if !known {
			return 0, fmt.Sprintf("unknown unit %q; %s", unit, unitsWanted)
		}
		v, ok := scaleDecimal(num, size)
		if !ok || v > math.MaxInt64-total {
			return 0, fmt.Sprintf("%q is out of range (at most about 292 years)", strings.TrimSpace(s))
		}
		total += v
		rest = after
	}
	return total, ""
}

// scaleDecimal is the decimal number num ("12", "1.5", ".25", "3.") times
// unit, truncated to whole nanoseconds; ok is false when it exceeds the
// range of time.Duration.
func scaleDecimal(num string, unit time.Duration) (time.Duration, bool) {
	intPart, frac, _ := strings.Cut(num, ".")
	var v uint64
	if intPart != "" {
		var err error
		if v, err = strconv.ParseUint(intPart, 10, 64); err != nil {
			return 0, false
		}
	}
	u := uint64(unit)
	hi, v := bits.Mul64(v, u)
	if hi != 0 || v > math.MaxInt64 {
		return 0, false
	}
	if len(frac) > 18 {
		frac = frac[:18] // further digits are worth less than a nanosecond
	}
	if frac != "" {
		f, _ := strconv.ParseUint(frac, 10, 64)
		scale := uint64(math.Pow10(len(frac)))
		// f < scale, so the high word of f*u is below scale and Div64
		// cannot overflow.
		fh, fl := bits.Mul64(f, u)
		q, _ := bits.Div64(fh, fl, scale)
		v += q
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return time.Duration(v), true
}

// FormatDuration writes d in the canonical form of the duration grammar:
// units d, h, m, s, ms, us and ns, largest first, zero units left out and
// no spaces ("1d3h", "1h30m", "10s500ms", "1us500ns"). ParseDuration reads
// it back to d. Zero is "0s"; a negative d is written as time.Duration
// writes it.
func FormatDuration(d time.Duration) string {
	if d <= 0 {
		return d.String()
	}
	var buf [64]byte
	b := buf[:0]
	for _, u := range [...]struct {
		size time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"},
		{time.Millisecond, "ms"}, {time.Microsecond, "us"}, {time.Nanosecond, "ns"}} {
		if n := d / u.size; n > 0 {
			b = strconv.AppendInt(b, int64(n), 10)
			b = append(b, u.name...)
			d -= n * u.size
		}
	}
	return string(b)
}

// ParseEvery parses an interval length in the duration grammar of
// [ParseDuration] ("30s", "90 minutes", "1 day 3 hours", "7d", "3600000").
// The result must be at least 100ms and a whole number of milliseconds.
// Errors are *ParseError with Field "every".
func ParseEvery(s string) (time.Duration, error) {
	fail := func(reason string) (time.Duration, error) {
		return 0, &ParseError{Field: "every", Value: s, Reason: reason}
	}
	d, reason := parseDuration(s)
	switch {
	case reason != "":
		return fail(reason)
	case d < minEvery && isDigits(strings.TrimSpace(s)):
		n := strings.TrimSpace(s)
		return fail(fmt.Sprintf("%s is %s: a bare number is milliseconds; at least 100ms; did you mean %ss?", n, FormatDuration(d), n))
	case d < minEvery:
		return fail("interval must be at least 100ms")
	case d%time.Millisecond != 0:
		return fail("interval must be a whole number of milliseconds")
	}
	return d, nil
}
