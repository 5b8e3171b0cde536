package cronx

import "time"

// Schedule is a recurrence: a possibly infinite, strictly increasing sequence
// of fire times.
//
// Next returns the first fire time strictly after after, or the zero
// time.Time when the recurrence has no further fire time. The result is in
// the schedule's location for a [Cron] and in UTC for an [Interval] or a
// [Once]. Results are never rounded: a Cron fires on whole seconds, an
// Interval and a Once fire at exactly the instants they describe, with
// nanosecond precision. Next compares instants by their wall-clock reading;
// any monotonic clock reading in after is ignored.
//
// Implementations in this package are immutable values and safe for
// concurrent use.
type Schedule interface {
	Next(after time.Time) time.Time
}

// Compile-time checks that the schedule types implement Schedule.
var (
	_ Schedule = (*Cron)(nil)
	_ Schedule = Interval{}
	_ Schedule = Once{}
)

var _ Schedule = (*Bounded)(nil)
