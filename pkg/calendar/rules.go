package calendar

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ruleKind is the kind of a holiday rule.
type ruleKind int

const (
	kindDate         ruleKind = iota // "date": MM-DD every year
	kindNth                          // "month" + "weekday" + "nth"
	kindRange                        // "from" + "to"
	kindEaster                       // "easter": offset from Easter Sunday
	kindDates                        // "dates": explicit dates
	kindJulianEaster                 // "julian_easter": offset from Orthodox Easter Sunday
	kindEquinox                      // "equinox": the day of the March or September equinox
	kindRelative                     // "weekday" + "before"/"after"/...: a weekday near an anchor
	kindBridge                       // "between_holidays": a day between two holidays
)

// observedMode says which weekday a weekend holiday is also observed on.
type observedMode int

const (
	observedNone           observedMode = iota // ""
	observedNearest                            // Saturday -> Friday, Sunday -> Monday
	observedMonday                             // Saturday or Sunday -> Monday
	observedSundayToMonday                     // Sunday -> Monday
)

// observedNames are the JSON names of the observed modes.
var observedNames = [...]string{"", "nearest", "monday", "sunday_to_monday"}

// maxEasterOffset bounds "easter", keeping a rule's dates within a year of
// its Easter Sunday.
const maxEasterOffset = 300

// rule is one parsed holiday rule.
type rule struct {
	name     string
	kind     ruleKind
	month    time.Month // kindDate, kindNth, kindRange (from)
	day      int        // kindDate, kindRange (from)
	toMonth  time.Month // kindRange
	toDay    int        // kindRange
	weekday  time.Weekday
	nth      int
	easter   int
	dates    []date // kindDates: sorted, distinct
	observed observedMode
	// subst: "substitute": "next_free_weekday"; substOn are the weekdays
	// (bits 1<<time.Weekday) whose holidays get one, 0 for the weekdays
	// without working hours.
	subst   bool
	substOn uint8
	// rel and anchor: kindRelative's relation and the rule (without a
	// name) giving its anchor date.
	rel    relation
	anchor *rule
	// half: the dates are half days with these hours, not holidays.
	half []clockSpan
	// loc is the calendar's zone (kindEquinox).
	loc      *time.Location
	hasYears bool
	fromYear int
	toYear   int
}

// ruleFields collects a holiday object's members before validation.
type ruleFields struct {
	name, date, weekday, from, to, observed *string
	month, nth, easter                      *int
	dates                                   []date
	hasDates                                bool
	years                                   []int
	ext                                     extFields
}

// parseRule reads one holiday object.
func parseRule(raw json.RawMessage, path string) (rule, error) {
	members, err := objectMembers(raw, path)
	if err != nil {
		return rule{}, err
	}
	var f ruleFields
	for _, m := range members {
		if err := f.set(m, joinPath(path, m.key)); err != nil {
			return rule{}, err
		}
	}
	return f.build(path)
}

// set stores one member, checking its JSON type and its own value.
func (f *ruleFields) set(m member, path string) error {
	str := func(dst **string) error {
		s, err := decodeString(m.val, path)
		*dst = &s
		return err
	}
	num := func(dst **int) error {
		n, err := decodeInt(m.val, path)
		*dst = &n
		return err
	}
	switch m.key {
	case "name":
		return str(&f.name)
	case "date":
		return str(&f.date)
	case "weekday":
		return str(&f.weekday)
	case "from":
		return str(&f.from)
	case "to":
		return str(&f.to)
	case "observed":
		return str(&f.observed)
	case "month":
		return num(&f.month)
	case "nth":
		return num(&f.nth)
	case "easter":
		return num(&f.easter)
	case "dates":
		f.hasDates = true
		return f.setDates(m.val, path)
	case "years":
		return f.setYears(m.val, path)
	}
	return f.ext.set(m, path)
}

// setDates reads the "dates" list, sorted and without repeats.
func (f *ruleFields) setDates(raw json.RawMessage, path string) error {
	elems, err := arrayElems(raw, path)
	if err != nil {
		return err
	}
	if len(elems) == 0 {
		return fieldError(path, "", "want at least one date")
	}
	for i, e := range elems {
		epath := indexPath(path, i)
		s, err := decodeString(e, epath)
		if err != nil {
			return err
		}
		d, ok := parseFullDate(s)
		if !ok {
			return fieldError(epath, s, `want a date "YYYY-MM-DD" (years 0001-9999)`)
		}
		f.dates = append(f.dates, d)
	}
	slices.SortFunc(f.dates, func(a, b date) int { return a.utc().Compare(b.utc()) })
	f.dates = slices.Compact(f.dates)
	return nil
}

// setYears reads "years": [from, to].
func (f *ruleFields) setYears(raw json.RawMessage, path string) error {
	elems, err := arrayElems(raw, path)
	if err != nil {
		return err
	}
	if len(elems) != 2 {
		return fieldError(path, text(raw), "want [from, to]")
	}
	for i, e := range elems {
		y, err := decodeInt(e, indexPath(path, i))
		if err != nil {
			return err
		}
		if y < 1 || y > 9999 {
			return fieldError(indexPath(path, i), text(e), "want a year from 1 to 9999")
		}
		f.years = append(f.years, y)
	}
	if f.years[0] > f.years[1] {
		return fieldError(path, text(raw), "from is after to")
	}
	return nil
}

// build validates the combination of fields and makes the rule.
func (f *ruleFields) build(path string) (rule, error) {
	var r rule
	if f.name == nil || strings.TrimSpace(*f.name) == "" {
		return r, fieldError(joinPath(path, "name"), "", "required")
	}
	if len(*f.name) > MaxNameBytes {
		return r, fieldError(joinPath(path, "name"), "", fmt.Sprintf("%d bytes is over the maximum of %d", len(*f.name), MaxNameBytes))
	}
	r.name = *f.name
	kinds := f.kinds()
	switch len(kinds) {
	case 0:
		return r, fieldError(path, "", oneOfKinds)
	case 1:
	default:
		return r, fieldError(path, "", oneOfKinds+"; got "+strings.Join(kinds, " and "))
	}
	var err error
	switch {
	case f.ext.relation != nil:
		err = f.buildRelative(&r, path)
	case f.date != nil:
		r.kind = kindDate
		r.month, r.day, err = monthDayField(*f.date, joinPath(path, "date"))
	case f.month != nil || f.weekday != nil || f.nth != nil:
		r.kind = kindNth
		err = f.buildNth(&r, path)
	case f.from != nil || f.to != nil:
		r.kind = kindRange
		err = f.buildRange(&r, path)
	case f.easter != nil:
		r.kind = kindEaster
		r.easter, err = easterOffset(*f.easter, joinPath(path, "easter"))
	case f.ext.julianEaster != nil:
		r.kind = kindJulianEaster
		r.easter, err = easterOffset(*f.ext.julianEaster, joinPath(path, "julian_easter"))
	case f.ext.equinox != nil:
		err = f.ext.buildEquinox(&r, path)
	case f.ext.between:
		r.kind = kindBridge
	default:
		r.kind = kindDates
		r.dates = f.dates
	}
	if err != nil {
		return r, err
	}
	if f.observed != nil {
		opath := joinPath(path, "observed")
		i := slices.Index(observedNames[:], *f.observed)
		if i < 0 {
			return r, fieldError(opath, *f.observed, `unknown mode; want "", "nearest", "monday" or "sunday_to_monday"`)
		}
		r.observed = observedMode(i)
		if r.observed != observedNone && !r.singleDate() {
			return r, fieldError(opath, *f.observed, `only allowed with "date", "month"+"weekday"+"nth", "easter", "julian_easter", "equinox" or a weekday-relative rule`)
		}
	}
	if err := f.ext.buildOptions(&r, path, f.observed != nil && r.observed != observedNone); err != nil {
		return r, err
	}
	if f.years != nil {
		r.hasYears, r.fromYear, r.toYear = true, f.years[0], f.years[1]
	}
	return r, nil
}

// oneOfKinds is the error for a rule of no kind or of several.
const oneOfKinds = `want exactly one of "date", "month"+"weekday"+"nth", "from"+"to", "easter", "julian_easter", ` +
	`"equinox", "weekday"+"before"/"after"/"on_or_before"/"on_or_after", "between_holidays" or "dates"`

// kinds names the rule kinds whose fields f holds.
func (f *ruleFields) kinds() []string {
	var kinds []string
	add := func(set bool, name string) {
		if set {
			kinds = append(kinds, name)
		}
	}
	add(f.date != nil, `"date"`)
	if f.ext.relation != nil {
		kinds = append(kinds, `"weekday"+"`+f.ext.relationKey+`"`)
		add(f.month != nil || f.nth != nil, `"month"/"nth"`)
	} else {
		add(f.month != nil || f.weekday != nil || f.nth != nil, `"month"/"weekday"/"nth"`)
	}
	add(f.from != nil || f.to != nil, `"from"/"to"`)
	add(f.easter != nil, `"easter"`)
	add(f.ext.julianEaster != nil, `"julian_easter"`)
	add(f.ext.equinox != nil, `"equinox"`)
	add(f.ext.hasBetween, `"between_holidays"`)
	add(f.hasDates, `"dates"`)
	return kinds
}

// easterOffset checks an "easter" or "julian_easter" offset.
func easterOffset(n int, path string) (int, error) {
	if n < -maxEasterOffset || n > maxEasterOffset {
		return 0, fieldError(path, fmt.Sprint(n), fmt.Sprintf("want days from -%d to %d", maxEasterOffset, maxEasterOffset))
	}
	return n, nil
}

// buildNth validates a "month"+"weekday"+"nth" rule.
func (f *ruleFields) buildNth(r *rule, path string) error {
	switch {
	case f.month == nil:
		return fieldError(joinPath(path, "month"), "", `required with "weekday" and "nth"`)
	case f.weekday == nil:
		return fieldError(joinPath(path, "weekday"), "", `required with "month" and "nth"`)
	case f.nth == nil:
		return fieldError(joinPath(path, "nth"), "", `required with "month" and "weekday"`)
	}
	if *f.month < 1 || *f.month > 12 {
		return fieldError(joinPath(path, "month"), fmt.Sprint(*f.month), "want a month from 1 to 12")
	}
	i, ok := dayIndex(*f.weekday)
	if !ok {
		return fieldError(joinPath(path, "weekday"), *f.weekday, "unknown day")
	}
	if n := *f.nth; n == 0 || n < -5 || n > 5 {
		return fieldError(joinPath(path, "nth"), fmt.Sprint(n), "want 1 to 5, or -1 (last) to -5")
	}
	r.month, r.weekday, r.nth = time.Month(*f.month), weekdayOf(i), *f.nth
	return nil
}

// buildRange validates a "from"+"to" rule.
func (f *ruleFields) buildRange(r *rule, path string) error {
	if f.from == nil {
		return fieldError(joinPath(path, "from"), "", `required with "to"`)
	}
	if f.to == nil {
		return fieldError(joinPath(path, "to"), "", `required with "from"`)
	}
	var err error
	if r.month, r.day, err = monthDayField(*f.from, joinPath(path, "from")); err != nil {
		return err
	}
	r.toMonth, r.toDay, err = monthDayField(*f.to, joinPath(path, "to"))
	return err
}

// monthDayField reads "MM-DD" (29 February allowed).
func monthDayField(s, path string) (time.Month, int, error) {
	m, d, ok := parseMonthDay(s)
	if !ok {
		return 0, 0, fieldError(path, s, `want a day of the year "MM-DD"`)
	}
	return m, d, nil
}

// parseMonthDay reads "MM-DD", accepting any day of a leap year.
func parseMonthDay(s string) (time.Month, int, bool) {
	if len(s) != 5 || s[2] != '-' {
		return 0, 0, false
	}
	m, ok1 := twoDigits(s[0:2])
	d, ok2 := twoDigits(s[3:5])
	if !ok1 || !ok2 || m < 1 || m > 12 || d < 1 || d > daysIn(2000, time.Month(m)) {
		return 0, 0, false
	}
	return time.Month(m), d, true
}

// parseFullDate reads "YYYY-MM-DD".
func parseFullDate(s string) (date, bool) {
	if len(s) != 10 || s[4] != '-' {
		return date{}, false
	}
	hi, ok1 := twoDigits(s[0:2])
	lo, ok2 := twoDigits(s[2:4])
	m, d, ok3 := parseMonthDay(s[5:])
	y := hi*100 + lo
	if !ok1 || !ok2 || !ok3 || y < 1 || d > daysIn(y, m) {
		return date{}, false
	}
	return date{y, m, d}, true
}

// twoDigits reads exactly two ASCII digits.
func twoDigits(s string) (int, bool) {
	if len(s) != 2 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return 0, false
	}
	return int(s[0]-'0')*10 + int(s[1]-'0'), true
}
