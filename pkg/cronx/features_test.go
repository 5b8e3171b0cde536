package cronx_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

// The expected fire times below were worked out by hand from a calendar
// (and the weekdays double-checked with the time package, never with
// cronx). All instants are UTC unless the expression sets a zone.
//
// Calendar facts used, 2024 (a leap year; 1 Jan is a Monday):
//
//	Mar 31 Sun, Jun 30 Sun, Aug 31 Sat, Nov 30 Sat (last days on a weekend)
//	Jun 1 Sat, Sep 1 Sun (first days on a weekend)
//	Jun 15 Sat, Sep 15 Sun (15ths on a weekend)
//	Fridays: Jan 5..26, Feb 2..23, Mar 1..29, Sep 6..27, Oct 4..25
//	Mondays: Jan 1..29, Feb 5..26, Mar 4..25, Apr 1..29
//	Sundays: five in Mar (31), Jun (30), Sep (29), Dec (29) only
//	13ths: Jan Sat, Mar Wed, Apr Sat, Jul Sat, Sep Fri, Oct Sun
//
// 2100 is not a leap year; 2000 and 2104 are. 1 Jan 2030 and 1 Jan 2199
// are Tuesdays; 6 Jan 2025 is a Monday.

// featureCase is an expression, the instant to start from and the fire
// times that follow it in order; "" is the zero time (no further fire).
type featureCase struct {
	name  string
	expr  string
	opts  cronx.Options
	after string
	want  []string
}

// featureTime parses an RFC 3339 instant; "" is the zero time.
func featureTime(t *testing.T, s string) time.Time {
	t.Helper()
	if s == "" {
		return time.Time{}
	}
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("bad test instant %q: %v", s, err)
	}
	return v
}

// checkFireSequence calls Next repeatedly from after and compares each
// result with want, stopping after a zero time.
func checkFireSequence(t *testing.T, s cronx.Schedule, expr string, after time.Time, want []string) {
	t.Helper()
	at := after
	for i, ws := range want {
		w := featureTime(t, ws)
		got := s.Next(at)
		if !got.Equal(w) || got.IsZero() != w.IsZero() {
			t.Errorf("%q: fire %d after %v: got %v, want %v", expr, i+1, at.UTC(), fmtInstant(got), fmtInstant(w))
			return
		}
		if got.IsZero() {
			return
		}
		at = got
	}
}

func fmtInstant(t time.Time) string {
	if t.IsZero() {
		return "zero time"
	}
	return t.UTC().Format(time.RFC3339)
}

func runFeatureCases(t *testing.T, cases []featureCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := cronx.NewCron(tc.expr, tc.opts)
			if err != nil {
				t.Fatalf("NewCron(%q, %+v): %v", tc.expr, tc.opts, err)
			}
			checkFireSequence(t, c, tc.expr, featureTime(t, tc.after), tc.want)
		})
	}
}

func TestFeatureLastDay(t *testing.T) {
	runFeatureCases(t, []featureCase{
		{name: "L", expr: "0 0 L * *", after: "2024-01-15T00:00:00Z",
			want: []string{"2024-01-31T00:00:00Z", "2024-02-29T00:00:00Z", "2024-03-31T00:00:00Z", "2024-04-30T00:00:00Z"}},
		{name: "L in a non-leap February", expr: "30 18 L 2 *", after: "2023-01-01T00:00:00Z",
			want: []string{"2023-02-28T18:30:00Z", "2024-02-29T18:30:00Z", "2025-02-28T18:30:00Z"}},
		{name: "L-2", expr: "0 0 L-2 * *", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-29T00:00:00Z", "2024-02-27T00:00:00Z", "2024-03-29T00:00:00Z", "2024-04-28T00:00:00Z"}},
		// Mar 31 is a Sunday, Jun 30 a Sunday: the Friday before.
		{name: "LW last day on Sunday", expr: "0 0 LW * *", after: "2024-03-01T00:00:00Z",
			want: []string{"2024-03-29T00:00:00Z", "2024-04-30T00:00:00Z", "2024-05-31T00:00:00Z", "2024-06-28T00:00:00Z"}},
		// Aug 31 and Nov 30 are Saturdays.
		{name: "LW last day on Saturday", expr: "0 0 LW * *", after: "2024-08-01T00:00:00Z",
			want: []string{"2024-08-30T00:00:00Z", "2024-09-30T00:00:00Z", "2024-10-31T00:00:00Z", "2024-11-29T00:00:00Z"}},
	})
}

func TestFeatureNearestWeekday(t *testing.T) {
	runFeatureCases(t, []featureCase{
		// Jun 15 is a Saturday (-> Fri 14), Sep 15 a Sunday (-> Mon 16).
		{name: "15W", expr: "0 0 15W * *", after: "2024-06-01T00:00:00Z",
			want: []string{"2024-06-14T00:00:00Z", "2024-07-15T00:00:00Z", "2024-08-15T00:00:00Z", "2024-09-16T00:00:00Z"}},
		// Jun 1 is a Saturday: Monday the 3rd, not Friday May 31. Sep 1
		// is a Sunday: Monday the 2nd.
		{name: "1W first on Saturday", expr: "0 0 1W * *", after: "2024-05-15T00:00:00Z",
			want: []string{"2024-06-03T00:00:00Z", "2024-07-01T00:00:00Z", "2024-08-01T00:00:00Z", "2024-09-02T00:00:00Z"}},
		// 2025: Feb 1 and Mar 1 are Saturdays.
		{name: "1W 2025", expr: "0 0 1W 2,3 *", after: "2025-01-01T00:00:00Z",
			want: []string{"2025-02-03T00:00:00Z", "2025-03-03T00:00:00Z", "2026-02-02T00:00:00Z"}},
		// April and June have no 31st: no fire. Mar 31 is a Sunday and the
		// last day: Friday the 29th. Aug 31 is a Saturday: Friday the 30th.
		{name: "31W skips 30-day months", expr: "0 0 31W * *", after: "2024-03-01T00:00:00Z",
			want: []string{"2024-03-29T00:00:00Z", "2024-05-31T00:00:00Z", "2024-07-31T00:00:00Z", "2024-08-30T00:00:00Z"}},
	})
	// A 31W restricted to 30-day months can never fire.
	if _, err := cronx.NewCron("0 0 31W 4,6,9,11 *", cronx.Options{}); err == nil {
		t.Errorf(`NewCron("0 0 31W 4,6,9,11 *") accepted an expression that never fires`)
	}
}

func TestFeatureDayOfWeekSpecials(t *testing.T) {
	runFeatureCases(t, []featureCase{
		{name: "5L last Friday", expr: "0 0 * * 5L", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-26T00:00:00Z", "2024-02-23T00:00:00Z", "2024-03-29T00:00:00Z", "2024-04-26T00:00:00Z"}},
		{name: "1#2 second Monday", expr: "0 0 * * 1#2", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-08T00:00:00Z", "2024-02-12T00:00:00Z", "2024-03-11T00:00:00Z", "2024-04-08T00:00:00Z"}},
		{name: "0#5 skips months without a fifth Sunday", expr: "0 0 * * 0#5", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-03-31T00:00:00Z", "2024-06-30T00:00:00Z", "2024-09-29T00:00:00Z", "2024-12-29T00:00:00Z"}},
		{name: "7#5 is 0#5", expr: "0 0 * * 7#5", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-03-31T00:00:00Z", "2024-06-30T00:00:00Z"}},
		{name: "DOW 7 is Sunday", expr: "0 0 * * 7", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-07T00:00:00Z", "2024-01-14T00:00:00Z"}},
		{name: "DOW 0 is Sunday", expr: "0 0 * * 0", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-07T00:00:00Z", "2024-01-14T00:00:00Z"}},
		{name: "range ending in 7", expr: "0 0 * * 5-7", after: "2024-01-04T00:00:00Z",
			want: []string{"2024-01-05T00:00:00Z", "2024-01-06T00:00:00Z", "2024-01-07T00:00:00Z", "2024-01-12T00:00:00Z"}},
		{name: "range ending in SUN", expr: "0 0 * * SAT-SUN", after: "2024-01-04T00:00:00Z",
			want: []string{"2024-01-06T00:00:00Z", "2024-01-07T00:00:00Z", "2024-01-13T00:00:00Z"}},
	})
}

func TestFeatureDayRules(t *testing.T) {
	runFeatureCases(t, []featureCase{
		// Both restricted: the 13th OR any Friday; Friday the 13th once.
		{name: "OR rule with Friday the 13th", expr: "0 0 13 * 5", after: "2024-09-10T00:00:00Z",
			want: []string{"2024-09-13T00:00:00Z", "2024-09-20T00:00:00Z", "2024-09-27T00:00:00Z", "2024-10-04T00:00:00Z"}},
		{name: "OR rule 13th on Sunday", expr: "0 0 13 * 5", after: "2024-10-01T00:00:00Z",
			want: []string{"2024-10-04T00:00:00Z", "2024-10-11T00:00:00Z", "2024-10-13T00:00:00Z", "2024-10-18T00:00:00Z"}},
		// Day-of-month starts with '*': odd days AND Mondays.
		{name: "AND rule star-step DOM", expr: "0 0 */2 * 1", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-15T00:00:00Z", "2024-01-29T00:00:00Z", "2024-02-05T00:00:00Z", "2024-02-19T00:00:00Z"}},
		// Day-of-week starts with '*': the 13th AND Sun/Wed/Sat.
		{name: "AND rule star-step DOW", expr: "0 0 13 * */3", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-13T00:00:00Z", "2024-03-13T00:00:00Z", "2024-04-13T00:00:00Z", "2024-07-13T00:00:00Z"}},
		{name: "question mark is a star", expr: "0 0 13 * ?", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-13T00:00:00Z", "2024-02-13T00:00:00Z"}},
		// L with a restricted DOW is OR too: last day or Mondays.
		{name: "OR rule with L", expr: "0 0 L * 1", after: "2024-01-25T00:00:00Z",
			want: []string{"2024-01-29T00:00:00Z", "2024-01-31T00:00:00Z", "2024-02-05T00:00:00Z"}},
	})
}

// TestFeatureStarListDayRule: "*/15,7" starts with '*', so by the rule
// "either field starts with '*' -> AND" (Vixie cron sets DOM_STAR from the
// field's first character) the days {1,7,16,31} must also be Mondays.
func TestFeatureStarListDayRule(t *testing.T) {
	const expr = "0 0 */15,7 * 1"
	c, err := cronx.NewCron(expr, cronx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	after := featureTime(t, "2024-01-01T00:00:00Z")
	checkFireSequence(t, c, expr, after, []string{"2024-04-01T00:00:00Z", "2024-07-01T00:00:00Z", "2024-09-16T00:00:00Z", "2024-10-07T00:00:00Z"})
}

func TestFeatureFieldCounts(t *testing.T) {
	runFeatureCases(t, []featureCase{
		{name: "5 fields second 0", expr: "15 10 * * *", after: "2024-01-01T10:15:00Z",
			want: []string{"2024-01-02T10:15:00Z", "2024-01-03T10:15:00Z"}},
		{name: "6 fields seconds first", expr: "30 15 10 * * *", after: "2024-01-01T10:15:00Z",
			want: []string{"2024-01-01T10:15:30Z", "2024-01-02T10:15:30Z"}},
		{name: "7 fields year list", expr: "0 0 12 1 1 * 2030,2199", after: "2024-06-01T00:00:00Z",
			want: []string{"2030-01-01T12:00:00Z", "2199-01-01T12:00:00Z", ""}},
		{name: "7 fields year range", expr: "0 0 0 1 1 * 2030-2032", after: "2024-06-01T00:00:00Z",
			want: []string{"2030-01-01T00:00:00Z", "2031-01-01T00:00:00Z", "2032-01-01T00:00:00Z", ""}},
		{name: "7 fields year step", expr: "0 0 0 29 2 * 2090-2199/10", after: "2024-06-01T00:00:00Z",
			// Years 2090, 2100, ..., 2190: 2120 is the first leap year
			// (2090 is not divisible by 4, 2100 is a century).
			want: []string{"2120-02-29T00:00:00Z", "2140-02-29T00:00:00Z"}},
		{name: "after 2199", expr: "0 0 1 1 *", after: "2199-06-01T00:00:00Z",
			want: []string{""}},
		{name: "last fire in 2199", expr: "59 23 31 12 *", after: "2199-01-01T00:00:00Z",
			want: []string{"2199-12-31T23:59:00Z", ""}},
	})
}

func TestFeatureLeapDay(t *testing.T) {
	runFeatureCases(t, []featureCase{
		{name: "2000 is leap", expr: "0 0 29 2 *", after: "1999-03-01T00:00:00Z",
			want: []string{"2000-02-29T00:00:00Z", "2004-02-29T00:00:00Z", "2008-02-29T00:00:00Z"}},
		{name: "2100 is not leap", expr: "0 0 29 2 *", after: "2092-03-01T00:00:00Z",
			want: []string{"2096-02-29T00:00:00Z", "2104-02-29T00:00:00Z", "2108-02-29T00:00:00Z"}},
	})
}

func TestFeatureAliases(t *testing.T) {
	runFeatureCases(t, []featureCase{
		{name: "@yearly", expr: "@yearly", after: "2024-03-01T00:00:00Z",
			want: []string{"2025-01-01T00:00:00Z", "2026-01-01T00:00:00Z"}},
		{name: "@annually", expr: "@annually", after: "2024-03-01T00:00:00Z",
			want: []string{"2025-01-01T00:00:00Z", "2026-01-01T00:00:00Z"}},
		{name: "@monthly", expr: "@monthly", after: "2024-01-15T00:00:00Z",
			want: []string{"2024-02-01T00:00:00Z", "2024-03-01T00:00:00Z"}},
		{name: "@weekly", expr: "@weekly", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-07T00:00:00Z", "2024-01-14T00:00:00Z"}},
		{name: "@daily", expr: "@daily", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z"}},
		{name: "@midnight", expr: "@midnight", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z"}},
		{name: "@hourly", expr: "@hourly", after: "2024-01-01T00:30:00Z",
			want: []string{"2024-01-01T01:00:00Z", "2024-01-01T02:00:00Z"}},
	})
}

func TestFeatureQuartz(t *testing.T) {
	q := cronx.Options{Dialect: cronx.Quartz}
	runFeatureCases(t, []featureCase{
		// Quartz: 1=SUN, 2=MON, ..., 6=FRI, 7=SAT.
		{name: "2 is Monday", expr: "0 0 12 ? * 2", opts: q, after: "2024-01-01T12:00:00Z",
			want: []string{"2024-01-08T12:00:00Z", "2024-01-15T12:00:00Z", "2024-01-22T12:00:00Z"}},
		{name: "1 is Sunday", expr: "0 0 12 ? * 1", opts: q, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-07T12:00:00Z", "2024-01-14T12:00:00Z"}},
		{name: "7 is Saturday", expr: "0 0 12 ? * 7", opts: q, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-06T12:00:00Z", "2024-01-13T12:00:00Z"}},
		{name: "6#3 third Friday", expr: "0 0 12 ? * 6#3", opts: q, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-19T12:00:00Z", "2024-02-16T12:00:00Z", "2024-03-15T12:00:00Z"}},
		{name: "6L last Friday", expr: "0 0 12 ? * 6L", opts: q, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-26T12:00:00Z", "2024-02-23T12:00:00Z"}},
		{name: "lone L is Saturday", expr: "0 0 12 ? * L", opts: q, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-06T12:00:00Z", "2024-01-13T12:00:00Z"}},
		{name: "MON-FRI", expr: "0 0 12 ? * MON-FRI", opts: q, after: "2024-01-05T12:00:00Z",
			want: []string{"2024-01-08T12:00:00Z", "2024-01-09T12:00:00Z"}},
		{name: "L in DOM", expr: "0 0 12 L * ?", opts: q, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-31T12:00:00Z", "2024-02-29T12:00:00Z"}},
		{name: "7 fields with year", expr: "0 0 12 ? * 2 2025", opts: q, after: "2024-01-01T00:00:00Z",
			want: []string{"2025-01-06T12:00:00Z", "2025-01-13T12:00:00Z"}},
		{name: "Mondays equal standard 1", expr: "0 0 12 * * 1", after: "2024-01-01T12:00:00Z",
			want: []string{"2024-01-08T12:00:00Z", "2024-01-15T12:00:00Z", "2024-01-22T12:00:00Z"}},
	})
	for _, bad := range []string{
		"0 0 12 ? * ?",   // both
		"0 0 12 1 * 2",   // neither
		"0 0 12 * * *",   // neither
		"0 0 12 1 * 2 *", // neither, 7 fields
		"0 12 ? * 2",     // 5 fields
		"0 12 * * 2",     // 5 fields
	} {
		_, err := cronx.NewCron(bad, q)
		var pe *cronx.ParseError
		if !errors.As(err, &pe) {
			t.Errorf("quartz %q: error %v, want a *ParseError", bad, err)
		}
	}
}

func TestFeatureZonePrefix(t *testing.T) {
	ny, err := cronx.LoadZone("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, expr := range []string{"CRON_TZ=Asia/Tokyo 0 9 * * *", "TZ=Asia/Tokyo 0 9 * * *"} {
		// The prefix wins over Options.Location. Tokyo is UTC+9, no DST.
		c, err := cronx.NewCron(expr, cronx.Options{Location: ny})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Location().String(); got != "Asia/Tokyo" {
			t.Errorf("%q: Location() = %s, want Asia/Tokyo", expr, got)
		}
		checkFireSequence(t, c, expr, featureTime(t, "2023-12-31T12:00:00Z"),
			[]string{"2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z"})
		if got := c.Next(featureTime(t, "2024-01-01T00:00:00Z")); got.Hour() != 9 {
			t.Errorf("%q: fire time %v is not 09:00 in Tokyo", expr, got)
		}
	}
}

func TestFeatureParseEvery(t *testing.T) {
	s, err := cronx.Parse("@every 90m", cronx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	iv, ok := s.(cronx.Interval)
	if !ok {
		t.Fatalf(`Parse("@every 90m") returned %T, want cronx.Interval`, s)
	}
	if iv.Every != 90*time.Minute {
		t.Errorf("Every = %v, want 1h30m", iv.Every)
	}
	// Aligned to the Unix epoch: 2024-01-01T00:00Z is 1704067200 s, a
	// multiple of 5400 s.
	checkFireSequence(t, s, "@every 90m", featureTime(t, "2024-01-01T00:00:00Z"),
		[]string{"2024-01-01T01:30:00Z", "2024-01-01T03:00:00Z", "2024-01-01T04:30:00Z"})
	if s, err := cronx.Parse("0 0 L * *", cronx.Options{}); err != nil {
		t.Error(err)
	} else if _, ok := s.(*cronx.Cron); !ok {
		t.Errorf(`Parse("0 0 L * *") returned %T, want *cronx.Cron`, s)
	}
}

// hashedNext parses expr with key and returns its first n fire times after
// 2024-01-01T00:00Z.
func hashedNext(t *testing.T, expr, key string, n int) []time.Time {
	t.Helper()
	c, err := cronx.NewCron(expr, cronx.Options{Key: key})
	if err != nil {
		t.Fatalf("NewCron(%q, key %q): %v", expr, key, err)
	}
	out := make([]time.Time, 0, n)
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for range n {
		at = c.Next(at)
		if at.IsZero() {
			t.Fatalf("%q key %q: no fire after %d", expr, key, len(out))
		}
		out = append(out, at)
	}
	return out
}

func TestFeatureHashSameKey(t *testing.T) {
	for _, expr := range []string{"H * * * *", "H H * * *", "H H H * *", "H H * * H", "H H(9-17) * * 1-5", "H/10 H * * *", "H H H H H H"} {
		a := hashedNext(t, expr, "orders-sync", 20)
		b := hashedNext(t, expr, "orders-sync", 20)
		for i := range a {
			if !a[i].Equal(b[i]) {
				t.Fatalf("%q: fire %d differs for the same key: %v vs %v", expr, i, a[i], b[i])
			}
		}
	}
	// Without a key the expression is the key: parsing twice agrees.
	c1, _ := cronx.NewCron("H H * * *", cronx.Options{})
	c2, _ := cronx.NewCron("H H * * *", cronx.Options{})
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	if n1, n2 := c1.Next(at), c2.Next(at); !n1.Equal(n2) {
		t.Errorf("default key: %v vs %v", n1, n2)
	}
}

// TestFeatureHashStable pins the values for one key so that any change of
// the hash (which would move every deployed schedule) is caught. Computed
// independently: FNV-1a 64 of "billing-daily" followed by the field kind
// byte (minute 1, hour 2, day-of-month 3), through the splitmix64
// finalizer, mod the field's range (day-of-month: 1 + mod 28).
func TestFeatureHashStable(t *testing.T) {
	runFeatureCases(t, []featureCase{
		{name: "minute", expr: "H * * * *", opts: cronx.Options{Key: "billing-daily"}, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-01T00:06:00Z", "2024-01-01T01:06:00Z"}},
		{name: "daily", expr: "H H * * *", opts: cronx.Options{Key: "billing-daily"}, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-01T17:06:00Z", "2024-01-02T17:06:00Z"}},
		{name: "monthly", expr: "H H H * *", opts: cronx.Options{Key: "billing-daily"}, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-19T17:06:00Z", "2024-02-19T17:06:00Z"}},
	})
}

// hourlyMinutes returns how many keys got each minute with "H * * * *",
// checking that every key fires once an hour on a whole minute.
func hourlyMinutes(t *testing.T, keys []string) map[int]int {
	t.Helper()
	minutes := map[int]int{}
	for _, key := range keys {
		fires := hashedNext(t, "H * * * *", key, 2)
		m := fires[0].Minute()
		if m < 0 || m > 59 || fires[0].Second() != 0 {
			t.Fatalf("key %q: first fire %v", key, fires[0])
		}
		if fires[1].Sub(fires[0]) != time.Hour {
			t.Fatalf("key %q: fires %v, %v are not an hour apart", key, fires[0], fires[1])
		}
		minutes[m]++
	}
	return minutes
}

// TestFeatureHashSpreadSequentialKeys: schedule ids such as "job-17" are
// typical keys; 1000 of them should cover (nearly) every minute.
func TestFeatureHashSpreadSequentialKeys(t *testing.T) {
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("job-%d", i)
	}
	minutes := hourlyMinutes(t, keys)
	// 1000 uniform draws over 60 minutes miss one with probability 5e-8.
	if len(minutes) < 50 {
		t.Fatalf("1000 keys job-0..job-999 with \"H * * * *\" use only %d distinct minutes, want at least 50", len(minutes))
	}
}

func TestFeatureHashSpread(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("%016x", r.Uint64())
	}
	if minutes := hourlyMinutes(t, keys); len(minutes) < 50 {
		t.Errorf("1000 random keys use only %d distinct minutes, want at least 50", len(minutes))
	}

	for i := range 1000 {
		fires := hashedNext(t, "H(0-29) * * * *", fmt.Sprintf("job-%d", i), 1)
		if m := fires[0].Minute(); m > 29 {
			t.Fatalf("H(0-29) job-%d: minute %d", i, m)
		}
	}

	days := map[int]bool{}
	for i := range 1000 {
		fires := hashedNext(t, "0 0 H * *", fmt.Sprintf("job-%d", i), 3)
		d := fires[0].Day()
		if d < 1 || d > 28 {
			t.Fatalf("0 0 H * * job-%d: day %d, want 1-28", i, d)
		}
		for _, f := range fires[1:] {
			if f.Day() != d {
				t.Fatalf("0 0 H * * job-%d: fires %v", i, fires)
			}
		}
		days[d] = true
	}
	if len(days) < 20 {
		t.Errorf("1000 keys use only %d distinct days of month", len(days))
	}

	for i := range 200 {
		key := fmt.Sprintf("job-%d", i)
		// Start just before 2024-01-01T00:00 so minute 0 counts.
		c, err := cronx.NewCron("H/15 * * * *", cronx.Options{Key: key})
		if err != nil {
			t.Fatal(err)
		}
		at := time.Date(2023, 12, 31, 23, 59, 59, 0, time.UTC)
		var got []int
		for range 5 {
			at = c.Next(at)
			got = append(got, at.Hour()*60+at.Minute())
		}
		if got[0] > 14 {
			t.Fatalf("H/15 %s: first minute %d, want 0-14", key, got[0])
		}
		for j := 1; j < 5; j++ {
			if got[j]-got[j-1] != 15 {
				t.Fatalf("H/15 %s: minutes %v are not 15 apart", key, got)
			}
		}
	}

	for i := range 200 {
		key := fmt.Sprintf("job-%d", i)
		c, err := cronx.NewCron("H(10-40)/10 * * * *", cronx.Options{Key: key})
		if err != nil {
			t.Fatal(err)
		}
		at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		prev := -1
		for range 3 {
			at = c.Next(at)
			m := at.Minute()
			if at.Hour() != 0 || m < 10 || m > 40 || (prev >= 0 && m-prev != 10) {
				t.Fatalf("H(10-40)/10 %s: fire %v after minute %d", key, at, prev)
			}
			prev = m
		}
	}

	if _, err := cronx.NewCron("0 0 0 1 1 * H", cronx.Options{Key: "k"}); err == nil {
		t.Error("H in the year field was accepted")
	}
}

// TestFeatureHashSpreadAcrossFields: keys should spread over the
// combinations of several H fields, not only over each field alone.
func TestFeatureHashSpreadAcrossFields(t *testing.T) {
	pairs := map[[2]int]bool{}
	const keys = 10000
	for i := range keys {
		f := hashedNext(t, "H H * * *", fmt.Sprintf("job-%d", i), 1)[0]
		pairs[[2]int{f.Hour(), f.Minute()}] = true
	}
	// 10000 uniform draws over 1440 slots leave about 1 slot empty.
	if len(pairs) < 1000 {
		t.Fatalf("%d keys with \"H H * * *\" use only %d of 1440 (hour, minute) slots: hour and minute are correlated", keys, len(pairs))
	}
}

// TestFeatureHashDOWRangeEndingInSeven: "5-7" is Fri, Sat, Sun, so H(5-7)
// should pick one of those, and H(0-7) one of all seven days.
func TestFeatureHashDOWRangeEndingInSeven(t *testing.T) {
	var bugs []string
	if _, err := cronx.NewCron("0 0 * * H(5-7)", cronx.Options{Key: "k"}); err != nil {
		bugs = append(bugs, fmt.Sprintf("%q rejected (%v) while \"0 0 * * 5-7\" is accepted", "0 0 * * H(5-7)", err))
	}
	days := map[time.Weekday]bool{}
	for i := range 200 {
		f := hashedNext(t, "0 0 * * H(0-7)", fmt.Sprintf("job-%d", i), 1)[0]
		days[f.Weekday()] = true
	}
	if len(days) < 7 {
		bugs = append(bugs, fmt.Sprintf("200 keys with \"0 0 * * H(0-7)\" fire on only %d weekday(s) %v (7 is stored as 0, so the range collapses to 0-0)", len(days), days))
	}
	if len(bugs) > 0 {
		t.Fatalf("H(a-b) in day-of-week ignores that 7 is Sunday: %s", strings.Join(bugs, "; "))
	}
	for i := range 200 {
		f := hashedNext(t, "0 0 * * H(5-7)", fmt.Sprintf("job-%d", i), 1)[0]
		if w := f.Weekday(); w != time.Friday && w != time.Saturday && w != time.Sunday {
			t.Fatalf("H(5-7) job-%d: fires on %v", i, w)
		}
	}
}
