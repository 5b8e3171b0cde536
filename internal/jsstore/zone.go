package jsstore

import (
	"bytes"
	"strings"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// withCalendarZone gives a spec with a calendar and no zone its calendar's
// zone (docs/calendar.md, "Zones"): a schedule on the US calendar runs in
// New York time unless it says otherwise, as a business_day schedule
// always did. The zone is written into the spec, so that the record says
// what it fires in and a reader needs no calendar to know.
//
// A stored spec written before this rule, with the same calendar and no
// zone, keeps firing in UTC: re-registering it (every service start) does
// not move its fires. Its operator moves it with an explicit --tz.
//
// A calendar that cannot be resolved leaves the spec as it is: the spec's
// check reports the calendar.
func withCalendarZone(spec kvstore.Spec, stored *kvstore.Spec, cals compile.CalendarSource) kvstore.Spec {
	if spec.TZ != "" || cronZone(spec.Cron) || (spec.Calendar == "" && len(spec.CalendarInline) == 0) {
		return spec
	}
	if stored != nil && stored.TZ == "" && !cronZone(stored.Cron) && sameCalendar(*stored, spec) {
		return spec
	}
	var cal *calendar.Calendar
	var err error
	switch {
	case spec.Calendar != "" && len(spec.CalendarInline) == 0:
		if cals == nil {
			return spec
		}
		cal, err = cals(spec.Calendar)
	case spec.Calendar == "":
		cal, err = calendar.Parse(spec.CalendarInline)
	default:
		return spec // both: the check refuses it
	}
	if err != nil || cal == nil {
		return spec
	}
	spec.TZ = cal.Location().String()
	return spec
}

// cronZone reports whether a cron expression names its own zone
// (CRON_TZ= or TZ= before the fields).
func cronZone(cron string) bool {
	first, _, _ := strings.Cut(strings.TrimSpace(cron), " ")
	return strings.HasPrefix(first, "CRON_TZ=") || strings.HasPrefix(first, "TZ=")
}

// sameCalendar reports whether two specs apply the same calendar.
func sameCalendar(a, b kvstore.Spec) bool {
	return a.Calendar == b.Calendar && bytes.Equal(bytes.TrimSpace(a.CalendarInline), bytes.TrimSpace(b.CalendarInline))
}
