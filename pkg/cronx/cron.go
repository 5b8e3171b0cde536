package cronx

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/cronexpr"
)

// engineFirstYear is the first calendar year hashicorp/cronexpr produces
// fire times in; its last is 2099.
const engineFirstYear = 1970

// Cron is a parsed cron expression evaluated in a time zone. It is
// immutable and safe for concurrent use. The zero Cron never fires; use
// [ParseCron] to build one.
type Cron struct {
	spec string
	loc  *time.Location
	expr *cronexpr.Expression
}

// ParseCron parses a cron expression to be evaluated in loc; a nil loc
// means UTC.
//
// The expression has 5 fields, "minute hour day-of-month month day-of-week"
// (the second is 0), or 6 fields with the seconds FIRST, "second minute hour
// day-of-month month day-of-week", as in Quartz and the NATS server. It may
// instead be one of the aliases @yearly, @annually, @monthly, @weekly,
// @daily, @midnight and @hourly. See the package documentation for the field
// syntax.
//
// Errors are *ParseError. An expression that can never fire, such as
// "0 0 30 2 *", is rejected with Field "cron".
func ParseCron(expr string, loc *time.Location) (*Cron, error) {
	if loc == nil {
		loc = time.UTC
	}
	fields := strings.Fields(expr)
	spec := strings.Join(fields, " ")
	if len(fields) == 0 {
		return nil, &ParseError{Field: "cron", Value: expr, Reason: "empty expression"}
	}
	if len(fields) == 1 && strings.HasPrefix(fields[0], "@") {
		expanded, ok := expandAlias(fields[0])
		if !ok {
			return nil, &ParseError{Field: "cron", Value: spec,
				Reason: "unknown alias; want one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly"}
		}
		fields = strings.Fields(expanded)
	}
	var first fieldKind
	switch len(fields) {
	case 5:
		first = fieldMinute
	case 6:
		first = fieldSecond
	default:
		return nil, &ParseError{Field: "cron", Value: spec,
			Reason: fmt.Sprintf("expected 5 fields (minute hour day-of-month month day-of-week) or 6 (second first), got %d", len(fields))}
	}
	parsed := [numFields]cronField{fieldSecond: {set: 1}} // second 0 unless given
	for i, text := range fields {
		k := first + fieldKind(i)
		f, reason := parseField(k, text)
		if reason != "" {
			return nil, &ParseError{Field: specOf(k).name, Pos: i + 1, Value: text, Reason: reason}
		}
		parsed[k] = f
	}
	ce, err := compile(parsed)
	if err != nil {
		return nil, &ParseError{Field: "cron", Value: spec, Reason: "rejected by the cron engine: " + err.Error()}
	}
	c := &Cron{spec: spec, loc: loc, expr: ce}
	if c.neverFires() {
		return nil, &ParseError{Field: "cron", Value: spec,
			Reason: "never fires: no day matches the day-of-month and month fields"}
	}
	return c, nil
}

// expandAlias maps an @alias (any case) to its 6-field expression.
func expandAlias(alias string) (string, bool) {
	switch strings.ToLower(alias) {
	case "@yearly", "@annually":
		return "0 0 0 1 1 *", true
	case "@monthly":
		return "0 0 0 1 * *", true
	case "@weekly":
		return "0 0 0 * * 0", true
	case "@daily", "@midnight":
		return "0 0 0 * * *", true
	case "@hourly":
		return "0 0 * * * *", true
	}
	return "", false
}

// compile hands the validated fields to hashicorp/cronexpr as the 7-field
// form it understands (second ... day-of-week year), converting any panic
// into an error.
func compile(fields [numFields]cronField) (expr *cronexpr.Expression, err error) {
	defer func() {
		if r := recover(); r != nil {
			expr, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	parts := make([]string, 0, numFields+1)
	for _, f := range fields {
		parts = append(parts, f.engineText())
	}
	parts = append(parts, "*") // year
	return cronexpr.Parse(strings.Join(parts, " "))
}

// neverFires reports whether the expression has no fire time. The search
// is deterministic: it starts at 2000-01-01T00:00:00Z and cronexpr scans
// every remaining year it supports (through 2099), far more than the 28
// years after which the Gregorian weekday/leap-year pattern repeats.
func (c *Cron) neverFires() bool {
	return c.nextWall(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero()
}

// nextWall returns the first whole second strictly after w, a wall-clock
// reading expressed in UTC, whose calendar fields match the expression, or
// the zero time when there is none through the year 2099.
func (c *Cron) nextWall(w time.Time) time.Time {
	// cronexpr's Next stores scratch state in the Expression, so evaluate
	// a shallow copy to stay safe for concurrent use.
	e := *c.expr
	return e.Next(w)
}

// Next returns the first fire time strictly after after, in c's location,
// or the zero time when there is none (in particular after the year 2099,
// the limit of the underlying engine).
//
// A fire time is an instant whose wall-clock reading in c's location
// matches the expression; see the package documentation for what this means
// around daylight-saving transitions.
func (c *Cron) Next(after time.Time) time.Time {
	if c == nil || c.expr == nil {
		return time.Time{}
	}
	loc := c.Location()
	t := after.In(loc)
	if t.Year() < engineFirstYear {
		// cronexpr never fires before 1970 and treats the zero time as "no
		// fire"; start just before 1970 instead (still later than after).
		t = time.Date(engineFirstYear, 1, 1, 0, 0, 0, 0, loc).Add(-time.Nanosecond)
	}
	w := wallClock(t)
	// Walk the zone's periods of constant UTC offset, starting with the one
	// holding t. Within a period wall clock and instant differ by a fixed
	// offset, so the calendar search can run in UTC, where cronexpr has no
	// daylight-saving logic (that logic can loop forever in zones whose
	// transitions happen at midnight, such as America/Havana). The loop
	// ends because t moves forward at least to the next transition or UTC
	// year boundary (see zoneEnd) on each turn, and cronexpr gives up
	// after 2099.
	for {
		_, offset := t.Zone()
		end := zoneEnd(t)
		cw := c.nextWall(w)
		if cw.IsZero() {
			return time.Time{}
		}
		fire := time.Unix(cw.Unix()-int64(offset), 0).In(loc)
		if end.IsZero() || fire.Before(end) {
			return fire
		}
		// cw is not a wall-clock reading of this period: continue with the
		// next period, including its first instant.
		t = end.In(loc)
		w = wallClock(t).Add(-time.Nanosecond)
	}
}

// zoneEnd returns an instant after t up to which t's UTC offset does not
// change (the end of t's zone period, or an earlier instant where Go splits
// a period at a year boundary), or the zero time if the offset never
// changes again.
func zoneEnd(t time.Time) time.Time {
	_, end := t.ZoneBounds()
	if end.IsZero() || end.After(t) {
		return end
	}
	// Past a zone's last explicit transition Go derives periods from the
	// zone's rule one UTC year at a time and ends a year 365 days after its
	// start, so during the last UTC day of a leap year ZoneBounds reports
	// an end that is not after t. The offset is constant until the next
	// UTC midnight, where Go's computation for the next year takes over.
	return t.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour).In(t.Location())
}

// wallClock returns t's wall-clock reading in its location, as a UTC time.
func wallClock(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// String returns the expression as given, trimmed and with fields
// separated by single spaces. ParseCron(c.String(), c.Location()) yields an
// equivalent Cron.
func (c *Cron) String() string {
	if c == nil {
		return ""
	}
	return c.spec
}

// Location returns the time zone the expression is evaluated in; UTC for a
// zero Cron.
func (c *Cron) Location() *time.Location {
	if c == nil || c.loc == nil {
		return time.UTC
	}
	return c.loc
}
