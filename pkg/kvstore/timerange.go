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
// Errors name the range "1970-01-01T00:00:01Z to 2261-12-31T23:59:59Z".
var (
	// MinTime is the earliest supported time, a second after the Unix
	// epoch (whose Unix time, 0, means "none" inside the engine).
	MinTime = fieldcheck.MinTime
	// MaxTime is the first time past the supported range.
	MaxTime = fieldcheck.MaxTime
)

// InTimeRange reports whether t lies in the supported range.
func InTimeRange(t time.Time) bool { return fieldcheck.InTimeRange(t) }
