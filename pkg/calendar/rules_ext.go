package calendar

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// relation places a weekday-relative rule's date against its anchor.
type relation int

const (
	relBefore     relation = iota // the weekday strictly before the anchor
	relAfter                      // the weekday strictly after the anchor
	relOnOrBefore                 // the anchor, or the weekday before it
	relOnOrAfter                  // the anchor, or the weekday after it
)

// relationNames are the JSON names of the relations.
var relationNames = [...]string{"before", "after", "on_or_before", "on_or_after"}

// substituteNextFree is the one "substitute" mode.
const substituteNextFree = "next_free_weekday"

// extFields collects a holiday object's members beyond the first rule
// kinds: Orthodox Easter, equinoxes, weekday-relative rules, bridge days,
// substitutes and half days.
type extFields struct {
	julianEaster *int
	equinox      *string
	// relation is the anchor's raw value, relationKey its member's name.
	relation    json.RawMessage
	relationKey string
	rel         relation
	anchor      *rule
	between     bool
	hasBetween  bool
	substitute  *string
	substOn     uint8
	hasSubstOn  bool
	half        []clockSpan
	hasHalf     bool
}

// set stores one member of the extended fields; an unknown name is an
// error.
func (e *extFields) set(m member, path string) error {
	switch m.key {
	case "julian_easter":
		n, err := decodeInt(m.val, path)
		e.julianEaster = &n
		return err
	case "equinox":
		s, err := decodeString(m.val, path)
		e.equinox = &s
		return err
	case "before", "after", "on_or_before", "on_or_after":
		if e.relation != nil {
			return fieldError(path, "", `give one of "before", "after", "on_or_before" or "on_or_after"; got "`+e.relationKey+`" too`)
		}
		e.relation, e.relationKey = m.val, m.key
		e.rel = relation(slices.Index(relationNames[:], m.key))
		a, err := parseAnchor(m.val, path)
		e.anchor = &a
		return err
	case "between_holidays":
		e.hasBetween = true
		switch kindOf(m.val) {
		case 't':
			e.between = true
			return nil
		case 'f':
			return fieldError(path, "false", "want true (leave the field out otherwise)")
		}
		return fieldError(path, text(m.val), "want true")
	case "substitute":
		s, err := decodeString(m.val, path)
		e.substitute = &s
		return err
	case "substitute_on":
		return e.setSubstOn(m.val, path)
	case "hours":
		e.hasHalf = true
		spans, err := parseSpans(m.val, path)
		if err == nil && len(spans) == 0 {
			err = fieldError(path, "", `want at least one interval "HH:MM-HH:MM"`)
		}
		e.half = spans
		return err
	}
	return fieldError(path, "", "unknown field")
}

// setSubstOn reads "substitute_on": day names or ranges ("sat-sun").
func (e *extFields) setSubstOn(raw json.RawMessage, path string) error {
	elems, err := arrayElems(raw, path)
	if err != nil {
		return err
	}
	if len(elems) == 0 {
		return fieldError(path, "", "want at least one day")
	}
	e.hasSubstOn = true
	for i, el := range elems {
		epath := indexPath(path, i)
		key, err := decodeString(el, epath)
		if err != nil {
			return err
		}
		lo, hi, err := parseDayKey(key, epath)
		if err != nil {
			return err
		}
		for d := lo; d <= hi; d++ {
			e.substOn |= 1 << weekdayOf(d)
		}
	}
	return nil
}

// parseAnchor reads a weekday-relative rule's anchor: "MM-DD" or an
// object without a name giving one date a year ("date", "month"+"weekday"
// +"nth", "easter" or "julian_easter").
func parseAnchor(raw json.RawMessage, path string) (rule, error) {
	const want = `want "MM-DD" or an object with one of "date", "month"+"weekday"+"nth", "easter" or "julian_easter"`
	if kindOf(raw) == '"' {
		s, _ := decodeString(raw, path)
		m, d, err := monthDayField(s, path)
		return rule{kind: kindDate, month: m, day: d}, err
	}
	if kindOf(raw) != '{' {
		return rule{}, fieldError(path, text(raw), want)
	}
	members, err := objectMembers(raw, path)
	if err != nil {
		return rule{}, err
	}
	var f ruleFields
	for _, m := range members {
		mpath := joinPath(path, m.key)
		switch m.key {
		case "date", "month", "weekday", "nth", "easter", "julian_easter":
		default:
			return rule{}, fieldError(mpath, "", "unknown field; "+want)
		}
		if err := f.set(m, mpath); err != nil {
			return rule{}, err
		}
	}
	if kinds := f.kinds(); len(kinds) != 1 {
		return rule{}, fieldError(path, "", want)
	}
	name := "anchor"
	f.name = &name
	r, err := f.build(path)
	r.name = ""
	return r, err
}

// buildRelative validates a weekday-relative rule: "weekday" and one of
// "before", "after", "on_or_before" or "on_or_after".
func (f *ruleFields) buildRelative(r *rule, path string) error {
	if f.weekday == nil {
		return fieldError(joinPath(path, "weekday"), "", `required with "`+f.ext.relationKey+`"`)
	}
	i, ok := dayIndex(*f.weekday)
	if !ok {
		return fieldError(joinPath(path, "weekday"), *f.weekday, "unknown day")
	}
	r.kind, r.weekday, r.rel, r.anchor = kindRelative, weekdayOf(i), f.ext.rel, f.ext.anchor
	return nil
}

// buildEquinox validates an "equinox" rule.
func (e *extFields) buildEquinox(r *rule, path string) error {
	r.kind = kindEquinox
	switch *e.equinox {
	case "march":
		r.month = time.March
	case "september":
		r.month = time.September
	default:
		return fieldError(joinPath(path, "equinox"), *e.equinox, `want "march" or "september"`)
	}
	return nil
}

// buildOptions validates "substitute", "substitute_on" and "hours" against
// the rule's kind; observed is true when the rule shifts with "observed".
func (e *extFields) buildOptions(r *rule, path string, observed bool) error {
	if e.substitute != nil {
		spath := joinPath(path, "substitute")
		switch {
		case *e.substitute != substituteNextFree:
			return fieldError(spath, *e.substitute, `unknown mode; want "`+substituteNextFree+`"`)
		case observed:
			return fieldError(spath, *e.substitute, `give "observed" or "substitute", not both`)
		case !r.singleDate():
			return fieldError(spath, *e.substitute, `only allowed with "date", "month"+"weekday"+"nth", "easter", "julian_easter", "equinox" or a weekday-relative rule`)
		}
		r.subst = true
	}
	if e.hasSubstOn {
		if !r.subst {
			return fieldError(joinPath(path, "substitute_on"), "", `only allowed with "substitute"`)
		}
		r.substOn = e.substOn
	}
	if e.hasHalf {
		hpath := joinPath(path, "hours")
		switch {
		case r.kind == kindBridge:
			return fieldError(hpath, "", `not allowed with "between_holidays"`)
		case observed || r.subst:
			return fieldError(hpath, "", `a half day is a business day: not allowed with "observed" or "substitute"`)
		}
		r.half = e.half
	}
	return nil
}

// singleDate reports whether the rule names one date a year, which
// "observed" and "substitute" can shift.
func (r *rule) singleDate() bool {
	switch r.kind {
	case kindDate, kindNth, kindEaster, kindJulianEaster, kindEquinox, kindRelative:
		return true
	}
	return false
}

// describeExt describes the extended rule kinds: "Orthodox Easter Sunday
// +1 day", "March equinox", "Wednesday before 11-23", "a day between two
// holidays".
func (r *rule) describeExt() string {
	switch r.kind {
	case kindJulianEaster:
		return "Orthodox Easter Sunday" + daysText(r.easter)
	case kindEquinox:
		return r.month.String() + " equinox"
	case kindRelative:
		anchor := r.anchor.describe()
		if r.anchor.kind == kindDate {
			anchor = monthDay(r.anchor.month, r.anchor.day)
		}
		return r.weekday.String() + " " + strings.ReplaceAll(relationNames[r.rel], "_", " ") + " " + anchor
	case kindBridge:
		return "a day between two holidays"
	}
	return ""
}

// describeOptions describes "substitute" and "hours": ", substitute
// next_free_weekday for sun", ", half day 09:30-13:00".
func (r *rule) describeOptions() string {
	var b strings.Builder
	if r.subst {
		b.WriteString(", substitute " + substituteNextFree)
		if r.substOn != 0 {
			b.WriteString(" for " + strings.Join(weekdayNames(r.substOn), ", "))
		}
	}
	if r.half != nil {
		b.WriteString(", half day")
		for i, s := range r.half {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(" " + s.String())
		}
	}
	return b.String()
}

// weekdayNames lists the JSON day names of a weekday mask, Monday first.
func weekdayNames(mask uint8) []string {
	var out []string
	for i, n := range dayNames {
		if mask&(1<<weekdayOf(i)) != 0 {
			out = append(out, n)
		}
	}
	return out
}
