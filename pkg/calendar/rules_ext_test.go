package calendar_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/calendar"
)

// englandCalendar has England's Christmas and New Year holidays with
// cascading substitutes.
const englandCalendar = `{"zone": "Europe/London", "weekend": ["sat", "sun"], "holidays": [
	{"name": "New Year's Day", "date": "01-01", "substitute": "next_free_weekday"},
	{"name": "Christmas Day", "date": "12-25", "substitute": "next_free_weekday"},
	{"name": "Boxing Day", "date": "12-26", "substitute": "next_free_weekday"}
]}`

// japanCalendar has Japan's Golden Week, the September holidays, the 2019
// enthronement days and the citizens' holiday between two holidays.
const japanCalendar = `{"zone": "Asia/Tokyo", "weekend": ["sat", "sun"], "holidays": [
	{"name": "Vernal Equinox Day", "equinox": "march", "substitute": "next_free_weekday", "substitute_on": ["sun"]},
	{"name": "Showa Day", "date": "04-29", "substitute": "next_free_weekday", "substitute_on": ["sun"]},
	{"name": "Enthronement", "dates": ["2019-05-01", "2019-10-22"]},
	{"name": "Constitution Memorial Day", "date": "05-03", "substitute": "next_free_weekday", "substitute_on": ["sun"]},
	{"name": "Greenery Day", "date": "05-04", "substitute": "next_free_weekday", "substitute_on": ["sun"]},
	{"name": "Children's Day", "date": "05-05", "substitute": "next_free_weekday", "substitute_on": ["sun"]},
	{"name": "Respect for the Aged Day", "month": 9, "weekday": "mon", "nth": 3},
	{"name": "Autumnal Equinox Day", "equinox": "september", "substitute": "next_free_weekday", "substitute_on": ["sun"]},
	{"name": "Citizens' Holiday", "between_holidays": true}
]}`

// holidaysIn lists the holidays from day from to day to (both included) as
// "2006-01-02 Name" (with " (substitute)" for a stand-in day).
func holidaysIn(t *testing.T, c *calendar.Calendar, from, to string) []string {
	t.Helper()
	loc := c.Location()
	var out []string
	for d := local(t, loc, from); !d.After(local(t, loc, to)); d = d.AddDate(0, 0, 1) {
		if h, ok := c.Holiday(d.Add(12 * time.Hour)); ok {
			s := d.Format("2006-01-02") + " " + h.Name
			if h.Observed {
				s += " (substitute)"
			}
			out = append(out, s)
		}
	}
	return out
}

// TestSubstituteEngland: Christmas on a Saturday and Boxing Day on a
// Sunday give Monday 27 and Tuesday 28; Christmas on a Sunday and Boxing
// Day on Monday give Tuesday 27.
func TestSubstituteEngland(t *testing.T) {
	c := mustParse(t, englandCalendar)
	tests := []struct {
		year int
		want []string
	}{
		{2021, []string{"2021-12-25 Christmas Day", "2021-12-26 Boxing Day", "2021-12-27 Christmas Day (substitute)", "2021-12-28 Boxing Day (substitute)"}},
		{2022, []string{"2022-12-25 Christmas Day", "2022-12-26 Boxing Day", "2022-12-27 Christmas Day (substitute)"}},
		{2026, []string{"2026-12-25 Christmas Day", "2026-12-26 Boxing Day", "2026-12-28 Boxing Day (substitute)"}},
		{2027, []string{"2027-12-25 Christmas Day", "2027-12-26 Boxing Day", "2027-12-27 Christmas Day (substitute)", "2027-12-28 Boxing Day (substitute)"}},
		{2032, []string{"2032-12-25 Christmas Day", "2032-12-26 Boxing Day", "2032-12-27 Christmas Day (substitute)", "2032-12-28 Boxing Day (substitute)"}},
		{2033, []string{"2033-12-25 Christmas Day", "2033-12-26 Boxing Day", "2033-12-27 Christmas Day (substitute)"}},
		{2025, []string{"2025-12-25 Christmas Day", "2025-12-26 Boxing Day"}},
	}
	for _, tt := range tests {
		got := holidaysIn(t, c, fmt.Sprintf("%d-12-20", tt.year), fmt.Sprintf("%d-12-31", tt.year))
		if !slices.Equal(got, tt.want) {
			t.Errorf("%d: got %q, want %q", tt.year, got, tt.want)
		}
	}
	// New Year's Day on a Saturday (2022) and on a Sunday (2023), each
	// asked of a new calendar first in January, then for the December
	// before: the answer does not depend on the order the cache fills in.
	for _, tt := range []struct {
		from, to string
		want     []string
	}{
		{"2022-01-01", "2022-01-04", []string{"2022-01-01 New Year's Day", "2022-01-03 New Year's Day (substitute)"}},
		{"2023-01-01", "2023-01-03", []string{"2023-01-01 New Year's Day", "2023-01-02 New Year's Day (substitute)"}},
	} {
		fresh := mustParse(t, englandCalendar)
		if got := holidaysIn(t, fresh, tt.from, tt.to); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.from, got, tt.want)
		}
		y := tt.from[:4]
		if got := holidaysIn(t, fresh, y+"-12-20", y+"-12-31"); len(got) < 2 {
			t.Errorf("December %s: %q", y, got)
		}
	}
	// The day the issue asks for, as `calendar check` shows it.
	reason := c.NonWorkingReason(local(t, c.Location(), "2022-12-27 10:00"))
	if want := `holiday "Christmas Day" (fixed 12-25, substitute next_free_weekday), substitute for Sunday 2022-12-25`; reason != want {
		t.Errorf("2022-12-27: %q, want %q", reason, want)
	}
	if !c.IsBusinessDay(local(t, c.Location(), "2022-12-28 10:00")) {
		t.Error("2022-12-28 is a business day")
	}
}

// TestSubstituteJapan: Golden Week's Sunday holidays move to 05-06, past
// the other Golden Week days; a Saturday holiday has no substitute.
func TestSubstituteJapan(t *testing.T) {
	c := mustParse(t, japanCalendar)
	gw := func(y int, sub string) []string {
		out := []string{fmt.Sprintf("%d-05-03 Constitution Memorial Day", y), fmt.Sprintf("%d-05-04 Greenery Day", y), fmt.Sprintf("%d-05-05 Children's Day", y)}
		if sub != "" {
			out = append(out, fmt.Sprintf("%d-05-06 %s (substitute)", y, sub))
		}
		return out
	}
	for _, tt := range []struct {
		year int
		want []string
	}{
		{2020, gw(2020, "Constitution Memorial Day")}, // 05-03 a Sunday
		{2025, gw(2025, "Greenery Day")},              // 05-04 a Sunday
		{2026, gw(2026, "Constitution Memorial Day")}, // 05-03 a Sunday
		{2031, gw(2031, "Greenery Day")},              // 05-04 a Sunday
		{2030, gw(2030, "Children's Day")},            // 05-05 a Sunday
		{2027, gw(2027, "")},                          // Monday to Wednesday
		{2024, gw(2024, "Children's Day")},            // 05-05 a Sunday
		{2021, gw(2021, "")},                          // Monday to Wednesday
		{2032, gw(2032, "")},                          // Monday to Wednesday
	} {
		got := holidaysIn(t, c, fmt.Sprintf("%d-05-02", tt.year), fmt.Sprintf("%d-05-08", tt.year))
		if !slices.Equal(got, tt.want) {
			t.Errorf("%d: got %q, want %q", tt.year, got, tt.want)
		}
	}
	// 2021-05-01 is a Saturday: "substitute_on" is Sunday only.
	if got := holidaysIn(t, c, "2021-04-29", "2021-05-02"); !slices.Equal(got, []string{"2021-04-29 Showa Day"}) {
		t.Errorf("2021-04-29..05-02: %q", got)
	}
}

// TestSubstituteNeverCollides: a substitute never lands on another rule's
// date, on another rule's observed shift or on another substitute.
func TestSubstituteNeverCollides(t *testing.T) {
	c := mustParse(t, `{"zone": "UTC", "weekend": ["sat", "sun"], "holidays": [
		{"name": "A", "date": "12-25", "substitute": "next_free_weekday"},
		{"name": "B", "date": "12-26", "substitute": "next_free_weekday"},
		{"name": "C", "date": "12-27"},
		{"name": "D", "date": "12-29", "observed": "nearest"}
	]}`)
	// 2021: A Sat, B Sun, C Mon 27: A -> Tue 28, B -> Wed 29 is taken by D's
	// actual date -> Thu 30.
	want := []string{"2021-12-25 A", "2021-12-26 B", "2021-12-27 C", "2021-12-28 A (substitute)", "2021-12-29 D", "2021-12-30 B (substitute)"}
	if got := holidaysIn(t, c, "2021-12-24", "2021-12-31"); !slices.Equal(got, want) {
		t.Errorf("2021: got %q, want %q", got, want)
	}
	// 2026: A on a Friday has no substitute; B Sat -> Mon 28 (C's Sunday
	// has no hours).
	want = []string{"2026-12-25 A", "2026-12-26 B", "2026-12-27 C", "2026-12-28 B (substitute)", "2026-12-29 D"}
	if got := holidaysIn(t, c, "2026-12-24", "2026-12-31"); !slices.Equal(got, want) {
		t.Errorf("2026: got %q, want %q", got, want)
	}
	// An observed shift blocks a substitute too: E on Saturday 2022-01-01
	// is observed Friday 2021-12-31; F on 2021-12-26 (Sunday) skips the
	// other days up to the new year.
	c = mustParse(t, `{"zone": "UTC", "weekend": ["sat", "sun"], "holidays": [
		{"name": "E", "date": "01-01", "observed": "monday"},
		{"name": "F", "from": "12-27", "to": "12-31"},
		{"name": "G", "date": "12-26", "substitute": "next_free_weekday"}
	]}`)
	want = []string{"2021-12-26 G", "2021-12-27 F", "2021-12-28 F", "2021-12-29 F", "2021-12-30 F", "2021-12-31 F", "2022-01-01 E", "2022-01-03 E (substitute)", "2022-01-04 G (substitute)"}
	if got := holidaysIn(t, c, "2021-12-25", "2022-01-05"); !slices.Equal(got, want) {
		t.Errorf("across the new year: got %q, want %q", got, want)
	}
}

// TestRelativeRules: weekdays before, after, on or before and on or after
// a date or another rule's date.
func TestRelativeRules(t *testing.T) {
	tests := []struct {
		rule string
		want []string // the rule's dates, one a year
	}{
		// Buß- und Bettag: the Wednesday before 11-23.
		{`"weekday": "wed", "before": "11-23"`, []string{"2022-11-16", "2023-11-22", "2024-11-20", "2025-11-19", "2026-11-18"}},
		// Victoria Day: the Monday before 05-25.
		{`"weekday": "mon", "before": "05-25"`, []string{"2021-05-24", "2022-05-23", "2024-05-20", "2025-05-19", "2026-05-18"}},
		// US election day: the Tuesday after the first Monday of November.
		{`"weekday": "tue", "after": {"month": 11, "weekday": "mon", "nth": 1}`, []string{"2020-11-03", "2022-11-08", "2024-11-05", "2026-11-03", "2028-11-07"}},
		// Midsummer Day (Sweden): the Saturday on or after 06-20.
		{`"weekday": "sat", "on_or_after": "06-20"`, []string{"2020-06-20", "2025-06-21", "2026-06-20"}},
		{`"weekday": "sat", "on_or_after": {"date": "06-20"}`, []string{"2020-06-20", "2025-06-21", "2026-06-20"}},
		// The Monday on or before 05-24 is Victoria Day again.
		{`"weekday": "mon", "on_or_before": "05-24"`, []string{"2021-05-24", "2022-05-23", "2024-05-20", "2025-05-19", "2026-05-18"}},
		// Around Easter: the Thursday before Easter, the Monday after
		// Orthodox Easter (Easter 2026-04-05, Orthodox Easter 2026-04-12).
		{`"weekday": "thu", "before": {"easter": 0}`, []string{"2025-04-17", "2026-04-02"}},
		{`"weekday": "mon", "after": {"julian_easter": 0}`, []string{"2025-04-21", "2026-04-13"}},
		// Across the new year.
		{`"weekday": "mon", "after": "12-31"`, []string{"2025-01-06", "2026-01-05", "2027-01-04"}},
	}
	for _, tt := range tests {
		c := ruleCalendar(t, tt.rule)
		for _, day := range tt.want {
			y := day[:4]
			got := holidaysIn(t, c, y+"-01-01", y+"-12-31")
			if !slices.Equal(got, []string{day + " H"}) {
				t.Errorf("{%s} in %s: got %q, want %s", tt.rule, y, got, day)
			}
		}
	}
}

// TestOrthodoxEaster: "julian_easter" counts from Orthodox Easter Sunday.
func TestOrthodoxEaster(t *testing.T) {
	c := ruleCalendar(t, `"julian_easter": 0`)
	for _, day := range []string{"2020-04-19", "2021-05-02", "2022-04-24", "2023-04-16", "2024-05-05", "2025-04-20", "2026-04-12", "2027-05-02"} {
		y := day[:4]
		if got := holidaysIn(t, c, y+"-01-01", y+"-12-31"); !slices.Equal(got, []string{day + " H"}) {
			t.Errorf("%s: got %q, want %s", y, got, day)
		}
	}
	// Orthodox Good Friday and Easter Monday 2024.
	for rule, day := range map[string]string{`"julian_easter": -2`: "2024-05-03", `"julian_easter": 1`: "2024-05-06"} {
		if got := holidaysIn(t, ruleCalendar(t, rule), "2024-01-01", "2024-12-31"); !slices.Equal(got, []string{day + " H"}) {
			t.Errorf("{%s}: got %q, want %s", rule, got, day)
		}
	}
}

// TestEquinoxJapan: the equinox days in Tokyo from 2000 to 2040, as the
// National Astronomical Observatory of Japan publishes them (Vernal and
// Autumnal Equinox Day).
func TestEquinoxJapan(t *testing.T) {
	vernal21 := []int{2002, 2003, 2006, 2007, 2010, 2011, 2014, 2015, 2018, 2019, 2022, 2023, 2027, 2031, 2035, 2039}
	autumnal22 := []int{2012, 2016, 2020, 2024, 2028, 2032, 2036, 2040}
	tokyo := `{"zone": "Asia/Tokyo", "holidays": [{"name": "H", "equinox": "%s"}]}`
	march, september := mustParse(t, fmt.Sprintf(tokyo, "march")), mustParse(t, fmt.Sprintf(tokyo, "september"))
	for y := 2000; y <= 2040; y++ {
		wantM, wantS := fmt.Sprintf("%d-03-20 H", y), fmt.Sprintf("%d-09-23 H", y)
		if slices.Contains(vernal21, y) {
			wantM = fmt.Sprintf("%d-03-21 H", y)
		}
		if slices.Contains(autumnal22, y) {
			wantS = fmt.Sprintf("%d-09-22 H", y)
		}
		if got := holidaysIn(t, march, fmt.Sprintf("%d-03-01", y), fmt.Sprintf("%d-03-31", y)); !slices.Equal(got, []string{wantM}) {
			t.Errorf("March %d: got %q, want %s", y, got, wantM)
		}
		if got := holidaysIn(t, september, fmt.Sprintf("%d-09-01", y), fmt.Sprintf("%d-09-30", y)); !slices.Equal(got, []string{wantS}) {
			t.Errorf("September %d: got %q, want %s", y, got, wantS)
		}
	}
	// The day depends on the zone: the September 2024 equinox is at 12:44
	// UTC, 22 September in Tokyo but 23 September in Auckland.
	nz := mustParse(t, `{"zone": "Pacific/Auckland", "holidays": [{"name": "H", "equinox": "september"}]}`)
	if got := holidaysIn(t, nz, "2024-09-01", "2024-09-30"); !slices.Equal(got, []string{"2024-09-23 H"}) {
		t.Errorf("Auckland 2024: %q", got)
	}
}

// TestBetweenHolidays: Japan's citizens' holiday, a day between two
// holidays, including the 2019 enthronement days; not on a day that is a
// holiday or a substitute already.
func TestBetweenHolidays(t *testing.T) {
	c := mustParse(t, japanCalendar)
	for _, day := range []string{"2009-09-22", "2015-09-22", "2026-09-22", "2032-09-21", "2037-09-22", "2019-04-30", "2019-05-02"} {
		h, ok := c.Holiday(local(t, c.Location(), day+" 12:00"))
		if !ok || h.Name != "Citizens' Holiday" || h.Observed || h.Rule != "a day between two holidays" {
			t.Errorf("%s: %+v %v", day, h, ok)
		}
	}
	// 2020: Respect for the Aged Day on 09-21 and the equinox on 09-22
	// touch; 2019-10-21 and 10-23 are not holidays.
	for _, tt := range []struct{ from, to string }{{"2020-09-20", "2020-09-24"}, {"2019-10-20", "2019-10-24"}, {"2025-09-14", "2025-09-24"}} {
		for _, h := range holidaysIn(t, c, tt.from, tt.to) {
			if strings.Contains(h, "Citizens'") {
				t.Errorf("%s..%s: %s", tt.from, tt.to, h)
			}
		}
	}
	// 2019's whole Golden Week, ten days off.
	want := []string{"2019-04-29 Showa Day", "2019-04-30 Citizens' Holiday", "2019-05-01 Enthronement", "2019-05-02 Citizens' Holiday",
		"2019-05-03 Constitution Memorial Day", "2019-05-04 Greenery Day", "2019-05-05 Children's Day", "2019-05-06 Children's Day (substitute)"}
	if got := holidaysIn(t, c, "2019-04-27", "2019-05-07"); !slices.Equal(got, want) {
		t.Errorf("2019: got %q\nwant %q", got, want)
	}
	// "years" limits a bridge rule.
	limited := mustParse(t, `{"zone": "UTC", "holidays": [{"name": "A", "date": "05-01"}, {"name": "B", "date": "05-03"},
		{"name": "Bridge", "between_holidays": true, "years": [2030, 2030]}]}`)
	if got := holidaysIn(t, limited, "2029-05-01", "2029-05-03"); len(got) != 2 {
		t.Errorf("2029: %q", got)
	}
	if got := holidaysIn(t, limited, "2030-05-01", "2030-05-03"); len(got) != 3 {
		t.Errorf("2030: %q", got)
	}
}

// halfDayCalendar closes early on Christmas Eve (and on a DST day).
const halfDayCalendar = `{"zone": "America/New_York", "hours": {"mon-fri": ["09:30-16:00"], "sun": ["09:00-17:00"]}, "holidays": [
	{"name": "Christmas Eve", "date": "12-24", "hours": ["09:30-13:00"]},
	{"name": "Christmas Day", "date": "12-25"},
	{"name": "DST day", "dates": ["2026-03-08"], "hours": ["00:00-04:00"]},
	{"name": "Closed anyway", "date": "12-25", "hours": ["10:00-11:00"]}
]}`

// TestHalfDays: a half day is a business day with its own hours; on a
// weekend or a holiday it stays closed.
func TestHalfDays(t *testing.T) {
	c := mustParse(t, halfDayCalendar)
	ny := c.Location()
	at := func(s string) time.Time { return local(t, ny, s) }
	for _, tt := range []struct {
		at       string
		business bool
		working  bool
	}{
		{"2026-12-24 09:30", true, true},
		{"2026-12-24 12:59", true, true},
		{"2026-12-24 13:00", true, false},
		{"2026-12-24 15:00", true, false},
		{"2026-12-23 15:00", true, true},
		{"2026-12-25 10:30", false, false}, // the holiday wins
		{"2022-12-24 10:00", false, false}, // a Saturday stays closed
		{"2026-03-08 03:30", true, true},   // a Sunday with hours: the half day's
		{"2026-03-08 09:30", true, false},
	} {
		if got := c.IsBusinessDay(at(tt.at)); got != tt.business {
			t.Errorf("IsBusinessDay(%s) = %v", tt.at, got)
		}
		if got := c.IsWorkingTime(at(tt.at)); got != tt.working {
			t.Errorf("IsWorkingTime(%s) = %v", tt.at, got)
		}
	}
	if h, ok := c.Holiday(at("2026-12-24 10:00")); ok {
		t.Errorf("a half day is no holiday: %+v", h)
	}
	if h, ok := c.HalfDay(at("2026-12-24 23:00")); !ok || h.Name != "Christmas Eve" || h.Rule != "fixed 12-24, half day 09:30-13:00" || !h.Date.Equal(at("2026-12-24")) {
		t.Errorf("HalfDay(2026-12-24) = %+v, %v", h, ok)
	}
	for _, day := range []string{"2026-12-23", "2026-12-25", "2022-12-24"} { // a plain day, a holiday, a Saturday
		if h, ok := c.HalfDay(at(day + " 10:00")); ok {
			t.Errorf("HalfDay(%s) = %+v", day, h)
		}
	}
	add := func(from string, d time.Duration) string {
		r, err := c.AddWorkingContext(t.Context(), at(from), d)
		if err != nil {
			t.Fatalf("AddWorking(%s, %s): %v", from, d, err)
		}
		return r.Format("2006-01-02 15:04 MST")
	}
	for _, tt := range []struct {
		from string
		d    time.Duration
		want string
	}{
		{"2026-12-23 15:00", 4 * time.Hour, "2026-12-24 12:30 EST"},
		{"2026-12-23 15:00", 4*time.Hour + 30*time.Minute, "2026-12-24 13:00 EST"},
		{"2026-12-23 15:00", 5 * time.Hour, "2026-12-27 09:30 EST"},   // Sunday's hours, after the holiday
		{"2026-12-24 13:00", time.Hour, "2026-12-27 10:00 EST"},       // nothing left on the half day
		{"2026-12-01 09:30", 137 * time.Hour, "2026-12-24 12:00 EST"}, // 17 weekdays, 3 Sundays, 2.5h: a jump
		{"2026-03-08 00:00", 3 * time.Hour, "2026-03-08 04:00 EDT"},   // 02:00-03:00 does not exist
		{"2026-03-08 00:00", 4 * time.Hour, "2026-03-09 10:30 EDT"},
		{"2026-03-07 23:00", 3 * time.Hour, "2026-03-08 04:00 EDT"},
	} {
		if got := add(tt.from, tt.d); got != tt.want {
			t.Errorf("AddWorking(%s, %s) = %s, want %s", tt.from, tt.d, got, tt.want)
		}
	}
	// The explanation shows the half day's hours.
	_, ex, err := c.AddWorkingExplainContext(t.Context(), at("2026-12-24 09:00"), 4*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var used []string
	for _, iv := range ex.Intervals {
		used = append(used, iv.Start.Format("01-02 15:04")+"/"+iv.End.Format("15:04"))
	}
	if want := []string{"12-24 09:30/13:00", "12-27 09:00/09:30"}; !slices.Equal(used, want) {
		t.Errorf("intervals %q, want %q", used, want)
	}
	// A working-day count counts a half day.
	r, err := c.AddWorkingDaysContext(t.Context(), at("2026-12-23 10:00"), 1)
	if err != nil || r.Format("2006-01-02") != "2026-12-24" {
		t.Errorf("AddWorkingDays: %s %v", r, err)
	}
}

// TestExtendedRuleDescriptions checks Holiday.Rule and the reasons for
// the later rule kinds.
func TestExtendedRuleDescriptions(t *testing.T) {
	for _, tt := range []struct{ rule, day, want string }{
		{`"julian_easter": 0`, "2026-04-12", "Orthodox Easter Sunday"},
		{`"julian_easter": -2`, "2026-04-10", "Orthodox Easter Sunday -2 days"},
		{`"equinox": "march"`, "2026-03-20", "March equinox"},
		{`"equinox": "september", "observed": "monday"`, "2026-09-23", "September equinox, observed monday"},
		{`"weekday": "wed", "before": "11-23"`, "2026-11-18", "Wednesday before 11-23"},
		{`"weekday": "tue", "after": {"month": 11, "weekday": "mon", "nth": 1}`, "2026-11-03", "Tuesday after 1st Monday of November"},
		{`"weekday": "mon", "on_or_before": {"easter": 1}`, "2026-04-06", "Monday on or before Easter Sunday +1 day"},
		{`"weekday": "sat", "on_or_after": {"julian_easter": -7}, "years": [2026, 2026]`, "2026-04-11", "Saturday on or after Orthodox Easter Sunday -7 days, in 2026"},
		{`"date": "12-25", "substitute": "next_free_weekday"`, "2026-12-25", "fixed 12-25, substitute next_free_weekday"},
		{`"date": "12-25", "substitute": "next_free_weekday", "substitute_on": ["sat-sun"]`, "2026-12-25", "fixed 12-25, substitute next_free_weekday for sat, sun"},
	} {
		c := ruleCalendar(t, tt.rule)
		h, ok := c.Holiday(local(t, c.Location(), tt.day+" 12:00"))
		if !ok || h.Rule != tt.want {
			t.Errorf("{%s} on %s: %q %v, want %q", tt.rule, tt.day, h.Rule, ok, tt.want)
		}
	}
	// A half day's rule shows in the explanation of a count that passes
	// over no day, and in the canonical form (see TestExtendedCanonical).
	c := mustParse(t, japanCalendar)
	_, ex, err := c.AddWorkingDaysExplainContext(t.Context(), local(t, c.Location(), "2026-05-01 10:00"), 1)
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, s := range ex.Skipped {
		reasons = append(reasons, s.Date.Format("01-02")+" "+s.Reason)
	}
	want := []string{
		"05-02 no working hours on Saturday",
		`05-03 holiday "Constitution Memorial Day" (fixed 05-03, substitute next_free_weekday for sun)`,
		`05-04 holiday "Greenery Day" (fixed 05-04, substitute next_free_weekday for sun)`,
		`05-05 holiday "Children's Day" (fixed 05-05, substitute next_free_weekday for sun)`,
		`05-06 holiday "Constitution Memorial Day" (fixed 05-03, substitute next_free_weekday for sun), substitute for Sunday 2026-05-03`,
	}
	if !slices.Equal(reasons, want) {
		t.Errorf("skipped:\n%s\nwant:\n%s", strings.Join(reasons, "\n"), strings.Join(want, "\n"))
	}
}

// TestShiftsOfNewKinds: "observed" and "substitute" on the later
// single-date kinds and on Easter.
func TestShiftsOfNewKinds(t *testing.T) {
	const weekend = `{"zone": "Europe/Berlin", "weekend": ["sat", "sun"], "holidays": [{"name": "H", %s}]}`
	for _, tt := range []struct {
		rule, from, to string
		want           []string
	}{
		// Midsummer's Saturday observed on Monday.
		{`"weekday": "sat", "on_or_after": "06-20", "observed": "monday"`, "2026-06-19", "2026-06-23", []string{"2026-06-20 H", "2026-06-22 H (substitute)"}},
		// Easter Sunday's substitute is Monday; Orthodox Easter's too.
		{`"easter": 0, "substitute": "next_free_weekday"`, "2026-04-04", "2026-04-07", []string{"2026-04-05 H", "2026-04-06 H (substitute)"}},
		{`"julian_easter": 0, "substitute": "next_free_weekday"`, "2026-04-11", "2026-04-14", []string{"2026-04-12 H", "2026-04-13 H (substitute)"}},
		// The March 2027 equinox (20:25 UTC) is on Saturday 03-20 in Berlin:
		// its substitute is the Monday.
		{`"equinox": "march", "substitute": "next_free_weekday"`, "2027-03-19", "2027-03-23", []string{"2027-03-20 H", "2027-03-22 H (substitute)"}},
		// A substitute only for Sundays: a Saturday rule keeps none.
		{`"weekday": "sat", "after": "12-24", "substitute": "next_free_weekday", "substitute_on": ["sun"]`, "2026-12-24", "2026-12-31", []string{"2026-12-26 H"}},
		// The Sunday before 12-25 (the fourth Sunday of Advent), with a
		// substitute on the Monday.
		{`"weekday": "sun", "before": "12-25", "substitute": "next_free_weekday"`, "2026-12-19", "2026-12-23", []string{"2026-12-20 H", "2026-12-21 H (substitute)"}},
	} {
		c := mustParse(t, fmt.Sprintf(weekend, tt.rule))
		if got := holidaysIn(t, c, tt.from, tt.to); !slices.Equal(got, tt.want) {
			t.Errorf("{%s}: got %q, want %q", tt.rule, got, tt.want)
		}
	}
}
