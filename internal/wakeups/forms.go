package wakeups

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/jetsched/jetsched/internal/quantity"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
)

// The kinds of [Form], as in Form.Kind.
const (
	// KindInterval is elapsed time from registration: "90m", "3600000".
	KindInterval = "interval"
	// KindTimeOfDay is the next occurrence of a wall-clock time: "02:00".
	KindTimeOfDay = "time_of_day"
	// KindDate is midnight of a date in the zone: "2026-12-31".
	KindDate = "date"
	// KindDateTime is a wall-clock date and time in the zone:
	// "2026-12-31 23:59".
	KindDateTime = "datetime"
	// KindInstant is an absolute RFC 3339 instant: "2026-12-31T23:59:00Z".
	KindInstant = "instant"
	// KindWorking is working time against a calendar: "48 whours".
	KindWorking = "working"
)

// formMaxSpan bounds intervals and working hours and minutes: 100 years
// of 365.25 days.
const formMaxSpan = 36525 * 24 * time.Hour

// Working units, in their canonical (plural) spelling.
const (
	formWMinutes = "wminutes"
	formWHours   = "whours"
	formWDays    = "wdays"
	formWMonths  = "wmonths"
	formWYears   = "wyears"
)

// formUnknownUnit is the reason for a unit ParseWhen does not know.
const formUnknownUnit = "unknown unit %q (want d, h, m, s, ms or days, hours, minutes, seconds; whours, wdays, wmonths, wyears)"

// formUnrecognized is the reason for text that is no form at all.
const formUnrecognized = `unrecognized form (want an interval such as "90m" or "1h30m", milliseconds such as "3600000", ` +
	`a time of day "14:30", a date "2026-12-31", a date and time "2026-12-31 23:59", an RFC 3339 instant ` +
	`or working time such as "48 whours" or "3 wdays")`

// formNegativeWorking is the reason for a negative working form: a
// timer counts from its registration, so it would be due in the past.
const formNegativeWorking = "a timer's working time counts forward from its registration, so a negative one would be due " +
	"in the past; to count back from a date, use a when_expr such as addWorkingDays(date(payload.due), -3)"

// formWantDate is the reason for a malformed date, date and time or
// instant.
const formWantDate = `want a date "2026-12-31", a date and time "2026-12-31 23:59" (seconds allowed, "T" separator allowed) ` +
	`or an RFC 3339 instant "2026-12-31T23:59:00Z"`

// Form is a timer's due time as written by a user (a "when"), parsed by
// [ParseWhen]; [Form.Due] is the due time of a timer registered at a given
// instant. The forms (the .NET seed's timer forms plus RFC 3339):
//
//	"3600000"                        an interval in milliseconds (a bare number)
//	"1 d 3 h", "90m", "1h30m", "2d",
//	"1h 30m 10s", "500ms", "1.5h",
//	"2 hours", "1 day 3 hours"       an interval in the duration grammar of schedules' every
//	                                 (cronx.ParseDuration): units d, h, m, s, ms, us, ns and the
//	                                 words day, hour, minute, second, ... singular or plural; spaces
//	                                 are allowed between a number and its unit and between parts.
//	                                 A day is 24 hours of elapsed time, also across a DST change
//	"02:00", "14:30:15"              a time of day in the zone: today if still ahead, else tomorrow
//	"2026-12-31"                     a date: midnight in the zone
//	"2026-12-31 23:59"               a date and time in the zone (seconds and a fraction allowed;
//	                                 "T" separator allowed)
//	"2026-12-31T23:59:00Z",
//	"2026-12-31T23:59:00+01:00"      an absolute RFC 3339 instant (the zone is ignored)
//	"48 whours", "1.5 whours",
//	"90 wminutes", "3 wdays",
//	"1 wmonth", "2 wyears"           working time against a calendar (singular or plural, with or
//	                                 without a space: "48whours", "1 wyear")
//
// A wall-clock time in a DST gap is the instant the gap ends; one in an
// overlap is its first occurrence. Units are case-insensitive. An interval
// must be positive and at most 100 years; whours and wminutes are at most
// 100 years, and wdays, wmonths and wyears at most 100 years' worth
// (36525, 1200, 100). Working counts are whole numbers from 0, except
// whours, which may have up to 9 decimal places ("1.5 whours" is 90
// minutes of working time). A zero working form rolls only: "0 whours" is
// the registration instant if it is working time, else the next working
// start; "0 wdays", "0 wmonths" and "0 wyears" keep the registration's
// date if it is a working day, else move to the same wall-clock time on
// the next one. A negative working form is refused: it would be due
// before its registration (a when_expr counts back from a date).
//
// The zero Form is not valid; build one with [ParseWhen]. Forms are
// comparable: two Forms parsed from texts that mean the same are equal
// apart from Text.
type Form struct {
	// Kind is one of KindInterval, KindTimeOfDay, KindDate,
	// KindDateTime, KindInstant and KindWorking.
	Kind string
	// Text is the form as written, trimmed of surrounding space.
	Text string

	dur    time.Duration // interval; the working time of whours and wminutes
	unit   string        // working unit, one of the formW* constants
	n      int           // count of wminutes, wdays, wmonths and wyears
	year   int           // date and datetime
	month  time.Month    // date and datetime
	day    int           // date and datetime
	hour   int           // time of day and datetime
	minute int           // time of day and datetime
	sec    int           // time of day and datetime
	nsec   int           // datetime and instant
	unix   int64         // instant, in Unix seconds
}

// FormError reports a form that ParseWhen rejects or whose due time
// [Form.Due] cannot compute.
type FormError struct {
	// Text is the form, trimmed.
	Text string
	// Reason is a human-readable explanation, never empty.
	Reason string
	// Err is the underlying error, if any: the calendar's error for a
	// working form (which wraps calendar.ErrNoWorkingTime when the
	// calendar has no working time left).
	Err error
}

// Error formats the error, for example
//
//	wakeup: when "1 x": unknown unit "x" (want d, h, m, s, ms, whours, wdays, wmonth, wyears)
func (e *FormError) Error() string {
	return fmt.Sprintf("wakeup: when %q: %s", e.Text, e.Reason)
}

// Unwrap returns the underlying error, or nil.
func (e *FormError) Unwrap() error { return e.Err }

// Computed is the Go form of a due time: the function is evaluated once,
// at registration, with the registration instant, and the instant it
// returns is what is stored. It is never re-evaluated (not on restart, not
// on another scheduler instance).
type Computed func(now time.Time) (time.Time, error)

// ParseWhen reads a timer's due time as written by a user (see [Form] for
// the forms). It checks syntax and ranges only (an hour 25, February 30, a
// zero interval); whether a date is in the past and whether a working form
// has a calendar are decided by [Form.Due]. Errors are *FormError.
func ParseWhen(text string) (Form, error) {
	s := strings.TrimSpace(text)
	f, reason := formParse(s)
	if reason != "" {
		return Form{}, &FormError{Text: s, Reason: reason}
	}
	f.Text = s
	return f, nil
}

// IsRelative reports whether the form's due time depends on the
// registration instant: intervals, times of day and working forms. Dates,
// dates and times and instants are absolute.
func (f Form) IsRelative() bool {
	switch f.Kind {
	case KindInterval, KindTimeOfDay, KindWorking:
		return true
	}
	return false
}

// Due returns the due time of a timer registered at now, with loc the zone
// of time-of-day, date and datetime forms (nil means UTC) and cal the
// calendar of working forms. Intervals and instants are returned in UTC,
// everything else in loc. Working forms count in the calendar's zone
// (calendar.Calendar.AddWorking for whours and wminutes, AddWorkingDays,
// AddWorkingMonths and AddWorkingYears); a working form without a calendar
// is an error, and so is one the calendar cannot reach by the end of year
// 9999 (wrapping calendar.ErrOutOfRange). An absolute form (date,
// datetime, instant) whose due time is before now is an error; a relative
// one is never in the past. Errors are *FormError.
func (f Form) Due(now time.Time, loc *time.Location, cal *calendar.Calendar) (time.Time, error) {
	return f.DueContext(context.Background(), now, loc, cal)
}

// DueContext is [Form.Due], stopped by ctx: working-time arithmetic costs
// up to some milliseconds a call (calendar.Calendar.AddWorkingContext).
// When ctx ends first the error wraps ctx's error and is not a
// *FormError, since the form is not at fault.
func (f Form) DueContext(ctx context.Context, now time.Time, loc *time.Location, cal *calendar.Calendar) (time.Time, error) {
	if loc == nil {
		loc = time.UTC
	}
	now = now.Round(0)
	switch f.Kind {
	case KindInterval:
		return now.Add(f.dur).UTC(), nil
	case KindTimeOfDay:
		y, mo, d := now.In(loc).Date()
		t := formWall(loc, y, mo, d, f.hour, f.minute, f.sec, 0)
		// Tomorrow's reading is ahead, unless the zone skips a whole day.
		for i := 1; !t.After(now) && i <= 3; i++ {
			t = formWall(loc, y, mo, d+i, f.hour, f.minute, f.sec, 0)
		}
		return t, nil
	case KindDate, KindDateTime:
		return f.notPast(formWall(loc, f.year, f.month, f.day, f.hour, f.minute, f.sec, f.nsec), now)
	case KindInstant:
		return f.notPast(time.Unix(f.unix, int64(f.nsec)).UTC(), now)
	case KindWorking:
		if cal == nil {
			return time.Time{}, &FormError{Text: f.Text, Reason: "working time needs a calendar"}
		}
		var t time.Time
		var err error
		switch f.unit {
		case formWHours, formWMinutes:
			t, err = cal.AddWorkingContext(ctx, now, f.dur)
		case formWDays:
			t, err = cal.AddWorkingDaysContext(ctx, now, f.n)
		case formWMonths:
			t, err = cal.AddWorkingMonths(now, f.n)
		case formWYears:
			t, err = cal.AddWorkingYears(now, f.n)
		}
		if err != nil {
			return time.Time{}, f.dueError(err)
		}
		return t.In(loc), nil
	}
	return time.Time{}, &FormError{Text: f.Text, Reason: "not a parsed form (use ParseWhen)"}
}

// dueError is the error of a working form whose count failed: a
// *FormError, unless the count was stopped by its context.
func (f Form) dueError(err error) error {
	if isContextErr(err) {
		return fmt.Errorf("wakeup: when %q: %w", f.Text, err)
	}
	return &FormError{Text: f.Text, Reason: err.Error(), Err: err}
}

// isContextErr reports whether err is a context's end rather than a fault
// of the input.
func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// notPast refuses an absolute due time before now.
func (f Form) notPast(t, now time.Time) (time.Time, error) {
	if t.Before(now) {
		return time.Time{}, &FormError{Text: f.Text, Reason: fmt.Sprintf("is in the past (%s, now %s)",
			t.Format(time.RFC3339Nano), now.In(t.Location()).Format(time.RFC3339Nano))}
	}
	return t, nil
}

// String returns the canonical text of the form, which ParseWhen reads
// back to an equal Form: intervals in units from d to ns without spaces
// ("1d3h", "1h30m", "10s500ms"), times of day "HH:MM" or "HH:MM:SS",
// dates "YYYY-MM-DD", dates and times "YYYY-MM-DD HH:MM[:SS[.fff]]",
// instants in RFC 3339 in UTC and working forms as "<n> <unit>", singular
// for 1 ("1 wmonth", "48 whours", "1.5 whours"). The zero Form is "".
func (f Form) String() string {
	switch f.Kind {
	case KindInterval:
		return cronx.FormatDuration(f.dur)
	case KindTimeOfDay:
		return formClockString(f.hour, f.minute, f.sec, 0)
	case KindDate:
		return fmt.Sprintf("%04d-%02d-%02d", f.year, int(f.month), f.day)
	case KindDateTime:
		return fmt.Sprintf("%04d-%02d-%02d ", f.year, int(f.month), f.day) + formClockString(f.hour, f.minute, f.sec, f.nsec)
	case KindInstant:
		return time.Unix(f.unix, int64(f.nsec)).UTC().Format(time.RFC3339Nano)
	case KindWorking:
		var num string
		switch f.unit {
		case formWHours:
			h, rem := int64(f.dur/time.Hour), int64(f.dur%time.Hour)
			num = strconv.FormatInt(h, 10)
			if rem != 0 {
				// rem is a multiple of 3600ns: at most 9 decimal places.
				num += "." + strings.TrimRight(fmt.Sprintf("%09d", rem/3600), "0")
			}
		default:
			num = strconv.Itoa(f.n)
		}
		unit := f.unit
		if num == "1" {
			unit = strings.TrimSuffix(unit, "s")
		}
		return num + " " + unit
	}
	return ""
}

// formClockString writes "HH:MM", with ":SS" when there are seconds and
// the fraction when there are nanoseconds.
func formClockString(h, m, s, ns int) string {
	out := fmt.Sprintf("%02d:%02d", h, m)
	if s != 0 || ns != 0 {
		out += fmt.Sprintf(":%02d", s)
	}
	if ns != 0 {
		out += "." + strings.TrimRight(fmt.Sprintf("%09d", ns), "0")
	}
	return out
}

// formParse parses trimmed text; a non-empty reason is the error.
func formParse(s string) (Form, string) {
	switch {
	case s == "":
		return Form{}, "empty"
	case len(s) >= 5 && formDigits(s[:4]) && s[4] == '-':
		return formParseDate(s)
	case strings.IndexByte(s, ':') >= 0:
		return formParseTimeOfDay(s)
	}
	return formParseSpan(s)
}

// formDigits reports whether s is a non-empty run of ASCII digits.
func formDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// formWorkUnit is the canonical name of a working unit, or "".
func formWorkUnit(u string) string {
	switch u {
	case "wminute", "wminutes":
		return formWMinutes
	case "whour", "whours":
		return formWHours
	case "wday", "wdays":
		return formWDays
	case "wmonth", "wmonths":
		return formWMonths
	case "wyear", "wyears":
		return formWYears
	}
	return ""
}

// formParseSpan parses an interval in the duration grammar of
// cronx.ParseDuration ("3600000", "1 d 3 h", "90 minutes") or a working
// form ("48 whours"), which reads its number and unit with the same lexer.
func formParseSpan(s string) (Form, string) {
	body, neg := s, false
	if s[0] == '-' || s[0] == '+' {
		neg = s[0] == '-'
		body = strings.TrimLeftFunc(s[1:], unicode.IsSpace)
	}
	if body == "" || body[0] != '.' && (body[0] < '0' || body[0] > '9') {
		return Form{}, formUnrecognized
	}
	// Working units are wakeup's; the lexer is the duration grammar's.
	for rest, part := body, 0; rest != ""; part++ {
		num, unit, after, ok := quantity.Cut(rest)
		if !ok {
			break
		}
		if w := formWorkUnit(strings.ToLower(unit)); w != "" {
			switch {
			case part > 0 || after != "":
				return Form{}, "working time cannot be combined with other parts"
			case neg:
				return Form{}, formNegativeWorking
			}
			return formParseWorking(num, w)
		}
		if _, known := quantity.Unit(unit); !known {
			return Form{}, fmt.Sprintf(formUnknownUnit, unit)
		}
		rest = after
	}
	if neg {
		return Form{}, "interval must be positive"
	}
	d, err := cronx.ParseDuration(body)
	if err != nil {
		var pe *cronx.ParseError
		if errors.As(err, &pe) {
			return Form{}, pe.Reason
		}
		return Form{}, err.Error()
	}
	switch {
	case d <= 0:
		return Form{}, "interval must be positive"
	case d > formMaxSpan:
		return Form{}, "interval longer than 100 years"
	}
	return Form{Kind: KindInterval, dur: d}, ""
}

// formParseWorking builds a working form from its number and canonical
// unit.
func formParseWorking(num, unit string) (Form, string) {
	intPart, frac, _ := strings.Cut(num, ".")
	f := Form{Kind: KindWorking, unit: unit}
	if unit == formWHours {
		if len(frac) > 9 {
			return Form{}, fmt.Sprintf("whours %q: at most 9 decimal places", num)
		}
		v, err := cronx.ParseDuration(num + "h")
		if err != nil || v > formMaxSpan {
			return Form{}, "working time longer than 100 years"
		}
		f.dur = v
		return f, ""
	}
	if frac != "" || intPart == "" || strings.Contains(num, ".") {
		return Form{}, fmt.Sprintf("%s needs a whole number, not %q", unit, num)
	}
	limit := map[string]uint64{formWMinutes: uint64(formMaxSpan / time.Minute), formWDays: 36525, formWMonths: 1200, formWYears: 100}[unit]
	n, err := strconv.ParseUint(intPart, 10, 64)
	if err != nil || n > limit {
		return Form{}, fmt.Sprintf("%s: at most %d (100 years)", unit, limit)
	}
	f.n = int(n)
	if unit == formWMinutes {
		f.dur = time.Duration(n) * time.Minute
	}
	return f, ""
}

// formWantClock is the reason for a malformed time of day.
const formWantClock = "want a time of day HH:MM or HH:MM:SS"

// formParseTimeOfDay parses "HH:MM" or "HH:MM:SS" (the hour may have one
// digit) with time.Parse.
func formParseTimeOfDay(s string) (Form, string) {
	if strings.IndexByte(s, '.') >= 0 { // time.Parse takes a fraction after the seconds
		return Form{}, formWantClock
	}
	t, reason := formTimeParse(s, formWantClock, "15:04", "15:04:05")
	if reason != "" {
		return Form{}, reason
	}
	return Form{Kind: KindTimeOfDay, hour: t.Hour(), minute: t.Minute(), sec: t.Second()}, ""
}

// formParseDate parses a date, a date and time (a 'T' or spaces between
// them; seconds and up to 9 fraction digits allowed), or an RFC 3339
// instant, with time.Parse.
func formParseDate(s string) (Form, string) {
	if len(s) < 10 {
		return Form{}, formWantDate
	}
	d, reason := formTimeParse(s[:10], formWantDate, time.DateOnly)
	switch {
	case reason != "":
		return Form{}, reason
	case d.Year() == 0:
		return Form{}, "year 0 out of range 1-9999"
	}
	f := Form{Kind: KindDate, year: d.Year(), month: d.Month(), day: d.Day()}
	rest := s[10:]
	switch {
	case rest == "":
		return f, ""
	case rest[0] == 'T' || rest[0] == 't':
		rest = rest[1:]
	case rest[0] == ' ' || rest[0] == '\t':
		rest = strings.TrimLeft(rest, " \t")
	default:
		return Form{}, formWantDate
	}
	if i := strings.IndexByte(rest, '.'); i >= 0 {
		j := i + 1
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j == i+1 || j > i+10 { // time.Parse would drop digits past the ninth
			return Form{}, "want 1 to 9 digits of fractional seconds"
		}
	}
	norm := s[:10] + "T" + rest
	if z := norm[len(norm)-1]; z == 'z' {
		norm = norm[:len(norm)-1] + "Z"
	}
	if z := norm[len(norm)-1]; z == 'Z' || (len(rest) > 6 && (rest[len(rest)-6] == '+' || rest[len(rest)-6] == '-')) {
		t, reason := formTimeParse(norm, formWantDate, "2006-01-02T15:04Z07:00", "2006-01-02T15:04:05Z07:00")
		if reason != "" {
			return Form{}, reason
		}
		if _, off := t.Zone(); off <= -24*3600 || off >= 24*3600 {
			return Form{}, fmt.Sprintf("offset %q out of range", norm[len(norm)-6:])
		}
		if u := t.UTC(); u.Year() < 1 || u.Year() > 9999 {
			return Form{}, "instant out of range (years 1-9999 in UTC)"
		}
		return Form{Kind: KindInstant, unix: t.Unix(), nsec: t.Nanosecond()}, ""
	}
	t, reason := formTimeParse(norm, formWantDate, "2006-01-02T15:04", "2006-01-02T15:04:05")
	if reason != "" {
		return Form{}, reason
	}
	f.Kind, f.hour, f.minute, f.sec, f.nsec = KindDateTime, t.Hour(), t.Minute(), t.Second(), t.Nanosecond()
	return f, ""
}

// formTimeParse parses s with the first of layouts that takes it, by
// time.Parse. A field out of range is named with its value and range; any
// other failure is want.
func formTimeParse(s, want string, layouts ...string) (time.Time, string) {
	var err error
	for _, l := range layouts {
		var t time.Time
		if t, err = time.Parse(l, s); err == nil {
			return t, ""
		}
		if reason := formRangeReason(s, err); reason != "" {
			return time.Time{}, reason
		}
	}
	return time.Time{}, want
}

// formRangeReason names the field of s that time.Parse found out of range
// in err, with its value and range ("hour 25 out of range 0-23"); "" when
// err is about something else.
func formRangeReason(s string, err error) string {
	var pe *time.ParseError
	if !errors.As(err, &pe) {
		return ""
	}
	field, ok := strings.CutSuffix(strings.TrimPrefix(pe.Message, ": "), " out of range")
	if !ok {
		return ""
	}
	if field == "day" { // reported once the whole date is read: s starts with it
		y, _ := strconv.Atoi(s[:4])
		m, _ := strconv.Atoi(s[5:7])
		return fmt.Sprintf("day %s out of range for %s %d", strings.TrimLeft(s[8:10], "0"), time.Month(m), y)
	}
	// The field's digits end where the unparsed rest begins.
	end := len(s) - len(pe.ValueElem)
	start := end
	for start > 0 && s[start-1] >= '0' && s[start-1] <= '9' {
		start--
	}
	n, _ := strconv.Atoi(s[start:end])
	bounds := map[string]string{"month": "1-12", "hour": "0-23", "minute": "0-59", "second": "0-59"}[field]
	if bounds == "" {
		return ""
	}
	return fmt.Sprintf("%s %d out of range %s", field, n, bounds)
}
