package compile

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jetsched/jetsched/calendars"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// CalendarSource finds a named calendar (kvstore.ErrNotFound when there is none).
type CalendarSource func(name string) (*calendar.Calendar, error)

// ErrUnresolved: the spec names a calendar and no source was given.
var ErrUnresolved = errors.New("compile: calendar not resolved")

// Compiled is a spec made ready to fire.
type Compiled struct {
	// Schedule yields the slots: the recurrence, with the calendar, bounds
	// and limit applied.
	Schedule cronx.Schedule
	// Location is the zone of Sched-Scheduled-At.
	Location *time.Location
	// Plan fingerprints everything Schedule depends on, including the
	// calendar's content: a different Plan re-plans from now.
	Plan string
	// Calendar is the calendar in use (nil without one).
	Calendar *calendar.Calendar
	// Policy is the misfire and overlap handling.
	Policy Policy

	// calendarName and calendarField name the calendar in errors (the
	// spec's calendar, calendar_inline, or the default hours in tz).
	calendarName  string
	calendarField calendarField
}

// calendarField is the spec field a compiled schedule's calendar comes
// from (a byte, not a string: a scheduler holds a Compiled per schedule).
type calendarField uint8

const (
	fieldCalendar calendarField = iota
	fieldCalendarInline
	fieldTZ
)

func (f calendarField) String() string {
	return [...]string{"calendar", "calendar_inline", "tz"}[f]
}

// Interner shares between compiled schedules what they can share: one
// *time.Location per zone, one default business-hours calendar per zone.
// A scheduler keeps one for all its schedules (a Location is several KB).
// The zero value is ready to use and safe for concurrent use.
type Interner struct {
	Zones    cronx.Zones
	defaults sync.Map // zone name -> *calendar.Calendar
	builtins sync.Map // builtin:NAME -> *calendar.Calendar
	crons    sync.Map // cronKey -> cronx.Schedule (see cron)
}

// cron parses a cron expression, sharing the result between identical
// ones (same expression, zone and options). An expression with an H field
// is seeded by its schedule's id, so it is shared only with itself; one
// that merely might have one (an H in a name such as THU) is not shared.
func (in *Interner) cron(expr string, opts cronx.Options) (cronx.Schedule, error) {
	shared := in != nil && !strings.ContainsAny(expr, "Hh")
	var key cronKey
	if shared {
		key = cronKey{expr: expr, zone: opts.Location.String(), dialect: opts.Dialect, gap: opts.Gap, overlap: opts.Overlap, domDow: opts.DomDow}
		if c, ok := in.crons.Load(key); ok {
			return c.(cronx.Schedule), nil
		}
	}
	c, err := cronx.Parse(expr, opts)
	if err != nil {
		return nil, wrapParse("cron", expr, err)
	}
	if shared {
		actual, _ := in.crons.LoadOrStore(key, c)
		return actual.(cronx.Schedule), nil
	}
	return c, nil
}

// cronKey is what a shared cron schedule depends on.
type cronKey struct {
	expr, zone string
	dialect    cronx.Dialect
	gap        cronx.GapPolicy
	overlap    cronx.OverlapPolicy
	domDow     cronx.DomDow
}

func (in *Interner) zones() *cronx.Zones {
	if in == nil {
		return nil
	}
	return &in.Zones
}

// Compile builds the schedule of spec id, sharing zones, parsed crons and
// default calendars through in (nil: nothing shared). src resolves a named
// calendar; with a nil src, a named calendar is not checked and the error
// is ErrUnresolved. Errors are *kvstore.FieldError naming the field.
func Compile(s kvstore.Spec, id string, src CalendarSource, in *Interner) (Compiled, error) {
	if err := checkRecurrenceKinds(s); err != nil {
		return Compiled{}, err
	}
	if err := checkSpecTimes(s); err != nil {
		return Compiled{}, err
	}
	loc, err := in.zones().Load(s.TZ)
	if err != nil {
		return Compiled{}, wrapParse("tz", s.TZ, err)
	}
	cal, err := calendarOf(s, loc, src, in)
	if err != nil {
		return Compiled{}, err
	}
	base, err := recurrence(s, id, loc, cal, in)
	if err != nil {
		return Compiled{}, err
	}
	policy, err := policies(s)
	if err != nil {
		return Compiled{}, err
	}
	c := Compiled{Schedule: base, Location: location(s, in.zones()), Plan: Plan(s), Calendar: cal, Policy: policy, calendarName: s.Calendar}
	switch {
	case len(s.CalendarInline) > 0:
		c.calendarField = fieldCalendarInline
	case s.Calendar == "":
		c.calendarField, c.calendarName = fieldTZ, s.TZ
	}
	if cal != nil {
		c.Plan += " calendar=" + cal.Fingerprint()
		if s.BusinessDay != 0 {
			c.Location = cal.Location()
		}
	}
	if cal != nil && s.BusinessDay == 0 {
		roll, err := calendar.ParseRoll(s.HolidayRoll)
		if err != nil {
			return Compiled{}, wrapParse("holiday_roll", s.HolidayRoll, err)
		}
		c.Schedule = calendar.Schedule{Base: base, Calendar: cal, Roll: roll, BusinessHoursOnly: s.BusinessHoursOnly}
	} else if s.HolidayRoll != "" || s.BusinessHoursOnly {
		return Compiled{}, fieldcheck.New("holiday_roll", s.HolidayRoll, "holiday_roll and business_hours_only do not apply to business_day")
	}
	if s.Limit > maxLimit {
		return Compiled{}, fieldcheck.New("limit", fmt.Sprint(s.Limit), fmt.Sprintf("at most %d fires", maxLimit))
	}
	if s.Start != nil || s.End != nil || s.Limit != 0 {
		var start, end time.Time
		if s.Start != nil {
			start = *s.Start
		}
		if s.End != nil {
			end = *s.End
		}
		b, err := cronx.NewBounded(c.Schedule, start, end, s.Limit)
		if err != nil {
			var pe *cronx.ParseError
			field := "limit"
			if errors.As(err, &pe) && pe.Field == "end" {
				field = "end"
			}
			return Compiled{}, wrapParse(field, "", err)
		}
		c.Schedule = b
	}
	return c, nil
}

// checkRecurrenceKinds refuses a spec without a recurrence or with several,
// naming those set.
func checkRecurrenceKinds(s kvstore.Spec) error {
	var set []string
	for _, f := range []struct {
		name string
		on   bool
	}{{"cron", s.Cron != ""}, {"every", s.Every != ""}, {"at", s.At != nil}, {"business_day", s.BusinessDay != 0}} {
		if f.on {
			set = append(set, f.name)
		}
	}
	switch len(set) {
	case 1:
		return nil
	case 0:
		return fieldcheck.New(kvstore.RecurrenceField, "", "none set; set one of cron, every, at and business_day")
	}
	return fieldcheck.New(kvstore.RecurrenceField, strings.Join(set, ","), "set exactly one of cron, every, at and business_day")
}

// maxLimit bounds a spec's limit: a cron schedule with a limit counts its
// fires from its start by walking them (an interval counts them at once).
const maxLimit = 100_000

// calendar resolves the spec's calendar: named, inline, or (for
// business_hours_only alone) the default Mon-Fri 09:00-18:00 in TZ.
func calendarOf(s kvstore.Spec, loc *time.Location, src CalendarSource, in *Interner) (*calendar.Calendar, error) {
	switch {
	case s.Calendar != "" && len(s.CalendarInline) > 0:
		return nil, fieldcheck.New("calendar", s.Calendar, "give calendar or calendar_inline, not both")
	case calendars.IsBuiltin(s.Calendar):
		return in.builtin(s.Calendar)
	case s.Calendar != "":
		if err := fieldcheck.Token("calendar", s.Calendar); err != nil {
			return nil, err
		}
		if src == nil {
			return nil, ErrUnresolved
		}
		cal, err := src(s.Calendar)
		if errors.Is(err, kvstore.ErrNotFound) {
			return nil, fieldcheck.New("calendar", s.Calendar, "no such calendar in sched_calendars (scheduler calendar put)")
		}
		if err != nil {
			return nil, &fieldcheck.FieldError{Field: "calendar", Value: s.Calendar, Err: err}
		}
		return cal, nil
	case len(s.CalendarInline) > 0:
		cal, err := calendar.ParseZones(s.CalendarInline, in.zones())
		if err != nil {
			return nil, &fieldcheck.FieldError{Field: "calendar_inline", Err: err}
		}
		return cal, nil
	case s.BusinessHoursOnly || s.HolidayRoll != "" || s.BusinessDay != 0:
		if in != nil {
			if cal, ok := in.defaults.Load(loc.String()); ok {
				return cal.(*calendar.Calendar), nil
			}
		}
		// The hours are explicit: weekends are not business days (a
		// calendar without hours would be holidays only). The canonical
		// form, and so the plan, is what it was when they were implied.
		zone, _ := json.Marshal(loc.String())
		cal, err := calendar.ParseZones([]byte(`{"zone":`+string(zone)+`,"hours":{"mon-fri":["09:00-18:00"]}}`), in.zones())
		if err != nil {
			return nil, &fieldcheck.FieldError{Field: "tz", Value: s.TZ, Err: err}
		}
		if in != nil {
			shared, _ := in.defaults.LoadOrStore(loc.String(), cal)
			cal = shared.(*calendar.Calendar)
		}
		return cal, nil
	}
	return nil, nil
}

// cronOptions reads the cron options; errors name their field.
func cronOptions(s kvstore.Spec, id string, loc *time.Location, zones *cronx.Zones) (cronx.Options, error) {
	o := cronx.Options{Location: loc, Key: id, Zones: zones}
	var err error
	if o.Dialect, err = cronx.ParseDialect(s.Dialect); err != nil {
		return o, wrapParse("dialect", s.Dialect, err)
	}
	if o.DomDow, err = cronx.ParseDomDow(s.DomDow); err != nil {
		return o, wrapParse("dom_dow", s.DomDow, err)
	}
	if o.Gap, err = cronx.ParseGapPolicy(s.DSTGap); err != nil {
		return o, wrapParse("dst_gap", s.DSTGap, err)
	}
	if o.Overlap, err = cronx.ParseOverlapPolicy(s.DSTOverlap); err != nil {
		return o, wrapParse("dst_overlap", s.DSTOverlap, err)
	}
	if s.Cron == "" && (s.Dialect != "" || s.DSTGap != "" || s.DSTOverlap != "") {
		return o, fieldcheck.New("dialect", "", "dialect, dst_gap and dst_overlap apply to cron only")
	}
	if s.Cron == "" && s.DomDow != "" {
		return o, fieldcheck.New("dom_dow", s.DomDow, "applies to cron only")
	}
	return o, nil
}

// recurrence parses the base recurrence (H fields are seeded with id).
func recurrence(s kvstore.Spec, id string, loc *time.Location, cal *calendar.Calendar, in *Interner) (cronx.Schedule, error) {
	opts, err := cronOptions(s, id, loc, in.zones())
	if err != nil {
		return nil, err
	}
	if s.Time != "" && s.BusinessDay == 0 {
		return nil, fieldcheck.New("time", s.Time, "time applies to business_day only")
	}
	if s.Every == "" && (s.Align != "" || s.Phase != "") {
		return nil, fieldcheck.New("align", s.Align, "align and phase apply to every only")
	}
	switch {
	case s.Cron != "":
		return in.cron(s.Cron, opts)
	case s.Every != "":
		return interval(s, loc)
	case s.At != nil:
		return cronx.Once{At: *s.At}, nil
	}
	if s.BusinessDay < -23 || s.BusinessDay > 23 {
		return nil, fieldcheck.New("business_day", fmt.Sprint(s.BusinessDay), "want 1 to 23, or -1 (last) to -23")
	}
	h, m, sec, err := parseClock(s.Time)
	if err != nil {
		return nil, fieldcheck.New("time", s.Time, err.Error())
	}
	return calendar.BusinessDay{Calendar: cal, N: s.BusinessDay, Hour: h, Minute: m, Second: sec}, nil
}

// parseClock reads "HH:MM" or "HH:MM:SS" ("" is midnight).
func parseClock(v string) (h, m, s int, err error) {
	if v == "" {
		return 0, 0, 0, nil
	}
	layout := "15:04"
	if strings.Count(v, ":") == 2 {
		layout = "15:04:05"
	}
	t, err := time.Parse(layout, v)
	if err != nil {
		return 0, 0, 0, errors.New("want HH:MM or HH:MM:SS")
	}
	return t.Hour(), t.Minute(), t.Second(), nil
}

// Location is the spec's zone: a CRON_TZ=/TZ= prefix of the cron
// expression, else TZ; UTC when unset or invalid.
func Location(s kvstore.Spec) *time.Location { return location(s, nil) }

func location(s kvstore.Spec, zones *cronx.Zones) *time.Location {
	name := s.TZ
	if first, _, _ := strings.Cut(strings.TrimSpace(s.Cron), " "); strings.HasPrefix(first, "CRON_TZ=") || strings.HasPrefix(first, "TZ=") {
		_, name, _ = strings.Cut(first, "=")
	}
	loc, err := zones.Load(name)
	if err != nil {
		return time.UTC
	}
	return loc
}

// Plan is a canonical fingerprint of the spec's recurrence (kind,
// expression, zone, anchor, dialect, day rule, DST policies, calendar name
// and handling, bounds).
// The scheduler keeps a schedule's cadence across spec updates whose Plan
// is unchanged, and re-plans from now when it changes. Compiled.Plan adds
// the calendar's content.
func Plan(s kvstore.Spec) string {
	var p string
	switch {
	case s.Cron != "":
		p = "cron " + s.Cron + " tz=" + s.TZ
		if s.Dialect != "" || s.DSTGap != "" || s.DSTOverlap != "" {
			p += " dialect=" + s.Dialect + " gap=" + s.DSTGap + " overlap=" + s.DSTOverlap
		}
		if s.DomDow != "" { // only when set: existing plans stay as they were
			p += " dom_dow=" + s.DomDow
		}
	case s.Every != "":
		p = "every " + s.Every
		if s.Anchor != nil {
			p += " anchor=" + s.Anchor.UTC().Format(time.RFC3339Nano)
		}
		if s.Align != "" { // only when set: existing plans stay as they were
			p += " align=" + s.Align + " phase=" + s.Phase + " tz=" + s.TZ
		}
	case s.At != nil:
		p = "at " + s.At.UTC().Format(time.RFC3339Nano)
	case s.BusinessDay != 0:
		p = fmt.Sprintf("business_day %d time=%s tz=%s", s.BusinessDay, s.Time, s.TZ)
	}
	if s.Calendar != "" || len(s.CalendarInline) > 0 || s.HolidayRoll != "" || s.BusinessHoursOnly {
		p += fmt.Sprintf(" calendar=%s inline=%d roll=%s bho=%v", s.Calendar, len(s.CalendarInline), s.HolidayRoll, s.BusinessHoursOnly)
	}
	if s.Start != nil || s.End != nil || s.Limit != 0 {
		p += fmt.Sprintf(" start=%s end=%s limit=%d", timeOrNil(s.Start), timeOrNil(s.End), s.Limit)
	}
	return p
}

func timeOrNil(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func wrapParse(field, value string, err error) error {
	var pe *cronx.ParseError
	if errors.As(err, &pe) {
		return &fieldcheck.FieldError{Field: field, Value: value, Err: err}
	}
	return &fieldcheck.FieldError{Field: field, Value: value, Reason: err.Error()}
}
