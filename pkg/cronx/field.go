package cronx

import (
	"fmt"
	"hash/fnv"
	"math/bits"
	"strconv"
	"strings"
)

// fieldKind identifies a cron field by meaning, independently of its
// position in a 5-, 6- or 7-field expression.
type fieldKind int

const (
	fSecond fieldKind = iota
	fMinute
	fHour
	fDOM
	fMonth
	fDOW
	fYear
	numFields
)

const (
	minYear = 1970
	maxYear = 2199
)

var fieldNames = [numFields]string{"second", "minute", "hour", "day-of-month", "month", "day-of-week", "year"}

func (k fieldKind) String() string { return fieldNames[k] }

// bounds are the values a field can take once parsed (day-of-week 0-6).
func (k fieldKind) bounds() (lo, hi int) {
	switch k {
	case fSecond, fMinute:
		return 0, 59
	case fHour:
		return 0, 23
	case fDOM:
		return 1, 31
	case fMonth:
		return 1, 12
	case fDOW:
		return 0, 6
	default:
		return minYear, maxYear
	}
}

// bitset holds field values; years are stored as year-minYear.
type bitset [4]uint64

func (b *bitset) set(v int)      { b[v>>6] |= 1 << (uint(v) & 63) }
func (b *bitset) has(v int) bool { return v >= 0 && v < 256 && b[v>>6]&(1<<(uint(v)&63)) != 0 }
func (b *bitset) count() (n int) {
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// next returns the smallest set value >= v, or -1.
func (b *bitset) next(v int) int {
	if v < 0 {
		v = 0
	}
	for i := v >> 6; i < len(b); i++ {
		w := b[i]
		if i == v>>6 {
			w &= ^uint64(0) << (uint(v) & 63)
		}
		if w != 0 {
			return i<<6 + bits.TrailingZeros64(w)
		}
	}
	return -1
}

// field is a parsed cron field.
type field struct {
	vals bitset
	// star: the field starts with '*' ("*", "*/5", "*,7"), or is "?".
	// cronie counts such a day field as unrestricted (DomDowCronie) and
	// marks such a minute or hour field a wildcard (OverlapOnce).
	star bool
	// bare: the field is exactly "*" or "?", the only unrestricted day
	// field under DomDowPOSIX.
	bare bool
	// stepped: the field has a step ("*/15", "3-59/15", "H/10").
	stepped bool

	dayExtras
}

// dayExtras are the day fields' rules beyond a set of values. A Cron
// keeps those of both day fields in one (each sets only its own).
type dayExtras struct {
	// Day-of-month extras, as offsets from the month's last day (bit n =
	// "last day minus n"): L and L-n in lastOffsets, LW and L-nW (the
	// weekday nearest that day) in lastNearest; nW in nearestWeekdy (bit n
	// = day n).
	lastOffsets   uint32
	lastNearest   uint32
	nearestWeekdy uint32
	// Day-of-week extras: nL (last <weekday> of the month, bit per
	// weekday) and n#k (k-th <weekday>, bit k of nth[weekday]).
	lastDOW uint8
	nth     [7]uint8
}

// domSpecial reports whether a day-of-month extra is set.
func (x *dayExtras) domSpecial() bool {
	return x.lastOffsets != 0 || x.lastNearest != 0 || x.nearestWeekdy != 0
}

// next64 returns the smallest value >= v set in w (bit v for value v), or -1.
func next64(w uint64, v int) int {
	if v < 0 {
		v = 0
	}
	if v > 63 {
		return -1
	}
	if w &= ^uint64(0) << uint(v); w != 0 {
		return bits.TrailingZeros64(w)
	}
	return -1
}

// Names are matched in lower case, abbreviated or in full.
var (
	monthNames = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
	monthFull  = []string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"}
	dowNames   = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
	dowFull    = []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}
)

// fieldParser parses one field's text.
type fieldParser struct {
	kind    fieldKind
	dialect Dialect
	key     string
}

// parse returns the field, or a reason the text is invalid.
func (p fieldParser) parse(text string) (field, string) {
	var f field
	s := strings.ToLower(text)
	if s == "" {
		return f, "empty field"
	}
	if s == "*" || s == "?" {
		if s == "?" && p.kind != fDOM && p.kind != fDOW {
			return f, `"?" is only allowed in day-of-month and day-of-week`
		}
		lo, hi := p.written()
		p.addRange(&f, lo, hi, 1)
		f.star, f.bare = true, true
		return f, ""
	}
	items := strings.Split(s, ",")
	if len(items) > 1 && p.kind == fDOW {
		if reason := ambiguousDOWList(items); reason != "" {
			return f, reason
		}
	}
	for _, item := range items {
		switch item {
		case "":
			return f, "empty item in list"
		case "?":
			return f, `"?" cannot be combined with other items`
		case "*": // cronie: every value, like the field "*"
			lo, hi := p.written()
			p.addRange(&f, lo, hi, 1)
			continue
		}
		if reason := p.item(&f, item); reason != "" {
			return f, reason
		}
	}
	// cronie (and Vixie cron): a field whose first character is '*' counts
	// as unrestricted for the day-of-month/day-of-week rule ("*/2",
	// "*/15,7") and as a wildcard minute or hour for DST.
	f.star = strings.HasPrefix(s, "*")
	return f, ""
}

// ambiguousDOWList refuses the day-of-week lists peers read differently.
func ambiguousDOWList(items []string) string {
	for _, item := range items {
		switch {
		case strings.Contains(item, "#"):
			return `'#' in a list is ambiguous ("5,6#3": every Friday and the third Saturday, or the third Friday and the third Saturday?) and Quartz refuses it; use one n#k alone`
		case item == "l":
			return `a lone 'L' in a day-of-week list is ambiguous (Saturday, as Quartz reads a lone L, or the last day of the month?); write SAT, or nL for the last given weekday`
		}
	}
	return ""
}

// item parses one list item into f.
func (p fieldParser) item(f *field, item string) string {
	lo, hi := p.kind.bounds()
	if p.kind == fDOM {
		if done, reason := p.domSpecial(f, item); done {
			return reason
		}
	}
	if p.kind == fDOW {
		if done, reason := p.dowSpecial(f, item); done {
			return reason
		}
	}
	if strings.HasPrefix(item, "h") {
		return p.hash(f, item)
	}
	rng, stepText, hasStep := strings.Cut(item, "/")
	step := 1
	if hasStep {
		n, err := strconv.Atoi(stepText)
		if err != nil || !isDigits(stepText) {
			return fmt.Sprintf("invalid step %q", stepText)
		}
		if n < 1 {
			return "step must be at least 1"
		}
		limit := hi - lo
		if p.kind == fDOW {
			limit = 7
		}
		if n > limit {
			return fmt.Sprintf("step %d is larger than the field's range (at most %d)", n, limit)
		}
		step = n
		f.stepped = true
	}
	var a, b int
	switch {
	case rng == "*":
		a, b = p.written()
	case strings.Contains(rng, "-"):
		as, bs, _ := strings.Cut(rng, "-")
		var reason string
		if a, reason = p.value(as); reason != "" {
			return reason
		}
		if p.kind == fDOM && bs == "l" {
			b = 31 // "29-L": to the month's last day (days past it do not exist)
		} else if b, reason = p.value(bs); reason != "" {
			return reason
		}
		if p.kind == fDOW && p.dialect == Standard && b == 0 && a > 0 {
			b = 7 // "FRI-SUN" ends on Sunday
		}
		if b < a {
			if p.kind == fYear {
				return fmt.Sprintf("range %d-%d is reversed (a year range cannot wrap around)", a, b)
			}
			lo, hi := p.written()
			b += hi - lo + 1 // wraps around: "22-2" is 22, 23, 0, 1, 2
		}
	default:
		var reason string
		if a, reason = p.value(rng); reason != "" {
			return reason
		}
		b = a
		if hasStep {
			_, b = p.written()
		}
	}
	p.addRange(f, a, b, step)
	return ""
}

// value parses a number or a name as written in the dialect, checks its
// range, and returns it in the field's written numbering (day-of-week in
// the dialect's numbers, converted by addRange).
func (p fieldParser) value(s string) (int, string) {
	if s == "" {
		return 0, "missing value"
	}
	names, full, base := []string(nil), []string(nil), 0
	switch p.kind {
	case fMonth:
		names, full, base = monthNames, monthFull, 1
	case fDOW:
		names, full, base = dowNames, dowFull, 0
		if p.dialect == Quartz {
			base = 1
		}
	}
	for i := range names {
		if s == names[i] || s == full[i] {
			return i + base, ""
		}
	}
	if !isDigits(s) {
		switch {
		case !isAlnum(s):
			return 0, fmt.Sprintf("invalid character in %q", s)
		case names == nil:
			return 0, fmt.Sprintf("%q must be a number", s)
		default:
			return 0, fmt.Sprintf("unknown name %q", s)
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Sprintf("%q is not a number", s)
	}
	lo, hi := p.kind.bounds()
	if p.kind == fDOW {
		lo, hi = 0, 7
		if p.dialect == Quartz {
			lo = 1
		}
	}
	if v < lo || v > hi {
		return 0, fmt.Sprintf("value %d out of range %d-%d", v, lo, hi)
	}
	return v, ""
}

// written is the field's full range in the dialect's numbering.
func (p fieldParser) written() (lo, hi int) {
	if p.kind == fDOW && p.dialect == Quartz {
		return 1, 7
	}
	return p.kind.bounds()
}

// addRange sets a..b by step, in the written numbering; values past the
// field's end wrap around to its start (b is past the end for a range
// written backwards, such as "22-2").
func (p fieldParser) addRange(f *field, a, b, step int) {
	lo, hi := p.written()
	for v := a; v <= b; v += step {
		w := v
		if w > hi {
			w -= hi - lo + 1
		}
		f.vals.set(p.store(w))
	}
}

// store converts a written value to its stored form: years relative to
// 1970, days of week 0-6 with Sunday 0.
func (p fieldParser) store(v int) int {
	switch p.kind {
	case fYear:
		return v - minYear
	case fDOW:
		if p.dialect == Quartz {
			return v - 1
		}
		return v % 7
	}
	return v
}

// domSpecial parses L, L-n, LW, L-nW, nW and Wn. A range ending in L
// ("29-L", "1-L/8") is left to item.
func (p fieldParser) domSpecial(f *field, item string) (bool, string) {
	switch {
	case item == "l":
		f.lastOffsets |= 1
	case item == "lw":
		f.lastNearest |= 1
	case strings.HasPrefix(item, "l-"):
		num, weekday := strings.CutSuffix(item[2:], "w")
		n, err := strconv.Atoi(num)
		if err != nil || !isDigits(num) || n < 0 || n > 30 {
			return true, fmt.Sprintf("%q: want L-n or L-nW with n from 0 to 30", item)
		}
		if weekday {
			f.lastNearest |= 1 << uint(n)
		} else {
			f.lastOffsets |= 1 << uint(n)
		}
	case strings.HasPrefix(item, "w") || strings.HasSuffix(item, "w") && !strings.HasPrefix(item, "l"):
		num := strings.TrimSuffix(strings.TrimPrefix(item, "w"), "w")
		n, err := strconv.Atoi(num)
		if err != nil || !isDigits(num) || len(num) != len(item)-1 || n < 1 || n > 31 {
			return true, fmt.Sprintf("%q: want nW (or Wn) with n from 1 to 31", item)
		}
		f.nearestWeekdy |= 1 << uint(n)
	case strings.ContainsAny(item, "lw"):
		if rng, _, _ := strings.Cut(item, "/"); strings.HasSuffix(rng, "-l") && !strings.HasPrefix(rng, "l") {
			return false, "" // a range ending in L
		}
		return true, fmt.Sprintf("%q: L and W are written L, L-n, LW, L-nW, nW, Wn or a range ending in L (29-L)", item)
	default:
		return false, ""
	}
	return true, ""
}

// dowSpecial parses nL and n#k (and, in the Quartz dialect, a lone L:
// Saturday).
func (p fieldParser) dowSpecial(f *field, item string) (bool, string) {
	if d, k, ok := strings.Cut(item, "#"); ok {
		day, reason := p.value(d)
		if reason != "" {
			return true, reason
		}
		n, err := strconv.Atoi(k)
		if err != nil || !isDigits(k) || n < 1 || n > 5 {
			return true, fmt.Sprintf("%q: want day#k with k from 1 to 5", item)
		}
		f.nth[p.store(day)] |= 1 << uint(n)
		return true, ""
	}
	if item == "l" {
		if p.dialect == Quartz {
			f.vals.set(6)
			return true, ""
		}
		return true, "'L' in day-of-week needs a day, e.g. 5L (last Friday)"
	}
	if d, ok := strings.CutSuffix(item, "l"); ok {
		day, reason := p.value(d)
		if reason != "" {
			return true, reason
		}
		f.lastDOW |= 1 << uint(p.store(day))
		return true, ""
	}
	return false, ""
}

// hash resolves H, H(a-b), H/n and H(a-b)/n to values derived from the key,
// stable forever for the same key and field. Values are picked in the
// written numbering (so H(5-7) in day-of-week includes Sunday as 7).
func (p fieldParser) hash(f *field, item string) string {
	if p.kind == fYear {
		return "H is not allowed in the year field"
	}
	lo, hi := p.written()
	if p.kind == fDOM {
		hi = 28 // every month has it
	}
	rest := item[1:]
	if strings.HasPrefix(rest, "(") {
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return fmt.Sprintf("%q: missing ')'", item)
		}
		as, bs, ok := strings.Cut(rest[1:end], "-")
		if !ok {
			return fmt.Sprintf("%q: want H(a-b)", item)
		}
		a, reason := p.value(as)
		if reason != "" {
			return reason
		}
		b, reason := p.value(bs)
		if reason != "" {
			return reason
		}
		if p.kind == fDOW && p.dialect == Standard && b == 0 && a > 0 {
			b = 7
		}
		if b < a {
			return fmt.Sprintf("range %d-%d is reversed", a, b)
		}
		lo, hi = a, b
		rest = rest[end+1:]
	}
	sum := hashKey(p.key, p.kind)
	switch {
	case rest == "":
		f.vals.set(p.store(lo + int(sum%uint64(hi-lo+1))))
	case strings.HasPrefix(rest, "/"):
		n, err := strconv.Atoi(rest[1:])
		if err != nil || !isDigits(rest[1:]) || n < 1 || n > hi-lo+1 {
			return fmt.Sprintf("%q: step must be 1-%d", item, hi-lo+1)
		}
		f.stepped = true
		for v := lo + int(sum%uint64(n)); v <= hi; v += n {
			f.vals.set(p.store(v))
		}
	default:
		return fmt.Sprintf("%q: want H, H(a-b), H/n or H(a-b)/n", item)
	}
	return ""
}

// hashKey is FNV-1a of the key and the field, through the splitmix64
// finalizer: FNV alone mixes its last bytes poorly into small moduli, which
// left sequential ids ("job-1", "job-2") bunched on a few minutes and tied
// a schedule's H hour to its H minute.
func hashKey(key string, kind fieldKind) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	h.Write([]byte{byte(kind)})
	z := h.Sum64()
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func isAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
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
