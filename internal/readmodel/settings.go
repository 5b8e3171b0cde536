package readmodel

import (
	"strings"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Settings are the policies spec runs with, each with its value and
// whether it is the default (the spec leaves it unset): the zone, the
// cron's reading and DST policies (a cron), the holiday handling (a
// calendar), the misfire and overlap policies. c is the spec compiled
// (ok false: it does not compile, and the policies show as written).
func Settings(spec kvstore.Spec, c compile.Compiled, ok bool) []admin.Setting {
	var out []admin.Setting
	add := func(field, value, def string) {
		if value == "" {
			out = append(out, admin.Setting{Field: field, Value: def, Default: true})
			return
		}
		out = append(out, admin.Setting{Field: field, Value: value})
	}
	zone := compile.Location(spec).String()
	if ok {
		zone = c.Location.String()
	}
	switch {
	case spec.TZ != "":
		out = append(out, admin.Setting{Field: "tz", Value: zone})
	default:
		out = append(out, admin.Setting{Field: "tz", Value: zone, Default: true})
	}
	if spec.Cron != "" {
		add("dialect", spec.Dialect, "standard")
		add("dom_dow", spec.DomDow, "cronie")
		add("dst_gap", spec.DSTGap, "natural")
		add("dst_overlap", spec.DSTOverlap, "natural")
	}
	if spec.Calendar != "" || len(spec.CalendarInline) > 0 {
		add("holiday_roll", spec.HolidayRoll, "skip")
	}
	p := c.Policy
	if !ok {
		p = compile.Policy{Misfire: kvstore.MisfireSkip, CatchupWindow: 24 * time.Hour, Overlap: kvstore.OverlapAllow, CompletionTimeout: time.Hour}
	}
	add("misfire", string(spec.Misfire), string(p.Misfire))
	add("catchup_window", spec.CatchupWindow, shortDuration(p.CatchupWindow))
	add("misfire_threshold", spec.MisfireThreshold, "the scheduler's --misfire-threshold (1m unless set)")
	add("overlap", string(spec.Overlap), string(p.Overlap))
	add("completion_timeout", spec.CompletionTimeout, shortDuration(p.CompletionTimeout))
	return out
}

// shortDuration writes d without zero minutes and seconds: 24h, 1h30m.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
