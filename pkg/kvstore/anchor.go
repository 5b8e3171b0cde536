package kvstore

import (
	"time"

	"github.com/jetsched/jetsched/internal/fieldcheck"
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

// interval compiles every with its align, anchor and phase (see
// Spec.Align); loc is the zone whole days follow.
func (s Spec) interval(loc *time.Location) (cronx.Schedule, error) {
	d, err := cronx.ParseEvery(s.Every)
	if err != nil {
		return nil, wrapParse("every", s.Every, err)
	}
	if s.Phase != "" && s.Align != AlignEpoch {
		return nil, fieldcheck.New("phase", s.Phase, `applies to align "epoch" only`)
	}
	switch s.Align {
	case "":
		iv := cronx.Interval{Every: d}
		if s.Anchor != nil {
			iv.Anchor = *s.Anchor
		}
		return iv, nil
	case AlignAnchor:
		if s.Anchor == nil {
			return nil, fieldcheck.New("anchor", "", `align "anchor" needs an anchor (the store fills in the time of the first write)`)
		}
		if cronx.IsWholeDays(d) {
			return cronx.DaysFrom(d, *s.Anchor, loc)
		}
		return cronx.Interval{Every: d, Anchor: *s.Anchor}, nil
	case AlignEpoch:
		if s.Anchor != nil {
			return nil, fieldcheck.New("anchor", s.Anchor.Format(time.RFC3339Nano), `align "epoch" counts from the epoch: give a phase, not an anchor`)
		}
		var phase time.Duration
		if s.Phase != "" {
			if phase, err = cronx.ParseDuration(s.Phase); err != nil {
				return nil, wrapParse("phase", s.Phase, err)
			}
			if phase%time.Millisecond != 0 {
				return nil, fieldcheck.New("phase", s.Phase, "must be a whole number of milliseconds")
			}
		}
		if cronx.IsWholeDays(d) {
			return cronx.DaysFromEpoch(d, phase, loc)
		}
		return cronx.Interval{Every: d, Anchor: time.Unix(0, 0).Add(phase)}, nil
	}
	return nil, fieldcheck.New("align", s.Align, `want "anchor" or "epoch"`)
}
