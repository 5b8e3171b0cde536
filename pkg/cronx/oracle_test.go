package cronx

import (
	"strings"
	"time"
)

// oracle is a deliberately naive cron matcher, independent of cronexpr,
// used to check Cron.Next.
type oracle [numFields]cronField

// newOracle builds an oracle from an expression ParseCron accepted.
func newOracle(expr string) oracle {
	fields := strings.Fields(expr)
	if len(fields) == 1 {
		exp, _ := expandAlias(fields[0])
		fields = strings.Fields(exp)
	}
	o := oracle{fieldSecond: {set: 1}}
	first := fieldMinute
	if len(fields) == 6 {
		first = fieldSecond
	}
	for i, text := range fields {
		f, reason := parseField(first+fieldKind(i), text)
		if reason != "" {
			panic("newOracle: " + reason)
		}
		o[first+fieldKind(i)] = f
	}
	return o
}

// dayMatches applies the day-of-month/day-of-week rule to a calendar day.
func (o oracle) dayMatches(t time.Time) bool {
	if !o[fieldMonth].set.has(int(t.Month())) {
		return false
	}
	dom := o[fieldDayOfMonth].set.has(t.Day())
	dow := o[fieldDayOfWeek].set.has(int(t.Weekday()))
	if o[fieldDayOfMonth].star || o[fieldDayOfWeek].star {
		return dom && dow
	}
	return dom || dow
}

// matches reports whether t's wall-clock reading in its location matches.
func (o oracle) matches(t time.Time) bool {
	return o.dayMatches(t) && o[fieldHour].set.has(t.Hour()) &&
		o[fieldMinute].set.has(t.Minute()) && o[fieldSecond].set.has(t.Second()) &&
		t.Nanosecond() == 0
}

// nextUTC returns the first matching UTC second strictly after after, by
// walking days, then hours, minutes and seconds; zero after 2099.
func (o oracle) nextUTC(after time.Time) time.Time {
	start := after.UTC().Truncate(time.Second).Add(time.Second)
	if start.Year() < 1970 {
		start = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	day := time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, time.UTC)
	for ; day.Year() <= 2099; day = day.AddDate(0, 0, 1) {
		if !o.dayMatches(day) {
			continue
		}
		for h := 0; h < 24; h++ {
			hour := day.Add(time.Duration(h) * time.Hour)
			if !o[fieldHour].set.has(h) || !hour.Add(time.Hour).After(start) {
				continue
			}
			for m := 0; m < 60; m++ {
				minute := hour.Add(time.Duration(m) * time.Minute)
				if !o[fieldMinute].set.has(m) || !minute.Add(time.Minute).After(start) {
					continue
				}
				for s := 0; s < 60; s++ {
					sec := minute.Add(time.Duration(s) * time.Second)
					if o[fieldSecond].set.has(s) && !sec.Before(start) {
						return sec
					}
				}
			}
		}
	}
	return time.Time{}
}
