// Package timearg reads the lengths and instants a user writes into a flag,
// a config key or an admin API field, in one grammar everywhere: durations
// in the grammar of schedules' --every (cronx.ParseDuration: "90s", "2
// hours", "1d 3h", "1h30m", "1.5h"), and instants as RFC 3339 or relative
// to now ("now", "now+2h", "now-30m"). Its errors say what is wrong in our
// words, with an example, never Go's ("time: unknown unit").
//
// A bare number is milliseconds only where a field documents it (every,
// timers' when); here it is refused unless it is 0, so "--for 30" does not
// silently mean 30 milliseconds.
package timearg

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

// Example is the example every duration error ends with.
const Example = "(e.g. 90s, 2 hours, 1d 3h)"

// TimeExample is the example every instant error ends with.
const TimeExample = "(e.g. 2026-12-01T09:00:00Z, now+2h, now-30m)"

// ParseDuration reads a non-negative duration. The error's text is the
// reason alone ("unknown unit "horus"; want ms, s, ... (e.g. 90s, 2 hours,
// 1d 3h)"): callers put the flag or field and the value before it.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t != "" && t != "0" && digits(strings.TrimPrefix(t, "+")) {
		n := strings.TrimPrefix(t, "+")
		return 0, fmt.Errorf("a bare number needs a unit here; did you mean %ss or %sm? %s", n, n, Example)
	}
	d, err := cronx.ParseDuration(t)
	if err != nil {
		return 0, reason(err)
	}
	return d, nil
}

// ParseSignedDuration is ParseDuration that also takes a negative
// duration ("-30s"), for offsets.
func ParseSignedDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(t, "-"); ok {
		d, err := ParseDuration(rest)
		return -d, err
	}
	return ParseDuration(t)
}

// ParseTime reads an instant: RFC 3339 ("2026-12-01T09:00:00Z", offsets
// and fractions allowed), "now", or now plus or minus a duration
// ("now+2h", "now - 30 minutes"). now is the instant "now" means.
func ParseTime(s string, now time.Time) (time.Time, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return time.Time{}, errors.New("empty time; want an RFC 3339 time or now+DURATION " + TimeExample)
	}
	if rest, ok := cutFold(t, "now"); ok {
		rest = strings.TrimSpace(rest)
		if rest == "" {
			return now, nil
		}
		sign := rest[0]
		if sign != '+' && sign != '-' {
			return time.Time{}, fmt.Errorf("want now, now+DURATION or now-DURATION after %q %s", "now", TimeExample)
		}
		d, err := ParseDuration(rest[1:])
		if err != nil {
			return time.Time{}, err
		}
		if sign == '-' {
			d = -d
		}
		return now.Add(d), nil
	}
	v, err := time.Parse(time.RFC3339Nano, t)
	if err != nil {
		return time.Time{}, errors.New("want an RFC 3339 time or now+DURATION " + TimeExample)
	}
	return v, nil
}

// reason is the reason of a *cronx.ParseError, with the example.
func reason(err error) error {
	var pe *cronx.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s %s", pe.Reason, Example)
	}
	return err
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// cutFold is strings.CutPrefix, ignoring case.
func cutFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}
