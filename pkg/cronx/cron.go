package cronx

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Cron is a parsed cron expression evaluated in a time zone with a DST
// policy. It is immutable and safe for concurrent use; Next allocates
// nothing. The zero Cron never fires; use [Parse] or [NewCron].
type Cron struct {
	spec string
	opts Options
	// vals are the values of each field but the year (at most 60 each,
	// bit v for value v), years the year field's: a Cron is 192 bytes, not
	// the 480 of seven parsed fields, which a million schedules notice.
	vals  [fYear]uint64
	years bitset
	// days are the day fields' extras (L, W, nL, n#k).
	days dayExtras
	// fixedTime: one hour (no wildcard, no step), one minute, one second:
	// the schedule fires at a fixed time of day (GapNatural moves it).
	fixedTime bool
	// hourFree: the hour field is a wildcard or a step (OverlapNatural
	// fires it in both offsets).
	hourFree bool
	// wildTime: the second, minute or hour field is a wildcard or a step
	// (OverlapOnce fires it in both offsets, as cronie does).
	wildTime bool
	// dayAnd: a day must match both day-of-month and day-of-week (else
	// either), from Options.DomDow and the two fields.
	dayAnd bool
}

// Parse reads a recurrence: a cron expression (see [NewCron]) or
// "@every <duration>" (an [Interval] aligned to the Unix epoch, in the
// duration grammar of [ParseEvery]).
func Parse(expr string, opts Options) (Schedule, error) {
	if rest, ok := cutPrefixFold(strings.TrimSpace(expr), "@every"); ok && (rest == "" || unicode.IsSpace(rune(rest[0]))) {
		d, err := ParseEvery(strings.TrimSpace(rest))
		if err != nil {
			return nil, err
		}
		return Interval{Every: d}, nil
	}
	return NewCron(expr, opts)
}

// NewCron parses a cron expression.
//
// Fields, by count: 5 "minute hour day-of-month month day-of-week" (second
// 0); 6 "second minute hour day-of-month month day-of-week" (seconds FIRST,
// as in Quartz and the NATS server); 7 adds the year (1970-2199). Aliases:
// @yearly @annually @monthly @weekly @daily @midnight @hourly, and
// gronx's @everyminute @always @5minutes @10minutes @15minutes @30minutes
// @everysecond. A leading "CRON_TZ=Zone " or "TZ=Zone " sets the zone.
//
// Errors are *ParseError naming the field, its position and the reason,
// including for expressions that can never fire ("0 0 30 2 *").
func NewCron(expr string, opts Options) (*Cron, error) {
	fields := strings.Fields(expr)
	if len(fields) == 0 {
		return nil, &ParseError{Field: "cron", Value: expr, Reason: "empty expression"}
	}
	spec := strings.Join(fields, " ")
	if opts.Location == nil {
		opts.Location = time.UTC
	}
	if k, zone, ok := strings.Cut(fields[0], "="); ok && (k == "CRON_TZ" || k == "TZ") {
		loc, err := opts.Zones.Load(zone)
		if err != nil {
			return nil, err
		}
		opts.Location = loc
		fields = fields[1:]
		if len(fields) == 0 {
			return nil, &ParseError{Field: "cron", Value: spec, Reason: "no expression after " + k + "="}
		}
	}
	key := opts.Key
	if key == "" {
		key = spec
	}
	if len(fields) == 1 && strings.HasPrefix(fields[0], "@") {
		expanded, ok := expandAlias(fields[0])
		if !ok {
			return nil, &ParseError{Field: "cron", Value: fields[0],
				Reason: "unknown alias; want @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly, @everyminute, @always, @5minutes, @10minutes, @15minutes, @30minutes, @everysecond or @every <duration>"}
		}
		fields = strings.Fields(expanded)
		opts.Dialect = Standard
	}
	var first fieldKind
	switch n := len(fields); {
	case n == 5 && opts.Dialect == Quartz:
		return nil, &ParseError{Field: "cron", Value: spec, Reason: "the quartz dialect takes 6 or 7 fields (seconds first)"}
	case n == 5:
		first = fMinute
	case n == 6 || n == 7:
		first = fSecond
	default:
		return nil, &ParseError{Field: "cron", Value: spec,
			Reason: fmt.Sprintf("got %d fields; want 5 (minute hour day-of-month month day-of-week), 6 (second first) or 7 (second first, year last)", n)}
	}
	var f [numFields]field
	// Unwritten fields: second 0, year any.
	f[fSecond].vals.set(0)
	f[fYear] = field{star: true}
	for y := minYear; y <= maxYear; y++ {
		f[fYear].vals.set(y - minYear)
	}
	for i, text := range fields {
		k := first + fieldKind(i)
		fk, reason := fieldParser{kind: k, dialect: opts.Dialect, key: key}.parse(text)
		if reason != "" {
			return nil, &ParseError{Field: k.String(), Pos: i + 1, Value: text, Reason: reason}
		}
		f[k] = fk
	}
	if opts.Dialect == Quartz {
		domQ, dowQ := fields[fDOM-first] == "?", fields[fDOW-first] == "?"
		if domQ == dowQ {
			return nil, &ParseError{Field: "day-of-month", Pos: int(fDOM-first) + 1, Value: fields[fDOM-first],
				Reason: "the quartz dialect needs '?' in exactly one of day-of-month and day-of-week"}
		}
	}
	c := &Cron{spec: spec, opts: opts, years: f[fYear].vals}
	for k := range fYear {
		c.vals[k] = f[k].vals[0] // every value < 64 (fieldKind.bounds)
	}
	c.days = f[fDOM].dayExtras
	c.days.lastDOW, c.days.nth = f[fDOW].lastDOW, f[fDOW].nth
	h := &f[fHour]
	c.hourFree = h.star || h.stepped
	for _, k := range []fieldKind{fSecond, fMinute, fHour} {
		c.wildTime = c.wildTime || f[k].star || f[k].stepped
	}
	dom, dow := &f[fDOM], &f[fDOW]
	switch opts.DomDow {
	case DomDowPOSIX:
		c.dayAnd = dom.bare || dow.bare
	case DomDowAnd:
		c.dayAnd = true
	default:
		c.dayAnd = dom.star || dow.star
	}
	c.fixedTime = !c.hourFree && h.vals.count() == 1 && f[fMinute].vals.count() == 1 && f[fSecond].vals.count() == 1
	if _, ok := c.nextCivil(civil{year: minYear, month: 1, day: 1}); !ok {
		return nil, &ParseError{Field: "cron", Value: spec, Reason: "never fires: no date from 1970 to 2199 matches"}
	}
	return c, nil
}

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
	case "@everyminute", "@always": // gronx, Laravel
		return "0 * * * * *", true
	case "@5minutes":
		return "0 */5 * * * *", true
	case "@10minutes":
		return "0 */10 * * * *", true
	case "@15minutes":
		return "0 */15 * * * *", true
	case "@30minutes":
		return "0 */30 * * * *", true
	case "@everysecond":
		return "* * * * * *", true
	}
	return "", false
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// String returns the expression as given, trimmed and with single spaces.
// Parsing it again with the same Options gives an equivalent Cron.
func (c *Cron) String() string {
	if c == nil {
		return ""
	}
	return c.spec
}

// Location is the zone the expression is read in (UTC for a zero Cron).
func (c *Cron) Location() *time.Location {
	if c == nil || c.opts.Location == nil {
		return time.UTC
	}
	return c.opts.Location
}
