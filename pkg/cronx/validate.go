package cronx

import (
	"fmt"
	"strconv"
	"strings"
)

// fieldKind identifies a cron field by meaning, independently of its
// position in a 5- or 6-field expression.
type fieldKind int

const (
	fieldSecond fieldKind = iota
	fieldMinute
	fieldHour
	fieldDayOfMonth
	fieldMonth
	fieldDayOfWeek
	numFields
)

// fieldSpec describes the syntax of one cron field.
type fieldSpec struct {
	name string
	// min and max bound the numeric values that may be written.
	min, max int
	// last is the largest value "*" and "N/step" expand to. It differs from
	// max only for day-of-week, where 7 is accepted as another name for 0.
	last int
	// names holds the three-letter names of the values, concatenated, for
	// the value nameBase onwards ("" when the field has no names).
	names    string
	nameBase int
	// question reports whether "?" (same as "*") is allowed.
	question bool
}

func specOf(k fieldKind) fieldSpec {
	switch k {
	case fieldSecond:
		return fieldSpec{name: "second", min: 0, max: 59, last: 59}
	case fieldMinute:
		return fieldSpec{name: "minute", min: 0, max: 59, last: 59}
	case fieldHour:
		return fieldSpec{name: "hour", min: 0, max: 23, last: 23}
	case fieldDayOfMonth:
		return fieldSpec{name: "day-of-month", min: 1, max: 31, last: 31, question: true}
	case fieldMonth:
		return fieldSpec{name: "month", min: 1, max: 12, last: 12,
			names: "janfebmaraprmayjunjulaugsepoctnovdec", nameBase: 1}
	case fieldDayOfWeek:
		return fieldSpec{name: "day-of-week", min: 0, max: 7, last: 6,
			names: "sunmontuewedthufrisat", nameBase: 0, question: true}
	}
	panic(fmt.Sprintf("cronx: unknown field kind %d", k))
}

// fieldSet is a set of field values, bit v standing for value v.
// Day-of-week 7 is stored as 0 (Sunday).
type fieldSet uint64

func (s fieldSet) has(v int) bool { return s&(1<<uint(v)) != 0 }

// cronField is a validated cron field.
type cronField struct {
	set fieldSet
	// star reports that the field was written as a bare "*" or "?", i.e.
	// it does not restrict. This matters for the day-of-month/day-of-week
	// rule: when both are restricted a day matches if either matches.
	star bool
}

// parseField validates the text of one field and returns its value set, or
// a non-empty reason explaining why the text is invalid.
func parseField(k fieldKind, text string) (cronField, string) {
	sp := specOf(k)
	s := strings.ToLower(text)
	switch s {
	case "*":
		return cronField{set: sp.span(sp.min, sp.last, 1), star: true}, ""
	case "?":
		if !sp.question {
			return cronField{}, `"?" is only allowed in the day-of-month and day-of-week fields`
		}
		return cronField{set: sp.span(sp.min, sp.last, 1), star: true}, ""
	}
	if r := unsupported(k, s); r != "" {
		return cronField{}, r
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || strings.ContainsRune("*,-/?", r)) {
			return cronField{}, fmt.Sprintf("invalid character %q", r)
		}
	}
	items := strings.Split(s, ",")
	var f cronField
	for _, it := range items {
		switch {
		case it == "":
			return cronField{}, "empty list item"
		case strings.Contains(it, "?"):
			if !sp.question {
				return cronField{}, `"?" is only allowed in the day-of-month and day-of-week fields`
			}
			return cronField{}, `"?" must be the whole field`
		case it == "*":
			return cronField{}, `"*" cannot be combined with other list items`
		}
		set, reason := sp.item(it)
		if reason != "" {
			return cronField{}, reason
		}
		f.set |= set
	}
	return f, ""
}

// unsupported recognises Quartz-style extensions that a later version will
// implement, so that users get a clearer message than "invalid character".
func unsupported(k fieldKind, s string) string {
	if strings.Contains(s, "#") && k == fieldDayOfWeek {
		return `"#" (nth day of week) is not supported yet`
	}
	for _, run := range letterRuns(s) {
		switch {
		case run == "h":
			return `"H" (hashed value) is not supported yet`
		case (run == "l" || run == "lw") && (k == fieldDayOfMonth || k == fieldDayOfWeek):
			return `"L" (last) is not supported yet`
		case run == "w" && k == fieldDayOfMonth:
			return `"W" (nearest weekday) is not supported yet`
		}
	}
	return ""
}

// letterRuns returns the maximal runs of ASCII letters in s.
func letterRuns(s string) []string {
	var runs []string
	start := -1
	for i := 0; i <= len(s); i++ {
		letter := i < len(s) && s[i] >= 'a' && s[i] <= 'z'
		switch {
		case letter && start < 0:
			start = i
		case !letter && start >= 0:
			runs = append(runs, s[start:i])
			start = -1
		}
	}
	return runs
}

// item parses one list item: "*", "N", "N-M", each optionally followed by
// "/step". "N/step" means N through the field's last value.
func (sp fieldSpec) item(it string) (fieldSet, string) {
	base, stepText, hasStep := strings.Cut(it, "/")
	step := 1
	if hasStep {
		n, ok := atoi(stepText)
		switch {
		case !ok:
			return 0, fmt.Sprintf("invalid step %q", stepText)
		case n < 1:
			return 0, fmt.Sprintf("step %d must be at least 1", n)
		case n > sp.max:
			return 0, fmt.Sprintf("step %d out of range 1-%d", n, sp.max)
		}
		step = n
	}
	if base == "*" {
		return sp.span(sp.min, sp.last, step), ""
	}
	loText, hiText, isRange := strings.Cut(base, "-")
	lo, reason := sp.value(loText, false)
	if reason != "" {
		return 0, reason
	}
	hi := lo
	switch {
	case isRange:
		if hi, reason = sp.value(hiText, true); reason != "" {
			return 0, reason
		}
		if lo > hi {
			return 0, fmt.Sprintf("range %s-%s is reversed (start must not exceed end)", loText, hiText)
		}
	case hasStep:
		hi = sp.last
		if lo > hi {
			hi = lo // day-of-week "7/step"
		}
	}
	return sp.span(lo, hi, step), ""
}

// value parses a number or a name. rangeEnd reports that the value ends a
// range, where the day-of-week name SUN means 7 so that "FRI-SUN" works.
func (sp fieldSpec) value(text string, rangeEnd bool) (int, string) {
	if text == "" {
		return 0, "missing value"
	}
	if n, ok := atoi(text); ok {
		if n < sp.min || n > sp.max {
			return 0, fmt.Sprintf("value %s out of range %d-%d", text, sp.min, sp.max)
		}
		return n, ""
	}
	if !isDigits(text) && sp.names != "" && len(text) == 3 {
		for i := 0; i+3 <= len(sp.names); i += 3 {
			if sp.names[i:i+3] == text {
				v := sp.nameBase + i/3
				if rangeEnd && v == 0 && sp.max == 7 {
					v = 7
				}
				return v, ""
			}
		}
	}
	switch {
	case isDigits(text):
		return 0, fmt.Sprintf("value %s out of range %d-%d", text, sp.min, sp.max)
	case sp.names == "":
		return 0, fmt.Sprintf("invalid value %q: %s must be a number", text, sp.name)
	default:
		return 0, fmt.Sprintf("unknown name %q", text)
	}
}

// span returns the set {lo, lo+step, ...} up to hi inclusive, folding
// day-of-week 7 onto 0.
func (sp fieldSpec) span(lo, hi, step int) fieldSet {
	var set fieldSet
	for v := lo; v <= hi; v += step {
		if sp.max == 7 && v == 7 {
			set |= 1
			continue
		}
		set |= 1 << uint(v)
	}
	return set
}

// engineText renders a field for hashicorp/cronexpr: "*" or an ascending
// list of plain numbers and ranges. Feeding cronexpr only this minimal syntax
// sidesteps its parsing quirks, notably that a day-of-week range ending in 7
// ("5-7") loses Sunday: such a set is rendered "0,5-6".
func (f cronField) engineText() string {
	if f.star {
		return "*"
	}
	var parts []string
	for v := 0; v < 64; {
		if !f.set.has(v) {
			v++
			continue
		}
		end := v
		for end+1 < 64 && f.set.has(end+1) {
			end++
		}
		if end == v {
			parts = append(parts, strconv.Itoa(v))
		} else {
			parts = append(parts, strconv.Itoa(v)+"-"+strconv.Itoa(end))
		}
		v = end + 1
	}
	return strings.Join(parts, ",")
}

// atoi parses a short run of decimal digits. Longer runs are reported as
// not ok so that huge numbers cannot overflow.
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 4 || !isDigits(s) {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
