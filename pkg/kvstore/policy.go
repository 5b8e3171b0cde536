package kvstore

// MisfirePolicy is what happens to slots later than the misfire
// threshold (Spec.Misfire); the empty value is MisfireSkip. A spec's
// catchup_window, misfire_threshold and completion_timeout are at most 10
// years, so that none overflows added to a time in the supported range
// (docs/records.md).
type MisfirePolicy string

// Misfire policies.
const (
	MisfireSkip     MisfirePolicy = "skip"
	MisfireFireOnce MisfirePolicy = "fire_once"
	MisfireFireAll  MisfirePolicy = "fire_all"
)

// OverlapPolicy is what happens to a slot due while the previous fire has
// not reported completion (Spec.Overlap); the empty value is OverlapAllow.
type OverlapPolicy string

// Overlap policies.
const (
	OverlapAllow       OverlapPolicy = "allow"
	OverlapSkip        OverlapPolicy = "skip"
	OverlapBufferOne   OverlapPolicy = "buffer_one"
	OverlapBufferAll   OverlapPolicy = "buffer_all"
	OverlapCancelOther OverlapPolicy = "cancel_other"
)
