package cronx

import (
	"strconv"
	"strings"
	"time"
)

// oracle is a deliberately naive cron matcher with its own small parser
// (numbers, names, ranges that may wrap around, steps, lists, '*' alone or
// in a list), independent of the engine, used to check Cron.Next on the
// expressions randomExpr builds.
type oracle struct {
	sets             [6]map[int]bool // second, minute, hour, dom, month, dow
	domStar, dowStar bool            // the field starts with '*'
	domBare, dowBare bool            // the field is "*"
	rule             DomDow
}

var oracleRanges = [6][2]int{{0, 59}, {0, 59}, {0, 23}, {1, 31}, {1, 12}, {0, 7}}

func oracleValue(k int, s string) int {
	s = strings.ToLower(s)
	if k == 4 {
		for i, n := range []string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"} {
			if s == n || s == n[:3] {
				return i + 1
			}
		}
	}
	if k == 5 {
		for i, n := range []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"} {
			if s == n || s == n[:3] {
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

func newOracle(expr string, rule DomDow) oracle {
	fields := strings.Fields(expr)
	o := oracle{rule: rule}
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
			cycle := hi - lo + 1 // day-of-week: 8 values 0-7, but a week is 7
			if k == 5 {
				cycle = 7
			}
			if rng != "*" {
				as, bs, isRange := strings.Cut(rng, "-")
				a = oracleValue(k, as)
				b = a
				if isRange {
					b = oracleValue(k, bs)
					if b < a { // wraps around: "22-2" is 22, 23, 0, 1, 2
						b += cycle
					}
				} else if hasStep {
					b = hi
					if k == 5 {
						b = 6
					}
				}
			}
			for v := a; v <= b; v += step {
				if k == 5 {
					set[v%7] = true
					continue
				}
				if v > hi {
					set[v-cycle] = true
					continue
				}
				set[v] = true
			}
		}
		o.sets[k] = set
		if k == 3 {
			o.domStar, o.domBare = strings.HasPrefix(text, "*"), text == "*"
		}
		if k == 5 {
			o.dowStar, o.dowBare = strings.HasPrefix(text, "*"), text == "*"
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
	and := o.domStar || o.dowStar // cronie
	switch o.rule {
	case DomDowPOSIX:
		and = o.domBare || o.dowBare
	case DomDowAnd:
		and = true
	}
	if and {
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
