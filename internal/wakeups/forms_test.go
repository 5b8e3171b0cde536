package wakeups_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
)

// formsZone loads an IANA zone; tests never use the machine's zone.
func formsZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := cronx.LoadZone(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// formsCalendar parses a calendar's JSON form.
func formsCalendar(t testing.TB, js string) *calendar.Calendar {
	t.Helper()
	c, err := calendar.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// formsParse parses a form that must be valid.
func formsParse(t testing.TB, text string) wakeups.Form {
	t.Helper()
	f, err := wakeups.ParseWhen(text)
	if err != nil {
		t.Fatalf("ParseWhen(%q): %v", text, err)
	}
	return f
}

// formsDue is ParseWhen and Due, which must both succeed.
func formsDue(t testing.TB, text string, now time.Time, loc *time.Location, cal *calendar.Calendar) time.Time {
	t.Helper()
	due, err := formsParse(t, text).Due(now, loc, cal)
	if err != nil {
		t.Fatalf("%q.Due(%v): %v", text, now, err)
	}
	return due
}

// formsCheck compares a due time with the wanted instant and location.
func formsCheck(t testing.TB, text string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) || got.Location() != want.Location() {
		t.Errorf("%q: due %v, want %v", text, got, want)
	}
}

func TestFormParseKinds(t *testing.T) {
	for _, c := range []struct{ text, kind, canonical string }{
		{"3600000", wakeups.KindInterval, "1h"},
		{"1", wakeups.KindInterval, "1ms"},
		{"1 d 3 h", wakeups.KindInterval, "1d3h"},
		{"90m", wakeups.KindInterval, "1h30m"},
		{"1h30m", wakeups.KindInterval, "1h30m"},
		{"2d", wakeups.KindInterval, "2d"},
		{"1h 30m 10s", wakeups.KindInterval, "1h30m10s"},
		{"500ms", wakeups.KindInterval, "500ms"},
		{"  500 MS  ", wakeups.KindInterval, "500ms"},
		{"1.5h", wakeups.KindInterval, "1h30m"},
		{"1h2m3.5s", wakeups.KindInterval, "1h2m3s500ms"},
		{"1.5us", wakeups.KindInterval, "1us500ns"},
		{"2µs", wakeups.KindInterval, "2us"},
		{"+10s", wakeups.KindInterval, "10s"},
		{"+1500", wakeups.KindInterval, "1s500ms"},
		{"36525d", wakeups.KindInterval, "36525d"},
		// The duration grammar of schedules' every (issue 13, item 2).
		{"2 hours", wakeups.KindInterval, "2h"},
		{"1 day 3 hours", wakeups.KindInterval, "1d3h"},
		{"90 minutes", wakeups.KindInterval, "1h30m"},
		{"1d12h", wakeups.KindInterval, "1d12h"},
		{"1 Hour 30 Mins", wakeups.KindInterval, "1h30m"},
		{"02:00", wakeups.KindTimeOfDay, "02:00"},
		{"2:00", wakeups.KindTimeOfDay, "02:00"},
		{"14:30:15", wakeups.KindTimeOfDay, "14:30:15"},
		{"14:30:00", wakeups.KindTimeOfDay, "14:30"},
		{"2026-12-31", wakeups.KindDate, "2026-12-31"},
		{"2028-02-29", wakeups.KindDate, "2028-02-29"},
		{"2026-12-31 23:59", wakeups.KindDateTime, "2026-12-31 23:59"},
		{"2026-12-31T23:59:30", wakeups.KindDateTime, "2026-12-31 23:59:30"},
		{"2026-12-31  23:59:30.250", wakeups.KindDateTime, "2026-12-31 23:59:30.25"},
		{"2026-12-31T23:59:00Z", wakeups.KindInstant, "2026-12-31T23:59:00Z"},
		{"2026-12-31 23:59:00z", wakeups.KindInstant, "2026-12-31T23:59:00Z"},
		{"2026-12-31T23:59:00+01:00", wakeups.KindInstant, "2026-12-31T22:59:00Z"},
		{"2026-12-31T20:00:00.5-05:30", wakeups.KindInstant, "2027-01-01T01:30:00.5Z"},
		{"2026-12-31T23:59Z", wakeups.KindInstant, "2026-12-31T23:59:00Z"},
		{"48 whours", wakeups.KindWorking, "48 whours"},
		{"48whours", wakeups.KindWorking, "48 whours"},
		{"1 whour", wakeups.KindWorking, "1 whour"},
		{"1.5 whours", wakeups.KindWorking, "1.5 whours"},
		{"0.25whour", wakeups.KindWorking, "0.25 whours"},
		{"2.000 whours", wakeups.KindWorking, "2 whours"},
		{"90 wminutes", wakeups.KindWorking, "90 wminutes"},
		{"1 wminute", wakeups.KindWorking, "1 wminute"},
		{"3 wdays", wakeups.KindWorking, "3 wdays"},
		{"0 wdays", wakeups.KindWorking, "0 wdays"},
		{"0whours", wakeups.KindWorking, "0 whours"},
		{"1 wday", wakeups.KindWorking, "1 wday"},
		{"1 wmonth", wakeups.KindWorking, "1 wmonth"},
		{"2 wmonths", wakeups.KindWorking, "2 wmonths"},
		{"1 WYEAR", wakeups.KindWorking, "1 wyear"},
		{"2 wyears", wakeups.KindWorking, "2 wyears"},
	} {
		f, err := wakeups.ParseWhen(c.text)
		if err != nil {
			t.Errorf("ParseWhen(%q): %v", c.text, err)
			continue
		}
		if f.Kind != c.kind || f.String() != c.canonical || f.Text != strings.TrimSpace(c.text) {
			t.Errorf("ParseWhen(%q) = kind %q, String %q, Text %q; want %q, %q", c.text, f.Kind, f.String(), f.Text, c.kind, c.canonical)
		}
		// The canonical text parses to an equal form.
		g := formsParse(t, f.String())
		g.Text = f.Text
		if g != f {
			t.Errorf("ParseWhen(%q) != ParseWhen(%q)", f.String(), c.text)
		}
	}
}

func TestFormIsRelative(t *testing.T) {
	for text, want := range map[string]bool{
		"90m": true, "3600000": true, "02:00": true, "3 wdays": true, "48 whours": true,
		"2026-12-31": false, "2026-12-31 23:59": false, "2026-12-31T23:59:00Z": false,
	} {
		if got := formsParse(t, text).IsRelative(); got != want {
			t.Errorf("%q.IsRelative() = %v, want %v", text, got, want)
		}
	}
	if (wakeups.Form{}).IsRelative() {
		t.Error("the zero Form is relative")
	}
}

func TestFormDueInterval(t *testing.T) {
	berlin := formsZone(t, "Europe/Berlin")
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, berlin)
	for text, d := range map[string]time.Duration{
		"3600000":    time.Hour,
		"1 d 3 h":    27 * time.Hour,
		"90m":        90 * time.Minute,
		"1h30m":      90 * time.Minute,
		"2d":         48 * time.Hour,
		"1h 30m 10s": time.Hour + 30*time.Minute + 10*time.Second,
		"500ms":      500 * time.Millisecond,
		"1.5h":       90 * time.Minute,
	} {
		formsCheck(t, text, formsDue(t, text, now, berlin, nil), now.Add(d).UTC())
	}
}

// Intervals are elapsed time: across the spring-forward night 24 hours
// end an hour later on the wall clock.
func TestFormDueIntervalAcrossDST(t *testing.T) {
	ny := formsZone(t, "America/New_York")
	now := time.Date(2026, 3, 7, 12, 0, 0, 0, ny) // EST
	for _, text := range []string{"24h", "1d", "86400000"} {
		got := formsDue(t, text, now, ny, nil)
		formsCheck(t, text, got, time.Date(2026, 3, 8, 17, 0, 0, 0, time.UTC))
		if w := got.In(ny); w.Hour() != 13 || w.Format("MST") != "EDT" {
			t.Errorf("%q: due %v in New York, want 13:00 EDT", text, w)
		}
	}
	// And across the fall-back night, an hour earlier.
	now = time.Date(2026, 10, 31, 12, 0, 0, 0, ny) // EDT
	formsCheck(t, "24h", formsDue(t, "24h", now, ny, nil), time.Date(2026, 11, 1, 11, 0, 0, 0, ny).UTC())
}

func TestFormDueTimeOfDay(t *testing.T) {
	tokyo := formsZone(t, "Asia/Tokyo")
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, tokyo)
	for _, c := range []struct {
		text string
		want time.Time
	}{
		{"14:30:15", time.Date(2026, 5, 4, 14, 30, 15, 0, tokyo)}, // still ahead today
		{"10:00:01", time.Date(2026, 5, 4, 10, 0, 1, 0, tokyo)},
		{"02:00", time.Date(2026, 5, 5, 2, 0, 0, 0, tokyo)},  // passed: tomorrow
		{"10:00", time.Date(2026, 5, 5, 10, 0, 0, 0, tokyo)}, // now is not ahead
		{"00:00", time.Date(2026, 5, 5, 0, 0, 0, 0, tokyo)},
		{"23:59:59", time.Date(2026, 5, 4, 23, 59, 59, 0, tokyo)},
	} {
		formsCheck(t, c.text, formsDue(t, c.text, now, tokyo, nil), c.want)
	}
	// now given in another zone: "today" is the zone's date.
	utcNow := time.Date(2026, 5, 4, 20, 0, 0, 0, time.UTC) // 05:00 on 5 May in Tokyo
	formsCheck(t, "02:00", formsDue(t, "02:00", utcNow, tokyo, nil), time.Date(2026, 5, 6, 2, 0, 0, 0, tokyo))
	formsCheck(t, "06:00", formsDue(t, "06:00", utcNow, tokyo, nil), time.Date(2026, 5, 5, 6, 0, 0, 0, tokyo))
	// loc nil means UTC.
	formsCheck(t, "21:00", formsDue(t, "21:00", utcNow, nil, nil), time.Date(2026, 5, 4, 21, 0, 0, 0, time.UTC))
}

func TestFormDueTimeOfDayDST(t *testing.T) {
	ny := formsZone(t, "America/New_York")
	edt, est := time.FixedZone("EDT", -4*3600), time.FixedZone("EST", -5*3600)
	for _, c := range []struct {
		name string
		text string
		now  time.Time
		want time.Time
	}{
		// 2026-03-08: 02:00 EST jumps to 03:00 EDT; 02:30 does not exist.
		{"gap", "02:30", time.Date(2026, 3, 8, 0, 30, 0, 0, ny), time.Date(2026, 3, 8, 3, 0, 0, 0, edt)},
		{"gap, from the day before", "02:30", time.Date(2026, 3, 7, 22, 0, 0, 0, ny), time.Date(2026, 3, 8, 3, 0, 0, 0, edt)},
		{"gap passed", "02:30", time.Date(2026, 3, 8, 3, 10, 0, 0, ny), time.Date(2026, 3, 9, 2, 30, 0, 0, edt)},
		{"after the gap", "03:30", time.Date(2026, 3, 8, 0, 30, 0, 0, ny), time.Date(2026, 3, 8, 3, 30, 0, 0, edt)},
		// 2026-11-01: 02:00 EDT falls back to 01:00 EST; 01:30 happens twice.
		{"overlap", "01:30", time.Date(2026, 11, 1, 0, 10, 0, 0, ny), time.Date(2026, 11, 1, 1, 30, 0, 0, edt)},
		{"after the overlap", "02:30", time.Date(2026, 11, 1, 0, 10, 0, 0, ny), time.Date(2026, 11, 1, 2, 30, 0, 0, est)},
		{"first 01:30 passed", "01:30", time.Date(2026, 11, 1, 1, 45, 0, 0, edt), time.Date(2026, 11, 2, 1, 30, 0, 0, est)},
	} {
		got := formsDue(t, c.text, c.now, ny, nil)
		if !got.Equal(c.want) || got.Location() != ny {
			t.Errorf("%s: %q from %v: due %v, want %v", c.name, c.text, c.now, got, c.want.In(ny))
		}
	}
}

func TestFormDueDate(t *testing.T) {
	berlin := formsZone(t, "Europe/Berlin")
	santiago := formsZone(t, "America/Santiago")
	ny := formsZone(t, "America/New_York")
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	formsCheck(t, "2026-12-31", formsDue(t, "2026-12-31", now, berlin, nil), time.Date(2026, 12, 31, 0, 0, 0, 0, berlin))
	formsCheck(t, "2026-12-31", formsDue(t, "2026-12-31", now, nil, nil), time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC))
	// Santiago springs forward at midnight: 2026-09-06 00:00 -04 is 01:00 -03.
	got := formsDue(t, "2026-09-06", now, santiago, nil)
	formsCheck(t, "2026-09-06", got, time.Date(2026, 9, 6, 4, 0, 0, 0, time.UTC).In(santiago))
	if got.Format("15:04 -07") != "01:00 -03" {
		t.Errorf("2026-09-06 in Santiago: %s, want 01:00 -03", got.Format("15:04 -07"))
	}
	// The date of today is due at its midnight, which is past: an error
	// (see TestFormDueErrors); a date equal to now is not past.
	midnight := time.Date(2026, 5, 4, 0, 0, 0, 0, ny)
	formsCheck(t, "2026-05-04", formsDue(t, "2026-05-04", midnight, ny, nil), midnight)
}

func TestFormDueDateTime(t *testing.T) {
	ny := formsZone(t, "America/New_York")
	edt := time.FixedZone("EDT", -4*3600)
	now := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		text string
		want time.Time
	}{
		{"2026-12-31 23:59", time.Date(2026, 12, 31, 23, 59, 0, 0, ny)},
		{"2026-12-31T23:59:30", time.Date(2026, 12, 31, 23, 59, 30, 0, ny)},
		{"2026-12-31 23:59:30.25", time.Date(2026, 12, 31, 23, 59, 30, 250_000_000, ny)},
		{"2026-03-08 02:30", time.Date(2026, 3, 8, 3, 0, 0, 0, edt)},   // in the gap: when it ends
		{"2026-11-01 01:30", time.Date(2026, 11, 1, 1, 30, 0, 0, edt)}, // in the overlap: the first
	} {
		got := formsDue(t, c.text, now, ny, nil)
		if !got.Equal(c.want) || got.Location() != ny {
			t.Errorf("%q: due %v, want %v", c.text, got, c.want.In(ny))
		}
	}
}

func TestFormDueInstant(t *testing.T) {
	ny := formsZone(t, "America/New_York")
	now := time.Date(2026, 1, 2, 10, 0, 0, 0, ny)
	for text, want := range map[string]time.Time{
		"2026-12-31T23:59:00Z":      time.Date(2026, 12, 31, 23, 59, 0, 0, time.UTC),
		"2026-12-31T23:59:00+01:00": time.Date(2026, 12, 31, 22, 59, 0, 0, time.UTC),
		"2026-12-31 18:00:00-05:00": time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC),
	} {
		formsCheck(t, text, formsDue(t, text, now, ny, nil), want) // the zone is ignored
	}
}

// The seed's example: "48 working hours from Friday 17:00" depends on
// the calendar.
func TestFormDueWorking(t *testing.T) {
	ny := formsZone(t, "America/New_York")
	fullDays := formsCalendar(t, `{"zone":"America/New_York","hours":{"mon-fri":["00:00-24:00"]}}`)
	standard := formsCalendar(t, `{"zone":"America/New_York"}`) // Monday to Friday, 09:00-18:00
	withHoliday := formsCalendar(t, `{"zone":"America/New_York","hours":{"mon-fri":["00:00-24:00"]},
		"holidays":[{"name":"Company day","dates":["2026-01-12"]},
			{"name":"Martin Luther King Jr. Day","month":1,"weekday":"mon","nth":3}]}`)
	friday := time.Date(2026, 1, 9, 17, 0, 0, 0, ny)
	for _, c := range []struct {
		name string
		text string
		now  time.Time
		cal  *calendar.Calendar
		want time.Time
	}{
		{"seed, full weekdays", "48 whours", friday, fullDays, time.Date(2026, 1, 13, 17, 0, 0, 0, ny)},
		{"seed, no space", "48whours", friday, fullDays, time.Date(2026, 1, 13, 17, 0, 0, 0, ny)},
		{"seed, default calendar", "48 whours", friday, standard, time.Date(2026, 1, 19, 11, 0, 0, 0, ny)},
		{"holiday in the span", "48 whours", friday, withHoliday, time.Date(2026, 1, 14, 17, 0, 0, 0, ny)},
		{"decimal whours", "1.5 whours", friday, standard, time.Date(2026, 1, 12, 9, 30, 0, 0, ny)},
		{"wminutes", "90 wminutes", friday, standard, time.Date(2026, 1, 12, 9, 30, 0, 0, ny)},
		{"wminutes inside a day", "30 wminutes", friday, standard, time.Date(2026, 1, 9, 17, 30, 0, 0, ny)},
		{"wdays", "3 wdays", friday, standard, time.Date(2026, 1, 14, 17, 0, 0, 0, ny)},
		{"wdays over holidays", "3 wdays", friday, withHoliday, time.Date(2026, 1, 15, 17, 0, 0, 0, ny)},
		{"wdays over MLK day", "2 wdays", time.Date(2026, 1, 15, 10, 0, 0, 0, ny), withHoliday, time.Date(2026, 1, 20, 10, 0, 0, 0, ny)},
		// Zero rolls only: Friday 18:30 is after hours (to Monday 09:00),
		// 17:00 is working time (kept), so is a working day for wdays; a
		// Saturday moves to Monday.
		{"0 whours rolls to the next working start", "0 whours", time.Date(2026, 1, 9, 18, 30, 0, 0, ny), standard, time.Date(2026, 1, 12, 9, 0, 0, 0, ny)},
		{"0 whours keeps working time", "0 whours", friday, standard, friday},
		{"0 wdays keeps a working day", "0 wdays", friday, standard, friday},
		{"0 wdays rolls a Saturday", "0 wdays", time.Date(2026, 1, 10, 11, 0, 0, 0, ny), standard, time.Date(2026, 1, 12, 11, 0, 0, 0, ny)},
		{"wmonth", "1 wmonth", friday, standard, time.Date(2026, 2, 9, 17, 0, 0, 0, ny)},
		{"wmonth rolled over MLK day", "1 wmonth", time.Date(2025, 12, 19, 9, 0, 0, 0, ny), withHoliday, time.Date(2026, 1, 20, 9, 0, 0, 0, ny)},
		{"wmonths clamped", "1 wmonth", time.Date(2026, 1, 30, 9, 0, 0, 0, ny), standard, time.Date(2026, 3, 2, 9, 0, 0, 0, ny)},
		{"wyears", "2 wyears", friday, standard, time.Date(2028, 1, 10, 17, 0, 0, 0, ny)},
		{"wyear", "1 wyear", friday, standard, time.Date(2027, 1, 11, 17, 0, 0, 0, ny)},
	} {
		got := formsDue(t, c.text, c.now, ny, c.cal)
		if !got.Equal(c.want) || got.Location() != ny {
			t.Errorf("%s: %q from %v: due %v, want %v", c.name, c.text, c.now, got, c.want)
		}
	}
	// The result is in loc; the arithmetic in the calendar's zone.
	got := formsDue(t, "48 whours", friday, nil, fullDays)
	formsCheck(t, "48 whours", got, time.Date(2026, 1, 13, 22, 0, 0, 0, time.UTC))
}

func TestFormParseErrors(t *testing.T) {
	for _, c := range []struct{ text, reason string }{
		{"", "empty"},
		{"   ", "empty"},
		{"0", "interval must be positive"},
		{"0s", "interval must be positive"},
		{"0h 0m", "interval must be positive"},
		{"0.1ns", "interval must be positive"},
		{"-5m", "interval must be positive"},
		{"- 5m", "interval must be positive"},
		{"-3600000", "interval must be positive"},
		{"1 x", `unknown unit "x" (want d, h, m, s, ms or days, hours, minutes, seconds; whours, wdays, wmonths, wyears)`},
		{"1 X", `unknown unit "X" (want d, h`},
		{"5 fortnights", `unknown unit "fortnights"`},
		{"1h 30", `missing unit after "30"`},
		{"1h x", `expected a number at "x"`},
		{". h", `expected a number at ". h"`},
		{"tomorrow", "unrecognized form"},
		{"+", "unrecognized form"},
		{"36526d", "interval longer than 100 years"},
		{"36525d 1ns", "interval longer than 100 years"},
		{"99999999999999999999", "out of range"},
		{"3155760000001", "interval longer than 100 years"},
		{"99999999999999999999h", "out of range"},
		{"25:00", "hour 25 out of range 0-23"},
		{"24:00", "hour 24 out of range 0-23"},
		{"12:60", "minute 60 out of range 0-59"},
		{"12:00:60", "second 60 out of range 0-59"},
		{"1:2", "want a time of day HH:MM or HH:MM:SS"},
		{"123:00", "want a time of day HH:MM or HH:MM:SS"},
		{"12:00:00.5", "want a time of day HH:MM or HH:MM:SS"},
		{"12:00 pm", "want a time of day HH:MM or HH:MM:SS"},
		{"2026-02-30", "day 30 out of range for February 2026"},
		{"2027-02-29", "day 29 out of range for February 2027"},
		{"2026-13-01", "month 13 out of range 1-12"},
		{"0000-01-01", "year 0 out of range 1-9999"},
		{"2026-1-5", "want a date"},
		{"2026-12-31X", "want a date"},
		{"2026-12-31T", "want a date"},
		{"2026-12-31 25:00", "hour 25 out of range 0-23"},
		{"2026-12-31T23:59:00+1:00", "want a date"},
		{"2026-12-31T23:59:00+24:00", `offset "+24:00" out of range`},
		{"2026-12-31T23:59:00.1234567891Z", "want 1 to 9 digits of fractional seconds"},
		{"2026-12-31 23:59.5", "want a date"},
		{"2026-12-31 23:61", "minute 61 out of range 0-59"},
		{"2026-00-10", "month 0 out of range 1-12"},
		{"2026-12-31T23:59:00 Europe/Paris", "want a date"},
		{"9999-12-31T23:00:00-05:00", "instant out of range"},
		{"0", "interval must be positive"},
		{"-48 whours", "a negative one would be due in the past; to count back from a date, use a when_expr"},
		{"-3 wdays", "a negative one would be due in the past"},
		{"1.5 wdays", `wdays needs a whole number, not "1.5"`},
		{".5 wmonths", `wmonths needs a whole number, not ".5"`},
		{"1.0000000001 whours", "at most 9 decimal places"},
		{"876601 whours", "working time longer than 100 years"},
		{"36526 wdays", "wdays: at most 36525 (100 years)"},
		{"1201 wmonths", "wmonths: at most 1200 (100 years)"},
		{"101 wyears", "wyears: at most 100 (100 years)"},
		{"1 wday 2h", "working time cannot be combined with other parts"},
		{"2h 1 wday", "working time cannot be combined with other parts"},
	} {
		f, err := wakeups.ParseWhen(c.text)
		var fe *wakeups.FormError
		if !errors.As(err, &fe) {
			t.Errorf("ParseWhen(%q) = %v, %v; want a *FormError", c.text, f, err)
			continue
		}
		if fe.Text != strings.TrimSpace(c.text) || !strings.Contains(fe.Reason, c.reason) || fe.Reason == "" {
			t.Errorf("ParseWhen(%q): Text %q, Reason %q; want reason %q", c.text, fe.Text, fe.Reason, c.reason)
		}
		if f != (wakeups.Form{}) {
			t.Errorf("ParseWhen(%q) returned a non-zero Form with its error", c.text)
		}
	}
	_, err := wakeups.ParseWhen("1 x")
	if want := `wakeup: when "1 x": unknown unit "x" (want d, h, m, s, ms or days, hours, minutes, seconds; whours, wdays, wmonths, wyears)`; err == nil || err.Error() != want {
		t.Errorf("ParseWhen(1 x) = %v, want %s", err, want)
	}
}

func TestFormDueErrors(t *testing.T) {
	ny := formsZone(t, "America/New_York")
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, ny)
	for _, c := range []struct {
		text   string
		cal    *calendar.Calendar
		reason string
	}{
		{"48 whours", nil, "working time needs a calendar"},
		{"3 wdays", nil, "working time needs a calendar"},
		{"2026-05-03", nil, "is in the past"},
		{"2026-05-04", nil, "is in the past"}, // today's midnight
		{"2020-01-01", nil, "is in the past"},
		{"2026-05-04 09:59:59", nil, "is in the past"},
		{"2026-05-04T13:59:59Z", nil, "is in the past"}, // 09:59:59 EDT
		{"2026-05-04T09:59:59-04:00", nil, "is in the past"},
	} {
		_, err := formsParse(t, c.text).Due(now, ny, c.cal)
		var fe *wakeups.FormError
		if !errors.As(err, &fe) || fe.Text != c.text || !strings.Contains(fe.Reason, c.reason) {
			t.Errorf("%q.Due: %v, want a *FormError %q", c.text, err, c.reason)
		}
	}
	_, err := formsParse(t, "2020-01-01").Due(now, ny, nil)
	if want := `wakeup: when "2020-01-01": is in the past (2020-01-01T00:00:00-05:00, now 2026-05-04T10:00:00-04:00)`; err == nil || err.Error() != want {
		t.Errorf("past date: %v, want %s", err, want)
	}
	// Exactly now is not past.
	if _, err := formsParse(t, "2026-05-04T14:00:00Z").Due(now, ny, nil); err != nil {
		t.Errorf("an instant equal to now: %v", err)
	}
	// The calendar's errors are wrapped.
	closed := formsCalendar(t, `{"zone":"UTC","hours":{}}`)
	_, err = formsParse(t, "3 wdays").Due(now, ny, closed)
	if !errors.Is(err, calendar.ErrNoWorkingTime) {
		t.Errorf("a calendar without working time: %v, want ErrNoWorkingTime", err)
	}
	var fe *wakeups.FormError
	if !errors.As(err, &fe) || fe.Text != "3 wdays" {
		t.Errorf("a calendar without working time: %v, want a *FormError", err)
	}
	// The zero Form has no due time.
	if _, err := (wakeups.Form{}).Due(now, ny, nil); !errors.As(err, &fe) {
		t.Errorf("zero Form: %v, want a *FormError", err)
	}
	if s := (wakeups.Form{}).String(); s != "" {
		t.Errorf("zero Form String() = %q", s)
	}
}

// FuzzFormParseWhen checks that ParseWhen never panics, that errors are
// *FormError with a reason, and that an accepted form's canonical text
// parses to an equal form with the same due time.
func FuzzFormParseWhen(f *testing.F) {
	for _, s := range []string{
		"3600000", "1 d 3 h", "90m", "1h30m", "2d", "1h 30m 10s", "500ms", "1.5h", ".5h", "1.h", "02:00",
		"14:30:15", "2026-12-31", "2026-12-31 23:59", "2026-12-31T23:59:30.5", "2026-12-31T23:59:00Z",
		"2026-12-31T23:59:00+01:00", "48 whours", "1.5 whours", "3 wdays", "1 wmonth", "2 wyears",
		"90 wminutes", "", "0", "-5m", "1 x", "25:00", "2026-02-30", "+", "--1h", "1µs", "1μs",
	} {
		f.Add(s)
	}
	now := time.Date(2026, 1, 9, 17, 0, 0, 0, time.UTC)
	cal, err := calendar.Parse([]byte(`{"zone":"America/New_York"}`))
	if err != nil {
		f.Fatal(err)
	}
	ny, err := cronx.LoadZone("America/New_York")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		form, err := wakeups.ParseWhen(s)
		if err != nil {
			var fe *wakeups.FormError
			if !errors.As(err, &fe) || fe.Reason == "" {
				t.Fatalf("ParseWhen(%q): %v, want a *FormError with a reason", s, err)
			}
			return
		}
		again, err := wakeups.ParseWhen(form.String())
		if err != nil {
			t.Fatalf("ParseWhen(%q).String() = %q: %v", s, form.String(), err)
		}
		again.Text = form.Text
		if again != form {
			t.Fatalf("ParseWhen(%q) and ParseWhen(%q) differ", s, form.String())
		}
		d1, err1 := form.Due(now, ny, cal)
		d2, err2 := again.Due(now, ny, cal)
		if !d1.Equal(d2) || (err1 == nil) != (err2 == nil) {
			t.Fatalf("%q: Due %v, %v; canonical %q: %v, %v", s, d1, err1, form.String(), d2, err2)
		}
		if err1 == nil && form.IsRelative() && !d1.After(now) {
			t.Fatalf("%q: a relative form due at %v, not after %v", s, d1, now)
		}
	})
}
