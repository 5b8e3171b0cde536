package kvstore

import (
	"time"

	"github.com/jetsched/jetsched/internal/fieldcheck"
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
	MinTime = fieldcheck.MinTime
	// MaxTime is the first time past the supported range.
	MaxTime = fieldcheck.MaxTime
)

// TimeRange is the supported range as the errors name it.
const TimeRange = fieldcheck.TimeRange

// InTimeRange reports whether t lies in the supported range.
func InTimeRange(t time.Time) bool { return fieldcheck.InTimeRange(t) }

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
		if err := fieldcheck.Time(f.name, *f.t); err != nil {
			return err
		}
	}
	if a := s.Anchor; a != nil && (a.Before(time.Unix(0, 0)) || !a.Before(MaxTime)) {
		return fieldcheck.New("anchor", fieldcheck.FormatAny(*a), "outside the supported time range "+anchorRange)
	}
	return nil
}
