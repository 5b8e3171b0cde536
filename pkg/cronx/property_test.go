package cronx

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/cronexpr"
)

// randomExpr builds a random, syntactically valid cron expression: numbers,
// names (abbreviated or in full, any case), ranges (some written backwards,
// which wrap around), steps, lists (some with a '*' item) and '*'.
func randomExpr(r *rand.Rand) string {
	type spec struct {
		min, max int
		names    []string
		nameBase int
	}
	months := []string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"}
	days := []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}
	specs := []spec{{0, 59, nil, 0}, {0, 59, nil, 0}, {0, 23, nil, 0}, {1, 31, nil, 0},
		{1, 12, months, 1}, {0, 7, days, 0}}
	kinds := []int{1, 2, 3, 4, 5}
	if r.Intn(3) == 0 {
		kinds = append([]int{0}, kinds...)
	}
	var fields []string
	for _, k := range kinds {
		sp := specs[k]
		name := func(v int) string {
			i := v - sp.nameBase
			if sp.names == nil || r.Intn(3) != 0 || i >= len(sp.names) {
				return fmt.Sprint(v)
			}
			n := sp.names[i]
			if r.Intn(2) == 0 {
				n = n[:3]
			}
			switch r.Intn(3) {
			case 0:
				n = strings.ToUpper(n)
			case 1:
				n = strings.ToUpper(n[:1]) + n[1:]
			}
			return n
		}
		val := func() string { return name(sp.min + r.Intn(sp.max-sp.min+1)) }
		rng := func() string {
			a := sp.min + r.Intn(sp.max-sp.min+1)
			b := a + r.Intn(sp.max-a+1)
			if r.Intn(4) == 0 { // written backwards: wraps around
				b = sp.min + r.Intn(sp.max-sp.min+1)
			}
			return name(a) + "-" + name(b)
		}
		step := func() string { return fmt.Sprint(1 + r.Intn(sp.max-sp.min)) }
		var f string
		switch r.Intn(9) {
		case 0, 1:
			f = "*"
		case 2:
			f = val()
		case 3:
			f = rng()
		case 4:
			f = "*/" + step()
		case 5:
			f = rng() + "/" + step()
		case 6:
			f = val() + "," + val() + "," + rng()
		case 7:
			f = fmt.Sprint(sp.min+r.Intn(sp.max-sp.min+1)) + "/" + step()
		case 8:
			f = val() + ",*"
		}
		fields = append(fields, f)
	}
	return strings.Join(fields, " ")
}

// TestCronMatchesOracleUTC compares Cron.Next in UTC, for random
// expressions and instants under each day-of-month/day-of-week rule, with
// the naive oracle.
func TestCronMatchesOracleUTC(t *testing.T) {
	r := rand.New(rand.NewSource(42))
	n := 3000
	if testing.Short() {
		n = 300
	}
	checked := 0
	for i := 0; i < n; i++ {
		expr := randomExpr(r)
		rule := DomDow(i % 3)
		c, err := NewCron(expr, Options{DomDow: rule})
		if err != nil {
			if pe, ok := err.(*ParseError); !ok || pe.Field != "cron" {
				t.Fatalf("NewCron(%q, dom_dow %s) rejected a valid expression: %v", expr, rule, err)
			}
			continue // never fires
		}
		o := newOracle(expr, rule)
		after := time.Unix(946684800+r.Int63n(40*365*86400), r.Int63n(1e9)).UTC()
		for j := 0; j < 3; j++ {
			got, want := c.Next(after), o.nextUTC(after)
			if !got.Equal(want) {
				t.Fatalf("%q (dom_dow %s).Next(%v) = %v, oracle says %v", expr, rule, after, got, want)
			}
			if got.IsZero() {
				break
			}
			after = got
		}
		checked++
	}
	if checked < n/2 {
		t.Errorf("only %d of %d random expressions were checked", checked, n)
	}
}

// dstZones have daylight-saving rules that are awkward in some way:
// whole-hour changes, changes at midnight, 30-minute changes, southern
// hemisphere, non-whole-hour offsets and zones that change rules.
var dstZones = []string{
	"America/New_York", "Europe/London", "America/Havana", "America/Asuncion",
	"America/Santiago", "America/Sao_Paulo", "America/St_Johns", "Australia/Lord_Howe",
	"Asia/Tehran", "Asia/Beirut", "Pacific/Apia", "Africa/Casablanca",
	"Europe/Chisinau", "America/Scoresbysund",
}

// nearTransition returns a random instant within 3 hours of a random
// zone transition in loc between 1971 and 2060, or a random instant when
// the zone has none then.
func nearTransition(r *rand.Rand, loc *time.Location) time.Time {
	base := time.Date(1971+r.Intn(90), time.Month(1+r.Intn(12)), 1+r.Intn(28), 0, 0, 0, 0, loc)
	_, end := base.ZoneBounds()
	if end.IsZero() {
		end = base
	}
	return end.Add(time.Duration(r.Int63n(int64(6*time.Hour))) - 3*time.Hour)
}

// TestCronBruteForceAroundDST checks, second by second, that no matching
// wall-clock instant lies between after and Next(after) near transitions.
func TestCronBruteForceAroundDST(t *testing.T) {
	exprs := []string{"* * * * * *", "*/20 * * * * *", "* * * * *", "*/7 * * * *", "0 * * * *", "30 * * * *", "15,45 0-3 * * *"}
	r := rand.New(rand.NewSource(7))
	perCase := 25
	if testing.Short() {
		perCase = 3
	}
	for _, zn := range dstZones {
		loc, err := LoadZone(zn)
		if err != nil {
			t.Fatal(err)
		}
		for _, expr := range exprs {
			// Pure wall-clock semantics: every matching instant fires.
			c, err := NewCron(expr, Options{Location: loc, Gap: GapSkip, Overlap: OverlapTwice})
			if err != nil {
				t.Fatal(err)
			}
			o := newOracle(expr, DomDowCronie)
			for i := 0; i < perCase; i++ {
				after := nearTransition(r, loc)
				got := c.Next(after)
				if !got.After(after) || got.Location() != loc || !o.matches(got) {
					t.Fatalf("%s %q: Next(%v) = %v: not a later match in the zone", zn, expr, after, got)
				}
				for s := after.Truncate(time.Second).Add(time.Second); s.Before(got); s = s.Add(time.Second) {
					if o.matches(s.In(loc)) {
						t.Fatalf("%s %q: Next(%v) = %v skips %v", zn, expr, after, got, s.In(loc))
					}
				}
			}
		}
	}
}

// TestCronPropertiesInZones checks, for random expressions, zones and
// instants, that Next terminates with a later matching instant, and that
// any instant between after and Next(after) has the same Next.
func TestCronPropertiesInZones(t *testing.T) {
	r := rand.New(rand.NewSource(99))
	n := 2000
	if testing.Short() {
		n = 200
	}
	for i := 0; i < n; i++ {
		zn := dstZones[r.Intn(len(dstZones))]
		loc, err := LoadZone(zn)
		if err != nil {
			t.Fatal(err)
		}
		expr := randomExpr(r)
		c, err := NewCron(expr, Options{Location: loc, Gap: GapSkip, Overlap: OverlapTwice})
		if err != nil {
			continue
		}
		o := newOracle(expr, DomDowCronie)
		after := nearTransition(r, loc)
		got := c.Next(after)
		if got.IsZero() {
			if after.Year() < 2090 {
				t.Fatalf("%s %q: Next(%v) = zero", zn, expr, after)
			}
			continue
		}
		if !got.After(after) || !o.matches(got) || got.Location() != loc {
			t.Fatalf("%s %q: Next(%v) = %v: not a later match in the zone", zn, expr, after, got)
		}
		mid := after.Add(time.Duration(r.Int63n(int64(got.Sub(after)))))
		if again := c.Next(mid); !again.Equal(got) {
			t.Fatalf("%s %q: Next(%v) = %v but Next(%v) = %v", zn, expr, after, got, mid, again)
		}
	}
}

// TestCronWalksDecades runs Next repeatedly through whole decades in zones
// whose transitions defeat cronexpr's own time zone handling, checking that
// every step terminates and moves forward.
func TestCronWalksDecades(t *testing.T) {
	years := 30
	if testing.Short() {
		years = 3
	}
	for _, zn := range []string{"America/Havana", "America/Asuncion", "America/St_Johns", "Australia/Lord_Howe"} {
		loc, err := LoadZone(zn)
		if err != nil {
			t.Fatal(err)
		}
		for _, expr := range []string{"0 0 * * *", "30 0 * * *", "0 1 * * *", "0 0 1 * *"} {
			c, err := NewCron(expr, Options{Location: loc})
			if err != nil {
				t.Fatal(err)
			}
			after := time.Date(1980, 1, 1, 0, 0, 0, 0, loc)
			stop := after.AddDate(years, 0, 0)
			for steps := 0; after.Before(stop); steps++ {
				next := c.Next(after)
				// A month with its only fire time in a gap is skipped.
				if !next.After(after) || next.Sub(after) > 63*24*time.Hour {
					t.Fatalf("%s %q: Next(%v) = %v", zn, expr, after, next)
				}
				after = next
			}
		}
	}
}

// TestCronAgreesWithCronexprZones documents that, in zones whose
// transitions move by whole hours away from midnight, the result equals
// what cronexpr computes when handed a time in the zone.
func TestCronAgreesWithCronexprZones(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, zn := range []string{"America/New_York", "Europe/London"} {
		loc, err := LoadZone(zn)
		if err != nil {
			t.Fatal(err)
		}
		for _, expr := range []string{"* * * * *", "0 * * * *", "30 1 * * *", "30 2 * * *", "0 0 * * *", "*/20 * * * * *"} {
			// cronexpr's own behaviour is gap "skip", overlap "twice".
			c, err := NewCron(expr, Options{Location: loc, Gap: GapSkip, Overlap: OverlapTwice})
			if err != nil {
				t.Fatal(err)
			}
			seven := expr + " *"
			if len(strings.Fields(expr)) == 5 {
				seven = "0 " + seven
			}
			e := cronexpr.MustParse(seven)
			for i := 0; i < 200; i++ {
				after := nearTransition(r, loc)
				if got, want := c.Next(after), e.Next(after.In(loc)); !got.Equal(want) {
					t.Fatalf("%s %q: Next(%v) = %v, cronexpr says %v", zn, expr, after, got, want)
				}
			}
		}
	}
}

// TestZoneEndMovesForward checks zoneEnd around the UTC year ends where
// time.Time.ZoneBounds misbehaves, for zones past their last explicit
// transition.
func TestZoneEndMovesForward(t *testing.T) {
	for _, zn := range dstZones {
		loc, err := LoadZone(zn)
		if err != nil {
			t.Fatal(err)
		}
		for _, year := range []int{2047, 2048, 2052, 2096} {
			start := time.Date(year, 12, 30, 0, 0, 0, 0, time.UTC)
			for u := start; u.Before(start.AddDate(0, 0, 3)); u = u.Add(17 * time.Minute) {
				tt := u.In(loc)
				end := zoneEnd(tt)
				if end.IsZero() {
					continue
				}
				_, off := tt.Zone()
				_, endOff := end.Add(-time.Second).Zone()
				if !end.After(tt) || off != endOff {
					t.Fatalf("%s: zoneEnd(%v) = %v", zn, tt, end)
				}
			}
		}
	}
}

// TestSundayRangeEndingInSeven: cronexpr drops Sunday from "5-7"; cronx
// keeps it.
func TestSundayRangeEndingInSeven(t *testing.T) {
	saturday := time.Date(2024, 1, 6, 12, 0, 0, 0, time.UTC)
	raw := cronexpr.MustParse("0 0 0 * * 5-7 *").Next(saturday)
	t.Logf("cronexpr: 5-7 after a Saturday noon -> %v (%v)", raw, raw.Weekday())
	for _, expr := range []string{"0 0 * * 5-7", "0 0 * * FRI-SUN", "0 0 * * 5-SUN"} {
		c, err := NewCron(expr, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Next(saturday); got.Weekday() != time.Sunday {
			t.Errorf("%q: Next(%v) = %v, want the Sunday", expr, saturday, got)
		}
	}
}

// TestIntervalFastMatchesBig checks the int64 path against the
// arbitrary-precision one.
func TestIntervalFastMatchesBig(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for i := 0; i < 20000; i++ {
		as, an := r.Int63n(1<<33)-1<<32, r.Int63n(1e9)
		bs, bn := as+r.Int63n(1<<33)-1<<32, r.Int63n(1e9)
		every := 1 + r.Int63n(1<<uint(1+r.Intn(60)))
		fast, ok := nextIntervalFast(as, an, bs, bn, every)
		if !ok {
			continue
		}
		if big := nextIntervalBig(as, an, bs, bn, every); !fast.Equal(big) {
			t.Fatalf("fast %v != big %v for anchor %d.%09d after %d.%09d every %d", fast, big, as, an, bs, bn, every)
		}
	}
}

// TestIntervalProperties checks, for random intervals, that Next is the
// first lattice point after after and that consecutive results are exactly
// Every apart, so no fire is skipped.
func TestIntervalProperties(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for i := 0; i < 20000; i++ {
		every := time.Duration(100+r.Int63n(10*24*3600*1000)) * time.Millisecond
		var anchor time.Time
		if r.Intn(2) == 0 {
			anchor = time.Unix(r.Int63n(200*365*86400)-100*365*86400, r.Int63n(1e9))
		}
		after := time.Unix(r.Int63n(200*365*86400)-100*365*86400, r.Int63n(1e9))
		iv := Interval{Every: every, Anchor: anchor}
		first := iv.Next(after)
		second := iv.Next(first)
		if anchor.IsZero() {
			anchor = time.Unix(0, 0)
		}
		switch {
		case !first.After(after):
			t.Fatalf("%v: Next(%v) = %v, not after", iv, after, first)
		case first.Add(-every).After(after):
			t.Fatalf("%v: Next(%v) = %v skips %v", iv, after, first, first.Add(-every))
		case first.Sub(anchor)%every != 0:
			t.Fatalf("%v: Next(%v) = %v, not in phase with %v", iv, after, first, anchor)
		case second.Sub(first) != every:
			t.Fatalf("%v: Next(%v) = %v, Next of that = %v", iv, after, first, second)
		}
	}
}
