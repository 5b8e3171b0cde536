package cronx

import (
	"fmt"
	"time"
)

// Dialect selects how a cron expression's day-of-week field is read.
type Dialect int

const (
	// Standard is Vixie cron extended with seconds and years: day-of-week
	// 0-7 with 0 and 7 both Sunday, and '?' allowed as a wildcard in
	// day-of-month and day-of-week.
	Standard Dialect = iota
	// Quartz is the Quartz scheduler's reading: 6 or 7 fields (seconds
	// first), day-of-week 1-7 for SUN-SAT, and '?' in exactly one of
	// day-of-month and day-of-week.
	Quartz
)

// DomDow is the rule that combines the day-of-month and day-of-week
// fields when a day must be chosen.
type DomDow int

const (
	// DomDowCronie is Linux cron's rule (cronie, Vixie cron): a day field
	// whose text starts with '*' (including "*/2") or is "?" is
	// unrestricted and a day must match both fields; when both are
	// restricted a day matching either fires. "0 0 */2 * 1" is Mondays
	// that fall on odd days; "0 0 13 * 5" is every 13th and every Friday.
	DomDowCronie DomDow = iota
	// DomDowPOSIX: only a bare "*" or "?" is unrestricted; when both
	// fields are restricted a day matching either fires, as robfig/cron,
	// croniter and cronexpr do. "0 0 */10 * SUN" fires on the 1st, 11th,
	// 21st and 31st and on Sundays.
	DomDowPOSIX
	// DomDowAnd: a day must match both fields (croniter's day_or=False,
	// fcron). "0 0 13 * 5" is Friday the 13th.
	DomDowAnd
)

// GapPolicy says what a cron occurrence does when its local time does not
// exist because the clocks jump forward (a DST gap).
type GapPolicy int

const (
	// GapNatural: an occurrence at a fixed time of day (one hour, one
	// minute, one second) fires once, at the first instant after the gap;
	// occurrences of a schedule that fires several times an hour (or whose
	// hour is a wildcard or step) do not exist in the gap.
	GapNatural GapPolicy = iota
	// GapSkip: occurrences in the gap do not fire.
	GapSkip
	// GapShift: occurrences in the gap fire at the same offset after the
	// gap began: 02:30 in a 02:00->03:00 gap fires at 03:30.
	GapShift
)

// OverlapPolicy says what a cron occurrence does when its local time occurs
// twice because the clocks fall back (a DST overlap).
type OverlapPolicy int

const (
	// OverlapNatural: a schedule whose hour field is a wildcard or a step
	// fires in both offsets, keeping its elapsed-time cadence; any other
	// fires once, in the first offset.
	OverlapNatural OverlapPolicy = iota
	// OverlapOnce is cronie's rule: a schedule whose second, minute or
	// hour field is a wildcard or a step ("*/15 * * * *", "* 1 * * *",
	// "30 * * * *") keeps firing through the repeated hour, since its
	// slots there are distinct instants; a fixed wall time ("30 1 * * *")
	// fires once, in the first offset.
	OverlapOnce
	// OverlapTwice: both occurrences fire.
	OverlapTwice
)

// Options configure Parse.
type Options struct {
	// Location the expression is read in. Default UTC. A CRON_TZ= or TZ=
	// prefix in the expression overrides it.
	Location *time.Location
	// Dialect of the day-of-week field. Default Standard.
	Dialect Dialect
	// DomDow combines day-of-month and day-of-week. Default DomDowCronie.
	// It changes nothing in the Quartz dialect, where one of the two is
	// always '?'.
	DomDow DomDow
	// Gap and Overlap are the DST policies. Default natural.
	Gap     GapPolicy
	Overlap OverlapPolicy
	// Key seeds H fields: the same key always gives the same values, so
	// ten thousand @hourly-style "H * * * *" schedules spread over the
	// hour. Usually the schedule id. Default: the expression itself.
	Key string
	// Zones resolves a CRON_TZ= or TZ= prefix's zone. Default: loaded
	// anew (see [Zones]).
	Zones *Zones
}

func (d Dialect) String() string {
	switch d {
	case Standard:
		return "standard"
	case Quartz:
		return "quartz"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

func (r DomDow) String() string {
	switch r {
	case DomDowCronie:
		return "cronie"
	case DomDowPOSIX:
		return "posix"
	case DomDowAnd:
		return "and"
	}
	return fmt.Sprintf("DomDow(%d)", int(r))
}

func (p GapPolicy) String() string {
	switch p {
	case GapNatural:
		return "natural"
	case GapSkip:
		return "skip"
	case GapShift:
		return "shift"
	}
	return fmt.Sprintf("GapPolicy(%d)", int(p))
}

func (p OverlapPolicy) String() string {
	switch p {
	case OverlapNatural:
		return "natural"
	case OverlapOnce:
		return "once"
	case OverlapTwice:
		return "twice"
	}
	return fmt.Sprintf("OverlapPolicy(%d)", int(p))
}

// ParseDialect reads "standard" or "quartz" ("" is standard).
func ParseDialect(s string) (Dialect, error) {
	switch s {
	case "", "standard":
		return Standard, nil
	case "quartz":
		return Quartz, nil
	}
	return 0, &ParseError{Field: "dialect", Value: s, Reason: "want standard or quartz"}
}

// ParseDomDow reads "cronie", "posix" or "and" ("" is cronie).
func ParseDomDow(s string) (DomDow, error) {
	switch s {
	case "", "cronie":
		return DomDowCronie, nil
	case "posix":
		return DomDowPOSIX, nil
	case "and":
		return DomDowAnd, nil
	}
	return 0, &ParseError{Field: "dom_dow", Value: s, Reason: "want cronie, posix or and"}
}

// ParseGapPolicy reads "natural", "skip" or "shift" ("" is natural).
func ParseGapPolicy(s string) (GapPolicy, error) {
	switch s {
	case "", "natural":
		return GapNatural, nil
	case "skip":
		return GapSkip, nil
	case "shift":
		return GapShift, nil
	}
	return 0, &ParseError{Field: "dst_gap", Value: s, Reason: "want natural, skip or shift"}
}

// ParseOverlapPolicy reads "natural", "once" or "twice" ("" is natural).
func ParseOverlapPolicy(s string) (OverlapPolicy, error) {
	switch s {
	case "", "natural":
		return OverlapNatural, nil
	case "once":
		return OverlapOnce, nil
	case "twice":
		return OverlapTwice, nil
	}
	return 0, &ParseError{Field: "dst_overlap", Value: s, Reason: "want natural, once or twice"}
}
