package cronx_test

import (
	"testing"

	"github.com/jetsched/jetsched/pkg/cronx"
)

// The forms migrating users bring from peer libraries (issue 15). Expected
// fire times were worked out from a calendar (weekdays and month lengths
// double-checked with Python's datetime, never with cronx). Calendar facts
// used, besides those at the top of features_test.go:
//
//	2024: Jan 4 Thu, Jan 5 Fri; Feb has 29 days; Apr 30 is a Tuesday
//	2024: Jun 2 Sun, Jul 2 Tue, Aug 2 Fri (for 2W)
//	2024: last days Jan 31 Wed, Mar 31 Sun, Apr 30 Tue, Jun 30 Sun
//	2023: Feb has 28 days

var quartz = cronx.Options{Dialect: cronx.Quartz}

// TestFeatureFullNames: day and month names in full, any case, alone, in
// ranges and in lists, as well as the three-letter ones.
func TestFeatureFullNames(t *testing.T) {
	runFeatureCases(t, []featureCase{
		{name: "friday", expr: "0 0 * * friday", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-05T00:00:00Z", "2024-01-12T00:00:00Z", "2024-01-19T00:00:00Z"}},
		{name: "January", expr: "0 0 1 January *", after: "2024-03-01T00:00:00Z",
			want: []string{"2025-01-01T00:00:00Z", "2026-01-01T00:00:00Z"}},
		{name: "full range mixed case", expr: "0 0 * * MONDAY-friday", after: "2024-01-05T00:00:00Z",
			want: []string{"2024-01-08T00:00:00Z", "2024-01-09T00:00:00Z", "2024-01-10T00:00:00Z", "2024-01-11T00:00:00Z", "2024-01-12T00:00:00Z", "2024-01-15T00:00:00Z"}},
		{name: "full list", expr: "0 0 * * Saturday,SUNDAY", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-06T00:00:00Z", "2024-01-07T00:00:00Z", "2024-01-13T00:00:00Z"}},
		{name: "month range full and abbreviated", expr: "0 0 1 june-AUG *", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-06-01T00:00:00Z", "2024-07-01T00:00:00Z", "2024-08-01T00:00:00Z", "2025-06-01T00:00:00Z"}},
		{name: "full name with a step", expr: "0 0 1 february/6 *", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-02-01T00:00:00Z", "2024-08-01T00:00:00Z", "2025-02-01T00:00:00Z"}},
		{name: "quartz full name", expr: "0 0 12 ? * Friday", opts: quartz, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-05T12:00:00Z", "2024-01-12T12:00:00Z"}},
		{name: "quartz full name nth", expr: "0 0 12 ? * friday#3", opts: quartz, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-19T12:00:00Z", "2024-02-16T12:00:00Z"}},
	})
}

// TestFeatureWrapAroundRanges: a range written backwards wraps around the
// field's cycle, as Quartz ("22-2", "NOV-FEB") and croniter do, in every
// field but the year; a step counts on through the wrap.
func TestFeatureWrapAroundRanges(t *testing.T) {
	runFeatureCases(t, []featureCase{
		{name: "FRI-MON", expr: "0 0 * * FRI-MON", after: "2024-01-04T00:00:00Z",
			want: []string{"2024-01-05T00:00:00Z", "2024-01-06T00:00:00Z", "2024-01-07T00:00:00Z", "2024-01-08T00:00:00Z", "2024-01-12T00:00:00Z"}},
		{name: "7-4 is Sunday to Thursday", expr: "0 0 * * 7-4", after: "2024-01-04T00:00:00Z",
			want: []string{"2024-01-07T00:00:00Z", "2024-01-08T00:00:00Z", "2024-01-09T00:00:00Z", "2024-01-10T00:00:00Z", "2024-01-11T00:00:00Z", "2024-01-14T00:00:00Z"}},
		{name: "SAT-TUE/2", expr: "0 0 * * SAT-TUE/2", after: "2024-01-04T00:00:00Z",
			want: []string{"2024-01-06T00:00:00Z", "2024-01-08T00:00:00Z", "2024-01-13T00:00:00Z"}},
		{name: "NOV-FEB", expr: "0 0 1 NOV-FEB *", after: "2024-03-01T00:00:00Z",
			want: []string{"2024-11-01T00:00:00Z", "2024-12-01T00:00:00Z", "2025-01-01T00:00:00Z", "2025-02-01T00:00:00Z", "2025-11-01T00:00:00Z"}},
		{name: "hour 22-2", expr: "0 22-2 * * *", after: "2024-01-01T12:00:00Z",
			want: []string{"2024-01-01T22:00:00Z", "2024-01-01T23:00:00Z", "2024-01-02T00:00:00Z", "2024-01-02T01:00:00Z", "2024-01-02T02:00:00Z", "2024-01-02T22:00:00Z"}},
		{name: "hour 22-2/2", expr: "0 22-2/2 * * *", after: "2024-01-01T12:00:00Z",
			want: []string{"2024-01-01T22:00:00Z", "2024-01-02T00:00:00Z", "2024-01-02T02:00:00Z", "2024-01-02T22:00:00Z"}},
		{name: "minute 50-10/5", expr: "50-10/5 * * * *", after: "2024-01-01T00:12:00Z",
			want: []string{"2024-01-01T00:50:00Z", "2024-01-01T00:55:00Z", "2024-01-01T01:00:00Z", "2024-01-01T01:05:00Z", "2024-01-01T01:10:00Z", "2024-01-01T01:50:00Z"}},
		{name: "second 50-5/5", expr: "50-5/5 * * * * *", after: "2024-01-01T00:00:06Z",
			want: []string{"2024-01-01T00:00:50Z", "2024-01-01T00:00:55Z", "2024-01-01T00:01:00Z", "2024-01-01T00:01:05Z", "2024-01-01T00:01:50Z"}},
		// Day-of-month wraps on a 31-day cycle, as in Quartz: the 31st
		// simply does not exist in a 30-day month.
		{name: "day 25-5 over February", expr: "0 0 25-5 * *", after: "2024-02-27T00:00:00Z",
			want: []string{"2024-02-28T00:00:00Z", "2024-02-29T00:00:00Z", "2024-03-01T00:00:00Z", "2024-03-02T00:00:00Z"}},
		{name: "day 25-5 over April", expr: "0 0 25-5 * *", after: "2024-04-29T00:00:00Z",
			want: []string{"2024-04-30T00:00:00Z", "2024-05-01T00:00:00Z", "2024-05-02T00:00:00Z"}},
		{name: "day 28-2/2 counts a 31-day cycle", expr: "0 0 28-2/2 * *", after: "2024-02-27T00:00:00Z",
			want: []string{"2024-02-28T00:00:00Z", "2024-03-01T00:00:00Z", "2024-03-28T00:00:00Z", "2024-03-30T00:00:00Z", "2024-04-01T00:00:00Z"}},
		{name: "quartz FRI-MON", expr: "0 0 12 ? * FRI-MON", opts: quartz, after: "2024-01-04T00:00:00Z",
			want: []string{"2024-01-05T12:00:00Z", "2024-01-06T12:00:00Z", "2024-01-07T12:00:00Z", "2024-01-08T12:00:00Z", "2024-01-12T12:00:00Z"}},
		{name: "quartz 6-2 is FRI-MON", expr: "0 0 12 ? * 6-2", opts: quartz, after: "2024-01-04T00:00:00Z",
			want: []string{"2024-01-05T12:00:00Z", "2024-01-06T12:00:00Z", "2024-01-07T12:00:00Z", "2024-01-08T12:00:00Z", "2024-01-12T12:00:00Z"}},
		{name: "quartz hour 22-2", expr: "0 0 22-2 * * ?", opts: quartz, after: "2024-01-01T23:30:00Z",
			want: []string{"2024-01-02T00:00:00Z", "2024-01-02T01:00:00Z", "2024-01-02T02:00:00Z", "2024-01-02T22:00:00Z"}},
	})
}

// TestFeatureLastDayForms: L as a range bound and with a step, W before the
// day, L-nW, and nW, L-nW, L-n, L and LW inside lists (Quartz 2.x; croniter
// for Wn).
func TestFeatureLastDayForms(t *testing.T) {
	runFeatureCases(t, []featureCase{
		{name: "29-L", expr: "0 0 29-L * *", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-29T00:00:00Z", "2024-01-30T00:00:00Z", "2024-01-31T00:00:00Z", "2024-02-29T00:00:00Z", "2024-03-29T00:00:00Z"}},
		{name: "29-L skips a 28-day February", expr: "0 0 29-L * *", after: "2023-02-01T00:00:00Z",
			want: []string{"2023-03-29T00:00:00Z", "2023-03-30T00:00:00Z", "2023-03-31T00:00:00Z", "2023-04-29T00:00:00Z"}},
		{name: "1-L/8", expr: "0 0 1-L/8 * *", after: "2024-01-20T00:00:00Z",
			want: []string{"2024-01-25T00:00:00Z", "2024-02-01T00:00:00Z", "2024-02-09T00:00:00Z", "2024-02-17T00:00:00Z", "2024-02-25T00:00:00Z", "2024-03-01T00:00:00Z"}},
		{name: "W15 is 15W", expr: "0 0 W15 * *", after: "2024-06-01T00:00:00Z",
			want: []string{"2024-06-14T00:00:00Z", "2024-07-15T00:00:00Z", "2024-08-15T00:00:00Z", "2024-09-16T00:00:00Z"}},
		// Nearest weekday to the day two before the last: Jan 29 Mon,
		// Feb 27 Tue, Mar 29 Fri, Apr 28 Sun -> Mon 29, May 29 Wed,
		// Jun 28 Fri.
		{name: "L-2W", expr: "0 0 L-2W * *", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-29T00:00:00Z", "2024-02-27T00:00:00Z", "2024-03-29T00:00:00Z", "2024-04-29T00:00:00Z", "2024-05-29T00:00:00Z", "2024-06-28T00:00:00Z"}},
		{name: "L-0W is LW", expr: "0 0 L-0W * *", after: "2024-03-01T00:00:00Z",
			want: []string{"2024-03-29T00:00:00Z", "2024-04-30T00:00:00Z", "2024-05-31T00:00:00Z", "2024-06-28T00:00:00Z"}},
		// Jun 2 is a Sunday -> Monday the 3rd.
		{name: "2W,16", expr: "0 0 2W,16 * *", after: "2024-05-20T00:00:00Z",
			want: []string{"2024-06-03T00:00:00Z", "2024-06-16T00:00:00Z", "2024-07-02T00:00:00Z", "2024-07-16T00:00:00Z", "2024-08-02T00:00:00Z", "2024-08-16T00:00:00Z"}},
		// Mar 30 is a Saturday -> Friday 29; Jun 29 a Saturday -> 28.
		{name: "L-1W,L-1", expr: "0 0 L-1W,L-1 * *", after: "2024-03-01T00:00:00Z",
			want: []string{"2024-03-29T00:00:00Z", "2024-03-30T00:00:00Z", "2024-04-29T00:00:00Z", "2024-05-30T00:00:00Z", "2024-06-28T00:00:00Z", "2024-06-29T00:00:00Z"}},
		{name: "LW,15", expr: "0 0 LW,15 * *", after: "2024-03-01T00:00:00Z",
			want: []string{"2024-03-15T00:00:00Z", "2024-03-29T00:00:00Z", "2024-04-15T00:00:00Z", "2024-04-30T00:00:00Z", "2024-05-15T00:00:00Z", "2024-05-31T00:00:00Z"}},
		{name: "L,1", expr: "0 0 L,1 * *", after: "2024-01-15T00:00:00Z",
			want: []string{"2024-01-31T00:00:00Z", "2024-02-01T00:00:00Z", "2024-02-29T00:00:00Z", "2024-03-01T00:00:00Z"}},
		{name: "quartz 2W,16", expr: "0 0 12 2W,16 * ?", opts: quartz, after: "2024-05-20T00:00:00Z",
			want: []string{"2024-06-03T12:00:00Z", "2024-06-16T12:00:00Z", "2024-07-02T12:00:00Z"}},
	})
}

// TestFeatureStarInList: '*' as a list item is every value, as cronie reads
// it. Whether a day field counts as unrestricted still follows the rule in
// force: cronie looks at the first character only.
func TestFeatureStarInList(t *testing.T) {
	runFeatureCases(t, []featureCase{
		{name: "year 2025,*", expr: "0 0 0 1 1 * 2025,*", after: "2030-06-01T00:00:00Z",
			want: []string{"2031-01-01T00:00:00Z", "2032-01-01T00:00:00Z"}},
		{name: "minute 5,*", expr: "5,* * * * *", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-01T00:01:00Z", "2024-01-01T00:02:00Z"}},
		// "1,*" does not start with '*': restricted, so OR with Monday:
		// every day.
		{name: "cronie 1,* OR Monday", expr: "0 0 1,* * MON", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z"}},
		// "*,1" starts with '*': unrestricted, so AND: Mondays.
		{name: "cronie *,1 AND Monday", expr: "0 0 *,1 * MON", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-08T00:00:00Z", "2024-01-15T00:00:00Z", "2024-01-22T00:00:00Z"}},
		// posix: neither is a bare '*', so OR: every day.
		{name: "posix *,1 OR Monday", expr: "0 0 *,1 * MON", opts: cronx.Options{DomDow: cronx.DomDowPOSIX}, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z"}},
		{name: "day-of-week MON,*", expr: "0 0 * * MON,*", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z"}},
	})
}

// TestFeatureGronxAliases: the Laravel/gronx tags besides cron's own.
func TestFeatureGronxAliases(t *testing.T) {
	runFeatureCases(t, []featureCase{
		{name: "@everyminute", expr: "@everyminute", after: "2024-01-01T00:00:30Z",
			want: []string{"2024-01-01T00:01:00Z", "2024-01-01T00:02:00Z"}},
		{name: "@always", expr: "@always", after: "2024-01-01T00:00:30Z",
			want: []string{"2024-01-01T00:01:00Z", "2024-01-01T00:02:00Z"}},
		{name: "@5minutes", expr: "@5minutes", after: "2024-01-01T00:07:00Z",
			want: []string{"2024-01-01T00:10:00Z", "2024-01-01T00:15:00Z"}},
		{name: "@10minutes", expr: "@10minutes", after: "2024-01-01T00:07:00Z",
			want: []string{"2024-01-01T00:10:00Z", "2024-01-01T00:20:00Z"}},
		{name: "@15minutes", expr: "@15minutes", after: "2024-01-01T00:07:00Z",
			want: []string{"2024-01-01T00:15:00Z", "2024-01-01T00:30:00Z"}},
		{name: "@30minutes", expr: "@30minutes", after: "2024-01-01T00:07:00Z",
			want: []string{"2024-01-01T00:30:00Z", "2024-01-01T01:00:00Z"}},
		{name: "@everysecond", expr: "@everysecond", after: "2024-01-01T00:00:30Z",
			want: []string{"2024-01-01T00:00:31Z", "2024-01-01T00:00:32Z"}},
		{name: "case-insensitive", expr: "@5Minutes", after: "2024-01-01T00:07:00Z",
			want: []string{"2024-01-01T00:10:00Z"}},
	})
	// Parse must not read "@everyminute" as "@every minute".
	for _, alias := range []string{"@everyminute", "@everysecond", "@EveryMinute"} {
		s, err := cronx.Parse(alias, cronx.Options{})
		if err != nil {
			t.Errorf("Parse(%q): %v", alias, err)
			continue
		}
		if _, ok := s.(*cronx.Cron); !ok {
			t.Errorf("Parse(%q) returned %T, want *cronx.Cron", alias, s)
		}
	}
}

// TestFeatureDomDow shows each expression under the three day rules.
func TestFeatureDomDow(t *testing.T) {
	cronie := cronx.Options{DomDow: cronx.DomDowCronie}
	posix := cronx.Options{DomDow: cronx.DomDowPOSIX}
	and := cronx.Options{DomDow: cronx.DomDowAnd}
	runFeatureCases(t, []featureCase{
		// "*/10" starts with '*': cronie ANDs, posix ORs.
		{name: "cronie */10 SUN", expr: "0 0 */10 * SUN", opts: cronie, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-21T00:00:00Z", "2024-02-11T00:00:00Z", "2024-03-31T00:00:00Z", "2024-04-21T00:00:00Z"}},
		{name: "default is cronie", expr: "0 0 */10 * SUN", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-21T00:00:00Z", "2024-02-11T00:00:00Z"}},
		{name: "posix */10 SUN", expr: "0 0 */10 * SUN", opts: posix, after: "2024-03-01T00:00:00Z",
			want: []string{"2024-03-03T00:00:00Z", "2024-03-10T00:00:00Z", "2024-03-11T00:00:00Z", "2024-03-17T00:00:00Z", "2024-03-21T00:00:00Z", "2024-03-24T00:00:00Z"}},
		{name: "and */10 SUN", expr: "0 0 */10 * SUN", opts: and, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-21T00:00:00Z", "2024-02-11T00:00:00Z", "2024-03-31T00:00:00Z"}},
		// Both restricted: cronie and posix OR, and ANDs.
		{name: "cronie 13 FRI", expr: "0 0 13 * 5", opts: cronie, after: "2024-09-01T00:00:00Z",
			want: []string{"2024-09-06T00:00:00Z", "2024-09-13T00:00:00Z", "2024-09-20T00:00:00Z", "2024-09-27T00:00:00Z", "2024-10-04T00:00:00Z"}},
		{name: "posix 13 FRI", expr: "0 0 13 * 5", opts: posix, after: "2024-09-01T00:00:00Z",
			want: []string{"2024-09-06T00:00:00Z", "2024-09-13T00:00:00Z", "2024-09-20T00:00:00Z"}},
		{name: "and 13 FRI is Friday the 13th", expr: "0 0 13 * 5", opts: and, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-09-13T00:00:00Z", "2024-12-13T00:00:00Z", "2025-06-13T00:00:00Z"}},
		{name: "and 1-7 MON is the first Monday", expr: "0 0 1-7 * MON", opts: and, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-02-05T00:00:00Z", "2024-03-04T00:00:00Z", "2024-04-01T00:00:00Z", "2024-05-06T00:00:00Z"}},
		{name: "posix 1-7 MON", expr: "0 0 1-7 * MON", opts: posix, after: "2024-01-07T00:00:00Z",
			want: []string{"2024-01-08T00:00:00Z", "2024-01-15T00:00:00Z", "2024-01-22T00:00:00Z", "2024-01-29T00:00:00Z", "2024-02-01T00:00:00Z"}},
		// One field a bare '*' or '?': the same under every rule.
		{name: "and with a bare star", expr: "0 0 * * 5", opts: and, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-05T00:00:00Z", "2024-01-12T00:00:00Z"}},
		{name: "posix with ?", expr: "0 0 13 * ?", opts: posix, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-13T00:00:00Z", "2024-02-13T00:00:00Z"}},
		// The Quartz dialect has '?' in one field: the rule changes nothing.
		{name: "quartz under posix", expr: "0 0 12 ? * 6#3", opts: cronx.Options{Dialect: cronx.Quartz, DomDow: cronx.DomDowPOSIX}, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-19T12:00:00Z", "2024-02-16T12:00:00Z"}},
		{name: "quartz under and", expr: "0 0 12 13 * ?", opts: cronx.Options{Dialect: cronx.Quartz, DomDow: cronx.DomDowAnd}, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-13T12:00:00Z", "2024-02-13T12:00:00Z"}},
		// L and a weekday under and: the last day, when it is a Friday.
		{name: "and L FRI", expr: "0 0 L * FRI", opts: and, after: "2024-01-01T00:00:00Z",
			want: []string{"2024-05-31T00:00:00Z", "2025-01-31T00:00:00Z"}},
	})
}

func TestParseDomDow(t *testing.T) {
	for in, want := range map[string]cronx.DomDow{"": cronx.DomDowCronie, "cronie": cronx.DomDowCronie, "posix": cronx.DomDowPOSIX, "and": cronx.DomDowAnd} {
		got, err := cronx.ParseDomDow(in)
		if err != nil || got != want {
			t.Errorf("ParseDomDow(%q) = %v, %v; want %v", in, got, err, want)
		}
		if in != "" && got.String() != in {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), in)
		}
	}
	for _, bad := range []string{"or", "POSIX", "vixie", " and"} {
		_, err := cronx.ParseDomDow(bad)
		checkParseError(t, "ParseDomDow("+bad+")", err, "dom_dow", 0, "want cronie, posix or and")
	}
}

// TestRefusedAmbiguous: forms peers read differently are refused, with a
// reason that says so, in both dialects.
func TestRefusedAmbiguous(t *testing.T) {
	tests := []struct {
		expr   string
		opts   cronx.Options
		pos    int
		reason string
	}{
		{"0 0 * * 5,6#3", cronx.Options{}, 5, "'#' in a list is ambiguous"},
		{"0 0 * * 1#1,1#3", cronx.Options{}, 5, "'#' in a list is ambiguous"},
		{"0 0 * * FRI#2,MON", cronx.Options{}, 5, "'#' in a list is ambiguous"},
		{"0 0 12 ? * 6,7#3", quartz, 6, "'#' in a list is ambiguous"},
		{"0 0 * * SAT,SUN,L", cronx.Options{}, 5, "lone 'L' in a day-of-week list is ambiguous"},
		{"0 0 * * L,1", cronx.Options{}, 5, "lone 'L' in a day-of-week list is ambiguous"},
		{"0 0 12 ? * SAT,SUN,L", quartz, 6, "lone 'L' in a day-of-week list is ambiguous"},
		{"0 0 12 ? * L,2", quartz, 6, "lone 'L' in a day-of-week list is ambiguous"},
	}
	for _, tt := range tests {
		_, err := cronx.NewCron(tt.expr, tt.opts)
		checkParseError(t, tt.expr, err, "day-of-week", tt.pos, tt.reason)
	}
	// Still accepted alone: one n#k, a lone L in Quartz, and nL in a list.
	for _, ok := range []struct {
		expr string
		opts cronx.Options
	}{{"0 0 * * 6#3", cronx.Options{}}, {"0 0 12 ? * L", quartz}, {"0 0 * * 5L,1", cronx.Options{}}} {
		if _, err := cronx.NewCron(ok.expr, ok.opts); err != nil {
			t.Errorf("NewCron(%q): %v", ok.expr, err)
		}
	}
}
