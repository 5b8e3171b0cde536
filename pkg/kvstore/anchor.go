package kvstore

import (
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

// The values of Spec.Align.
const (
	// AlignAnchor counts an interval from Spec.Anchor, the time of the
	// first write unless given (Quartz, the reflow seed): the default.
	AlignAnchor = "anchor"
	// AlignEpoch counts an interval from the Unix epoch plus Spec.Phase
	// (Temporal).
	AlignEpoch = "epoch"
)

// WithAnchor returns the spec as the store writes it over stored (nil when
// there is none): an every spec that says nothing about its phase (no
// align, no anchor), or that asks for align "anchor" without an anchor,
// counts from its registration. When stored has the same interval it keeps
// stored's phase, so that re-registering (every instance, at every start)
// keeps the cadence, and a spec written before align existed keeps its
// behaviour; otherwise the anchor is now, to the second, with align
// "anchor". Other specs are returned unchanged.
func (s Spec) WithAnchor(stored *Spec, now time.Time) Spec {
	if s.Every == "" || s.Anchor != nil || s.Align != "" && s.Align != AlignAnchor {
		return s
	}
	same := stored != nil && sameEvery(s.Every, stored.Every)
	switch {
	case s.Align == "" && same:
		s.Align, s.Phase, s.Anchor = stored.Align, stored.Phase, cloneTime(stored.Anchor)
		return s
	case s.Align == AlignAnchor && same && stored.Align == AlignAnchor && stored.Anchor != nil:
		s.Anchor = cloneTime(stored.Anchor)
		return s
	}
	anchor := now.UTC().Truncate(time.Second)
	s.Align, s.Anchor = AlignAnchor, &anchor
	return s
}

// sameEvery reports whether two every texts are the same valid interval
// ("90m" and "1h30m" are).
func sameEvery(a, b string) bool {
	da, errA := cronx.ParseEvery(a)
	db, errB := cronx.ParseEvery(b)
	return errA == nil && errB == nil && da == db
}

func cloneTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}
