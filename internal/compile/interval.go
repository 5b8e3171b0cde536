package compile

import (
	"time"

	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// interval compiles every with its align, anchor and phase (see
// kvstore.Spec.Align); loc is the zone whole days follow.
func interval(s kvstore.Spec, loc *time.Location) (cronx.Schedule, error) {
	d, err := cronx.ParseEvery(s.Every)
	if err != nil {
		return nil, wrapParse("every", s.Every, err)
	}
	if s.Phase != "" && s.Align != kvstore.AlignEpoch {
		return nil, fieldcheck.New("phase", s.Phase, `applies to align "epoch" only`)
	}
	switch s.Align {
	case "":
		iv := cronx.Interval{Every: d}
		if s.Anchor != nil {
			iv.Anchor = *s.Anchor
		}
		return iv, nil
	case kvstore.AlignAnchor:
		if s.Anchor == nil {
			return nil, fieldcheck.New("anchor", "", `align "anchor" needs an anchor (the store fills in the time of the first write)`)
		}
		if cronx.IsWholeDays(d) {
			return cronx.DaysFrom(d, *s.Anchor, loc)
		}
		return cronx.Interval{Every: d, Anchor: *s.Anchor}, nil
	case kvstore.AlignEpoch:
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
