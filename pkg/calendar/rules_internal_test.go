package calendar

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// gaussJulianEaster is Orthodox Easter by Gauss's method for the Julian
// calendar (M = 15, N = 6), moved to the Gregorian calendar by the
// centuries' difference, which holds from March to May: an independent
// formula to hold julianEasterSunday to.
func gaussJulianEaster(y int) date {
	a, b, c := y%19, y%4, y%7
	d := (19*a + 15) % 30
	e := (2*b + 4*c + 6*d + 6) % 7
	march := 22 + d + e // a day of the Julian March, possibly past its end
	diff := y/100 - y/400 - 2
	return date{y, time.March, 1}.add(march - 1 + diff)
}

// TestJulianEasterMatchesGauss: every year from 1 to 9999.
func TestJulianEasterMatchesGauss(t *testing.T) {
	for y := 1; y <= 9999; y++ {
		if got, want := julianEasterSunday(y), gaussJulianEaster(y); got != want {
			t.Fatalf("%d: %s, Gauss gives %s", y, got, want)
		}
		if got := julianEasterSunday(y); got.weekday() != time.Sunday {
			t.Fatalf("%d: %s is a %s", y, got, got.weekday())
		}
	}
}

// TestEquinoxInstants: the equinoxes as published (UTC, to the minute)
// are within two minutes of equinoxInstant's.
func TestEquinoxInstants(t *testing.T) {
	for _, s := range []string{
		"2000-03-20T07:35Z", "2000-09-22T17:27Z", "2012-09-22T14:49Z", "2020-03-20T03:50Z",
		"2024-03-20T03:06Z", "2024-09-22T12:44Z", "2025-03-20T09:01Z", "2025-09-22T18:19Z",
		"2026-03-20T14:46Z", "2026-09-23T00:05Z", "2033-09-22T16:51Z", "2040-03-20T00:11Z",
	} {
		want, err := time.Parse("2006-01-02T15:04Z", s)
		if err != nil {
			t.Fatal(err)
		}
		got := time.Unix(equinoxInstant(want.Year(), want.Month()), 0).UTC()
		if d := got.Sub(want); d < -2*time.Minute || d > 2*time.Minute {
			t.Errorf("%s: computed %s", s, got.Format(time.RFC3339))
		}
	}
	// Over the years rules may name, the equinoxes stay near 20 March and
	// 22 September: the Gregorian calendar drifts by about a day in 3,000
	// years, and the formulas lose precision far from the present.
	for y := 1; y <= 9999; y += 7 {
		if d := equinoxDate(y, time.March, nil); d.m != time.March || d.d < 12 || d.d > 24 {
			t.Fatalf("March %d: %s", y, d)
		}
		if d := equinoxDate(y, time.September, nil); d.m != time.September || d.d < 12 || d.d > 26 {
			t.Fatalf("September %d: %s", y, d)
		}
	}
}

// TestDerivedDaysNeverCollide: over random calendars, no substitute or
// bridge day falls on another holiday or on another derived day, each
// substitute is later than its actual date and on a weekday with hours,
// and a year's derived days are the same whichever years the cache
// computed before.
func TestDerivedDaysNeverCollide(t *testing.T) {
	r := rand.New(rand.NewPCG(55, 1))
	const rules = `{"name": "S%d", "date": "%02d-%02d", "substitute": "next_free_weekday"}`
	var substitutes, bridges int
	for n := 0; n < 300; n++ {
		js := genCalendar(r, "")
		// Add a cluster of substituting dates and a bridge rule.
		m, d := 1+r.IntN(12), 1+r.IntN(25)
		extra := ""
		for k := range 1 + r.IntN(4) {
			extra += ", " + fmt.Sprintf(rules, k, m, d+k)
		}
		extra += `, {"name": "Bridge", "between_holidays": true}`
		if strings.Contains(js, `"holidays"`) {
			js = js[:len(js)-2] + extra + "]}"
		} else {
			js = js[:len(js)-1] + `, "holidays": [` + extra[2:] + "]}"
		}
		c := parseT(t, js)
		fresh := parseT(t, js)
		for y := 2020; y <= 2032; y++ {
			base := map[date]bool{}
			c.eachBaseRun(y, false, nil, func(run dayRun, _ hit) {
				for x := run.from; !run.to.before(x); x = x.add(1) {
					base[x] = true
				}
			})
			seen := map[date]bool{}
			derived := c.year(y).derived
			for _, dh := range derived {
				switch {
				case base[dh.d]:
					t.Fatalf("%s\n%d: derived %s falls on a holiday", js, y, dh.d)
				case seen[dh.d]:
					t.Fatalf("%s\n%d: two derived days on %s", js, y, dh.d)
				case dh.h.kind == hitSubstitute && (!dh.h.actual.before(dh.d) || len(c.hours[dh.d.weekday()]) == 0):
					t.Fatalf("%s\n%d: substitute %s for %s", js, y, dh.d, dh.h.actual)
				}
				seen[dh.d] = true
				if dh.h.kind == hitSubstitute {
					substitutes++
				} else {
					bridges++
				}
			}
			// The fresh calendar computes the years backwards.
			other := fresh.year(2052 - y).derived
			again := c.year(2052 - y).derived
			if len(other) != len(again) {
				t.Fatalf("%s\n%d: derived days depend on the cache's order: %v and %v", js, 2052-y, other, again)
			}
			for i := range other {
				if other[i] != again[i] {
					t.Fatalf("%s\n%d: derived days depend on the cache's order: %v and %v", js, 2052-y, other, again)
				}
			}
		}
	}
	if substitutes < 1000 || bridges < 30 {
		t.Errorf("only %d substitutes and %d bridge days looked at", substitutes, bridges)
	}
}
