package compile

import (
	"fmt"
	"time"

	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/timearg"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Policy is a spec's misfire and overlap handling, parsed, with defaults.
type Policy struct {
	Misfire       kvstore.MisfirePolicy
	CatchupWindow time.Duration
	// MisfireThreshold is zero when the spec leaves it to the scheduler's
	// default.
	MisfireThreshold  time.Duration
	Overlap           kvstore.OverlapPolicy
	CompletionTimeout time.Duration
}

// policies parses the spec's policies; errors are *FieldError.
func policies(s kvstore.Spec) (Policy, error) {
	p := Policy{Misfire: kvstore.MisfireSkip, CatchupWindow: 24 * time.Hour, Overlap: kvstore.OverlapAllow, CompletionTimeout: time.Hour}
	switch s.Misfire {
	case "":
	case kvstore.MisfireSkip, kvstore.MisfireFireOnce, kvstore.MisfireFireAll:
		p.Misfire = s.Misfire
	default:
		return p, fieldcheck.New("misfire", string(s.Misfire), "want skip, fire_once or fire_all")
	}
	switch s.Overlap {
	case "":
	case kvstore.OverlapAllow, kvstore.OverlapSkip, kvstore.OverlapBufferOne, kvstore.OverlapBufferAll, kvstore.OverlapCancelOther:
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
		v, err := timearg.ParseDuration(d.value)
		if err != nil {
			return p, fieldcheck.New(d.field, d.value, err.Error())
		}
		if v < d.min {
			return p, fieldcheck.New(d.field, d.value, fmt.Sprintf("must be at least %s", d.min))
		}
		if v > kvstore.MaxPolicyDuration {
			return p, fieldcheck.New(d.field, d.value, fmt.Sprintf("must be at most %s (10 years)", kvstore.MaxPolicyDuration))
		}
		*d.dst = v
	}
	return p, nil
}
