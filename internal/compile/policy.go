package compile

import (
	"fmt"
	"strconv"
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
	// Jitter is the spec's jitter (0: none): see JitterOffset.
	Jitter time.Duration
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
		if v > fieldcheck.MaxPolicyDuration {
			return p, fieldcheck.New(d.field, d.value, fmt.Sprintf("must be at most %s (10 years)", fieldcheck.MaxPolicyDuration))
		}
		*d.dst = v
	}
	if s.Jitter != "" {
		j, err := timearg.ParseDuration(s.Jitter)
		switch {
		case err != nil:
			return p, fieldcheck.New("jitter", s.Jitter, err.Error())
		case j < time.Millisecond || j > MaxJitter:
			return p, fieldcheck.New("jitter", s.Jitter, fmt.Sprintf("want 1ms to %s", MaxJitter))
		}
		p.Jitter = j
	}
	return p, nil
}

// MaxJitter bounds a spec's jitter.
const MaxJitter = 24 * time.Hour

// JitterOffset is how long after its time the slot of schedule id at
// slot is due under jitter: a whole number of milliseconds in [0,
// jitter), fixed by the slot id (kvstore.SlotID: FNV-1a of it, modulo the
// jitter's milliseconds), so that every instance, every retry and every
// preview picks the same instant, and the slots of one schedule spread
// evenly. 0 without a jitter. It does not allocate.
func JitterOffset(id string, slot time.Time, jitter time.Duration) time.Duration {
	ms := jitter.Milliseconds()
	if ms <= 0 {
		return 0
	}
	const offset64, prime64 = 14695981039346656037, 1099511628211
	h := uint64(offset64)
	for i := 0; i < len(id); i++ {
		h = (h ^ uint64(id[i])) * prime64
	}
	h = (h ^ '.') * prime64
	var digits [20]byte
	for _, b := range strconv.AppendInt(digits[:0], slot.UnixMilli(), 10) {
		h = (h ^ uint64(b)) * prime64
	}
	return time.Duration(h%uint64(ms)) * time.Millisecond
}
