package kvstore

import (
	"fmt"
	"time"
)

// The supported time range: every time jetsched takes in (a spec's at,
// start, end and anchor, a pause's until, a timer's due time) lies in
// [MinTime, MaxTime). The engine keeps times as Unix nanoseconds (its due
// index, its packed state records), where 0 stands for "none" and which
// end at 2262-04-11T23:47:16Z: MinTime is just after the epoch, and
// MaxTime leaves months of headroom before the end for what is computed
// from an input (a claim's expiry, a threshold added), so that nothing
// computed from an accepted time overflows. A recurrence whose next slot
// would be at or after MaxTime ends there (docs/records.md, "Time range").
var (
	// MinTime is the earliest supported time, a second after the Unix
	// epoch (whose Unix time, 0, means "none" inside the engine).
	MinTime = time.Date(1970, 1, 1, 0, 0, 1, 0, time.UTC)
	// MaxTime is the first time past the supported range.
	MaxTime = time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC)
)

// TimeRange is the supported range as the errors name it.
const TimeRange = "1970-01-01T00:00:01Z to 2261-12-31T23:59:59Z"

// InTimeRange reports whether t lies in the supported range.
func InTimeRange(t time.Time) bool { return !t.Before(MinTime) && t.Before(MaxTime) }

// CheckTime checks that t, the value of field, lies in the supported
// range; the error is a *FieldError naming field and the range.
func CheckTime(field string, t time.Time) error {
	if InTimeRange(t) {
		return nil
	}
	return fieldErr(field, formatAny(t), "outside the supported time range "+TimeRange)
}

// formatAny is t in RFC 3339 with its zone's offset, as far as the
// standard layout can write it (a year past 9999 cannot be marshalled,
// but can be formatted).
func formatAny(t time.Time) string {
	if y := t.Year(); y < 0 || y > 9999 {
		return fmt.Sprintf("year %d", y)
	}
	return t.Format(time.RFC3339Nano)
}

// anchorRange is the range of an interval's anchor as the errors name it:
// the supported range and the epoch itself. An anchor is never a slot
// (no Unix time of 0 is planned from it), and anchors at the epoch plus a
// phase ("1970-01-01T00:00:00.02Z") are a common way to spread intervals,
// which specs written before the range existed use.
const anchorRange = "1970-01-01T00:00:00Z to 2261-12-31T23:59:59Z"

// checkSpecTimes checks the spec's times against the supported range.
func (s Spec) checkSpecTimes() error {
	for _, f := range []struct {
		name string
		t    *time.Time
	}{{"at", s.At}, {"start", s.Start}, {"end", s.End}} {
		if f.t == nil {
			continue
		}
		if err := CheckTime(f.name, *f.t); err != nil {
			return err
		}
	}
	if a := s.Anchor; a != nil && (a.Before(time.Unix(0, 0)) || !a.Before(MaxTime)) {
		return fieldErr("anchor", formatAny(*a), "outside the supported time range "+anchorRange)
	}
	return nil
}
