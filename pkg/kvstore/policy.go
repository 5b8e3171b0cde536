package kvstore

import (
	"time"
)

// MisfirePolicy is what happens to slots later than the misfire
// threshold (Spec.Misfire); the empty value is MisfireSkip.
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

// MaxPolicyDuration bounds a spec's catchup_window, misfire_threshold and
// completion_timeout: added to a time in the supported range, none of
// them overflows (issue 52).
const MaxPolicyDuration = 10 * 365 * 24 * time.Hour
