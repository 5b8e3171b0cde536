package kvstore

import (
	"fmt"
	"time"
)

// Misfire policies.
const (
	MisfireSkip     = "skip"
	MisfireFireOnce = "fire_once"
	MisfireFireAll  = "fire_all"
)

// Overlap policies.
const (
	OverlapAllow       = "allow"
	OverlapSkip        = "skip"
	OverlapBufferOne   = "buffer_one"
	OverlapBufferAll   = "buffer_all"
	OverlapCancelOther = "cancel_other"
)

// Policy is a spec's misfire and overlap handling, parsed, with defaults.
type Policy struct {
	Misfire       string
	CatchupWindow time.Duration
	// MisfireThreshold is zero when the spec leaves it to the scheduler's
	// default.
	MisfireThreshold  time.Duration
	Overlap           string
	CompletionTimeout time.Duration
}

// Policy parses the spec's policies; errors are *FieldError.
func (s Spec) Policy() (Policy, error) {
	p := Policy{Misfire: MisfireSkip, CatchupWindow: 24 * time.Hour, Overlap: OverlapAllow, CompletionTimeout: time.Hour}
	switch s.Misfire {
	case "":
	case MisfireSkip, MisfireFireOnce, MisfireFireAll:
		p.Misfire = s.Misfire
	default:
		return p, fieldErr("misfire", s.Misfire, "want skip, fire_once or fire_all")
	}
	switch s.Overlap {
	case "":
	case OverlapAllow, OverlapSkip, OverlapBufferOne, OverlapBufferAll, OverlapCancelOther:
		p.Overlap = s.Overlap
	default:
		return p, fieldErr("overlap", s.Overlap, "want allow, skip, buffer_one, buffer_all or cancel_other")
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
			return p, fieldErr(d.field, d.value, "want a duration such as 30s, 15m or 24h")
		}
		if v < d.min {
			return p, fieldErr(d.field, d.value, fmt.Sprintf("must be at least %s", d.min))
		}
		*d.dst = v
	}
	return p, nil
}
