package cronx

import (
	"strconv"
	"strings"
	"time"
)

// oracle is a deliberately naive cron matcher with its own small parser
// (numbers, names, ranges, steps, lists, '*'), independent of the engine,
// used to check Cron.Next on the expressions randomExpr builds.
type oracle struct {
	sets        [6]map[int]bool // second, minute, hour, dom, month, dow
	domStar     bool
	dowStar     bool
	hasSeconds  bool
	fieldsCount int
}

var oracleRanges = [6][2]int{{0, 59}, {0, 59}, {0, 23}, {1, 31}, {1, 12}, {0, 7}}

func oracleValue(k int, s string) int {
	s = strings.ToLower(s)
	if k == 4 {
		for i, n := range []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"} {
			if s == n {
				return i + 1
			}
		}
	}
	if k == 5 {
		for i, n := range []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"} {
			if s == n {
				return i
			}
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		panic("oracle: " + s)
	}
	return v
}

func newOracle(expr string) oracle {
	fields := strings.Fields(expr)
	var o oracle
	first := 1
	if len(fields) == 6 {
		first = 0
	}
	o.sets[0] = map[int]bool{0: true}
	for i, text := range fields {
		k := first + i
		set := map[int]bool{}
		lo, hi := oracleRanges[k][0], oracleRanges[k][1]
		for _, item := range strings.Split(text, ",") {
			rng, stepText, hasStep := strings.Cut(item, "/")
			step := 1
			if hasStep {
				step, _ = strconv.Atoi(stepText)
			}
			a, b := lo, hi
			if k == 5 && rng == "*" {
				b = 6
			}
			if rng != "*" {
				as, bs, isRange := strings.Cut(rng, "-")
				a = oracleValue(k, as)
				b = a
				if isRange {
					b = oracleValue(k, bs)
				} else if hasStep {
					b = hi
					if k == 5 {
						b = 6
					}
				}
			}
			for v := a; v <= b; v += step {
				if k == 5 {
					v := v % 7
					set[v] = true
					continue
				}
				set[v] = true
			}
		}
		o.sets[k] = set
		if k == 3 {
			o.domStar = strings.HasPrefix(text, "*")
		}
		if k == 5 {
			o.dowStar = strings.HasPrefix(text, "*")
		}
	}
	return o
}

// dayMatches applies the day-of-month/day-of-week rule to a calendar day.
func (o oracle) dayMatches(t time.Time) bool {
	if !o.sets[4][int(t.Month())] {
		return false
	}
	dom, dow := o.sets[3][t.Day()], o.sets[5][int(t.Weekday())]
	if o.domStar || o.dowStar {
		return dom && dow
	}
	return dom || dow
}

// nextUTC returns the first matching UTC second strictly after after, by
// walking days, then hours, minutes and seconds; zero after 2199.
func (o oracle) nextUTC(after time.Time) time.Time {
	start := after.UTC().Truncate(time.Second).Add(time.Second)
	day := time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, time.UTC)
	for ; day.Year() <= 2199; day = day.AddDate(0, 0, 1) {
		if !o.dayMatches(day) {
			continue
		}
		for h := 0; h < 24; h++ {
			hour := day.Add(time.Duration(h) * time.Hour)
			if !o.sets[2][h] || !hour.Add(time.Hour).After(start) {
				continue
			}
			for m := 0; m < 60; m++ {
				minute := hour.Add(time.Duration(m) * time.Minute)
				if !o.sets[1][m] || !minute.Add(time.Minute).After(start) {
					continue
				}
				for s := 0; s < 60; s++ {
					sec := minute.Add(time.Duration(s) * time.Second)
					if o.sets[0][s] && !sec.Before(start) {
						return sec
					}
				}
			}
		}
	}
	return time.Time{}
}

// matches reports whether t's wall-clock reading in its location matches.
func (o oracle) matches(t time.Time) bool {
	return o.dayMatches(t) && o.sets[2][t.Hour()] && o.sets[1][t.Minute()] && o.sets[0][t.Second()] && t.Nanosecond() == 0
}
