package calendar

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// clockSpan is a working interval [start, end) in wall-clock seconds after
// midnight; end is at most 24:00.
type clockSpan struct{ start, end int }

// week holds the working intervals of each weekday, indexed by
// time.Weekday, sorted, disjoint and with touching intervals merged.
type week [7][]clockSpan

// dayNames are the JSON day names, Monday first.
var dayNames = [7]string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}

// weekdayOf converts a Monday-first index to a time.Weekday.
func weekdayOf(i int) time.Weekday { return time.Weekday((i + 1) % 7) }

// dayIndex finds a JSON day name, Monday first.
func dayIndex(s string) (int, bool) {
	for i, n := range dayNames {
		if n == s {
			return i, true
		}
	}
	return 0, false
}

// defaultWeek is Monday to Friday, 09:00-18:00.
func defaultWeek() week {
	var w week
	for i := range 5 {
		w[weekdayOf(i)] = defaultHours()
	}
	return w
}

// defaultHours are a default working day's hours: 09:00-18:00.
func defaultHours() []clockSpan { return []clockSpan{{9 * 3600, 18 * 3600}} }

// parseWeekend reads the "weekend" list of day names or ranges ("sat",
// "sat-sun") and returns the week it stands for: 09:00-18:00 on every
// other day.
func parseWeekend(raw json.RawMessage, path string) (week, error) {
	var w week
	elems, err := arrayElems(raw, path)
	if err != nil {
		return w, err
	}
	var off [7]bool
	for i, e := range elems {
		epath := indexPath(path, i)
		key, err := decodeString(e, epath)
		if err != nil {
			return w, err
		}
		lo, hi, err := parseDayKey(key, epath)
		if err != nil {
			return w, err
		}
		for d := lo; d <= hi; d++ {
			if off[d] {
				return w, fieldError(epath, key, fmt.Sprintf("%s is given twice", dayNames[d]))
			}
			off[d] = true
		}
	}
	for i, isOff := range off {
		if !isOff {
			w[weekdayOf(i)] = defaultHours()
		}
	}
	if !w.hasWork() {
		return w, fieldError(path, "", "every day is a weekend day; leave at least one business day")
	}
	return w, nil
}

// parseDayKey reads "mon" or a forward range "mon-fri" into Monday-first
// indexes [lo, hi].
func parseDayKey(key, path string) (lo, hi int, err error) {
	const want = "unknown day; want mon, tue, wed, thu, fri, sat, sun or a forward range such as mon-fri"
	a, b, isRange := strings.Cut(key, "-")
	lo, ok := dayIndex(a)
	if !ok {
		return 0, 0, fieldError(path, key, want)
	}
	if !isRange {
		return lo, lo, nil
	}
	hi, ok = dayIndex(b)
	if !ok {
		return 0, 0, fieldError(path, key, want)
	}
	if hi <= lo {
		return 0, 0, fieldError(path, key, "a day range must go forward from Monday to Sunday, such as mon-fri")
	}
	return lo, hi, nil
}

// parseHours reads the "hours" object.
func parseHours(raw json.RawMessage, path string) (week, error) {
	var w week
	members, err := objectMembers(raw, path)
	if err != nil {
		return w, err
	}
	var given [7]bool
	for _, m := range members {
		mpath := joinPath(path, m.key)
		lo, hi, err := parseDayKey(m.key, mpath)
		if err != nil {
			return w, err
		}
		spans, err := parseSpans(m.val, mpath)
		if err != nil {
			return w, err
		}
		for i := lo; i <= hi; i++ {
			if given[i] {
				return w, fieldError(mpath, m.key, fmt.Sprintf("%s is given twice", dayNames[i]))
			}
			given[i] = true
			w[weekdayOf(i)] = spans
		}
	}
	return w, nil
}

// parseSpans reads one day's list of intervals, refusing overlaps and
// merging intervals that touch.
func parseSpans(raw json.RawMessage, path string) ([]clockSpan, error) {
	elems, err := arrayElems(raw, path)
	if err != nil {
		return nil, err
	}
	type indexed struct {
		clockSpan
		i    int
		text string
	}
	var all []indexed
	for i, e := range elems {
		epath := indexPath(path, i)
		s, err := decodeString(e, epath)
		if err != nil {
			return nil, err
		}
		sp, reason := parseSpan(s)
		if reason != "" {
			return nil, fieldError(epath, s, reason)
		}
		all = append(all, indexed{sp, i, s})
	}
	slices.SortStableFunc(all, func(a, b indexed) int { return a.start - b.start })
	var out []clockSpan
	for k, s := range all {
		if k > 0 && s.start < all[k-1].end {
			later, earlier := s, all[k-1]
			if later.i < earlier.i {
				later, earlier = earlier, later
			}
			return nil, fieldError(indexPath(path, later.i), later.text, "overlaps "+earlier.text)
		}
		if n := len(out); n > 0 && out[n-1].end == s.start {
			out[n-1].end = s.end
			continue
		}
		out = append(out, s.clockSpan)
	}
	return out, nil
}

// parseSpan reads "HH:MM-HH:MM" (seconds allowed); reason is "" when valid.
func parseSpan(s string) (clockSpan, string) {
	const want = `want "HH:MM-HH:MM" (seconds allowed, end up to 24:00)`
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return clockSpan{}, want
	}
	start, ok1 := parseClock(a)
	end, ok2 := parseClock(b)
	if !ok1 || !ok2 {
		return clockSpan{}, want
	}
	if start >= secondsPerDay {
		return clockSpan{}, "24:00 can only end an interval"
	}
	if start >= end {
		return clockSpan{}, "start must be before end"
	}
	return clockSpan{start, end}, ""
}

// parseClock reads "HH:MM" or "HH:MM:SS", 00:00 to 24:00, as seconds.
func parseClock(s string) (int, bool) {
	if len(s) != 5 && len(s) != 8 {
		return 0, false
	}
	var parts [3]int
	for i := 0; i*3 < len(s); i++ {
		p := s[i*3:]
		if p[0] < '0' || p[0] > '9' || p[1] < '0' || p[1] > '9' || (len(p) > 2 && p[2] != ':') {
			return 0, false
		}
		parts[i] = int(p[0]-'0')*10 + int(p[1]-'0')
	}
	h, m, sec := parts[0], parts[1], parts[2]
	if h > 24 || m > 59 || sec > 59 || (h == 24 && (m != 0 || sec != 0)) {
		return 0, false
	}
	return h*3600 + m*60 + sec, true
}

// formatClock writes seconds after midnight as "HH:MM" or "HH:MM:SS".
func formatClock(sec int) string {
	h, m, s := sec/3600, sec/60%60, sec%60
	if s == 0 {
		return fmt.Sprintf("%02d:%02d", h, m)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
}

// String formats the span as "HH:MM-HH:MM".
func (s clockSpan) String() string { return formatClock(s.start) + "-" + formatClock(s.end) }

// hasWork reports whether any weekday has working hours.
func (w *week) hasWork() bool {
	for _, d := range w {
		if len(d) > 0 {
			return true
		}
	}
	return false
}
