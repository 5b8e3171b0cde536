package fieldcheck

import (
	"fmt"
	"time"
)

// The supported time range (kvstore.MinTime and MaxTime document it):
// every time jetsched takes in lies in [MinTime, MaxTime).
var (
	// MinTime is the earliest supported time, a second after the Unix
	// epoch.
	MinTime = time.Date(1970, 1, 1, 0, 0, 1, 0, time.UTC)
	// MaxTime is the first time past the supported range.
	MaxTime = time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC)
)

// TimeRange is the supported range as the errors name it.
const TimeRange = "1970-01-01T00:00:01Z to 2261-12-31T23:59:59Z"

// InTimeRange reports whether t lies in the supported range.
func InTimeRange(t time.Time) bool { return !t.Before(MinTime) && t.Before(MaxTime) }

// Time checks that t, the value of field, lies in the supported range;
// the error is a *FieldError naming field and the range.
func Time(field string, t time.Time) error {
	if InTimeRange(t) {
		return nil
	}
	return New(field, FormatAny(t), "outside the supported time range "+TimeRange)
}

// FormatAny is t in RFC 3339 with its zone's offset, as far as the
// standard layout can write it (a year past 9999 cannot be marshalled,
// but can be formatted).
func FormatAny(t time.Time) string {
	if y := t.Year(); y < 0 || y > 9999 {
		return fmt.Sprintf("year %d", y)
	}
	return t.Format(time.RFC3339Nano)
}
