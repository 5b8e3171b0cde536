package kvstore

import (
	"fmt"
	"time"

	"github.com/jetsched/jetsched/internal/fieldcheck"
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

// Policy is a spec's misfire and overlap handling, parsed, with defaults.
type Policy struct {
	Misfire       MisfirePolicy
	CatchupWindow time.Duration
	// MisfireThreshold is zero when the spec leaves it to the scheduler's
	// default.
	MisfireThreshold  time.Duration
	Overlap           OverlapPolicy
	CompletionTimeout time.Duration
}

// MaxPolicyDuration bounds a spec's catchup_window, misfire_threshold and
// completion_timeout: added to a time in the supported range, none of
// them overflows (issue 52).
const MaxPolicyDuration = 10 * 365 * 24 * time.Hour

// policies parses the spec's policies; errors are *FieldError.
func (s Spec) policies() (Policy, error) {
	p := Policy{Misfire: MisfireSkip, CatchupWindow: 24 * time.Hour, Overlap: OverlapAllow, CompletionTimeout: time.Hour}
	switch s.Misfire {
	case "":
	case MisfireSkip, MisfireFireOnce, MisfireFireAll:
		p.Misfire = s.Misfire
	default:
		return p, fieldcheck.New("misfire", string(s.Misfire), "want skip, fire_once or fire_all")
	}
	switch s.Overlap {
	case "":
	case OverlapAllow, OverlapSkip, OverlapBufferOne, OverlapBufferAll, OverlapCancelOther:
		p.Overlap = s.Overlap
	default:
		return p, fieldcheck.New("overlap", string(s.Overlap), "want allow, skip, buffer_one, buffer_all or cancel_other")
	}
	for _, d := range []struct {
		field, value string
		min          time.Duration
		dst          *time.Duration
	}{
		{"catchup_window", s.CatchupWindow, time.Second, &p.CatchupWindow},
		{"misfire_threshold", s.MisfireThreshold, 0, &p.MisfireThreshold},
		{"completion_timeout", s.CompletionTimeout, time.Second, &p.CompletionTimeout},
	} {
		if d.value == "" {
			continue
		}
		v, err := time.ParseDuration(d.value)
		if err != nil {
			return p, fieldcheck.New(d.field, d.value, "want a duration such as 30s, 15m or 24h")
		}
		if v < d.min {
			return p, fieldcheck.New(d.field, d.value, fmt.Sprintf("must be at least %s", d.min))
		}
		if v > MaxPolicyDuration {
			return p, fieldcheck.New(d.field, d.value, fmt.Sprintf("must be at most %s (10 years)", MaxPolicyDuration))
		}
		*d.dst = v
	}
	return p, nil
}
