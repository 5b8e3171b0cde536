package calendar_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
)

// validCalendars are accepted by Parse (and seed the fuzz target).
var validCalendars = []string{
	specExample,
	usCalendar,
	usHolidays,
	`{"zone": "UTC"}`,
	`{"zone": "Asia/Dubai", "weekend": ["sat", "sun"], "holidays": [{"name": "Eid", "dates": ["2026-03-20"]}]}`,
	`{"zone": "Asia/Jerusalem", "weekend": ["fri-sat"]}`,
	`{"zone": "Europe/London", "hours": {}}`,
	`{"zone": "Asia/Tokyo", "hours": {"mon-sun": ["00:00-24:00"]}}`,
	`{"zone": "America/New_York", "hours": {"mon-fri": ["00:00-24:00"]}}`,
	`{"zone": "Europe/Paris", "hours": {"sat-sun": ["10:00:30-12:00:15"], "mon": []}, "holidays": []}`,
	`{"zone": "Australia/Lord_Howe", "hours": {"tue-thu": ["22:00-24:00", "00:00-02:00"]}}`,
	`{"zone": "UTC", "holidays": [{"name": "Leap", "date": "02-29", "observed": "monday", "years": [2000, 2100]}]}`,
	`{"zone": "UTC", "holidays": [{"name": "Summer", "from": "08-01", "to": "08-31", "years": [2026, 2026]}]}`,
	`{"zone": "UTC", "holidays": [{"name": "Ascension", "easter": 39, "observed": "sunday_to_monday"}]}`,
	`{"zone": "UTC", "holidays": [{"name": "Days", "dates": ["2027-01-04", "2026-12-28", "2027-01-04"], "observed": ""}]}`,
	`{"zone": "UTC", "holidays": [{"name": "Thanksgiving", "month": 11, "weekday": "thu", "nth": 4}, {"name": "After", "month": 11, "weekday": "fri", "nth": -5}]}`,
}

func TestParseValid(t *testing.T) {
	for _, js := range slices.Concat(validCalendars, extendedCalendars) {
		c := mustParse(t, js)
		b, err := c.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		again := mustParse(t, string(b))
		b2, _ := again.MarshalJSON()
		if string(b) != string(b2) || c.Fingerprint() != again.Fingerprint() {
			t.Errorf("round trip of %s:\n%s\n%s", js, b, b2)
		}
		if fp := c.Fingerprint(); len(fp) != 64 || strings.Trim(fp, "0123456789abcdef") != "" {
			t.Errorf("Fingerprint() = %q", fp)
		}
	}
}

func TestCanonicalForm(t *testing.T) {
	tests := []struct{ in, want string }{
		{specExample, `{"zone":"America/New_York","hours":{"mon-fri":["09:00-12:00","13:00-17:30"],"sat":["10:00-14:00"]},"holidays":[` +
			`{"name":"New Year's Day","date":"01-01","observed":"nearest"},` +
			`{"name":"Martin Luther King Jr. Day","month":1,"weekday":"mon","nth":3},` +
			`{"name":"Memorial Day","month":5,"weekday":"mon","nth":-1},` +
			`{"name":"Winter break","from":"12-24","to":"01-01"},` +
			`{"name":"Good Friday","easter":-2},` +
			`{"name":"Easter Monday","easter":1},` +
			`{"name":"Company days","dates":["2026-12-28","2027-01-04"]}]}`},
		// A calendar of holidays only has no hours; a weekend is written as
		// the hours it stands for.
		{`{"zone": "UTC"}`, `{"zone":"UTC"}`},
		{`{"zone": "UTC", "weekend": ["sat", "sun"]}`, `{"zone":"UTC","hours":{"mon-fri":["09:00-18:00"]}}`},
		{`{"zone": "UTC", "weekend": ["fri-sat"]}`, `{"zone":"UTC","hours":{"mon-thu":["09:00-18:00"],"sun":["09:00-18:00"]}}`},
		{`{"zone": "UTC", "weekend": []}`, `{"zone":"UTC","hours":{"mon-sun":["09:00-18:00"]}}`},
		{`{"zone": "UTC", "hours": {}}`, `{"zone":"UTC","hours":{}}`},
		// Sorted, touching intervals merged, days grouped, empty days left out.
		{`{"zone": "UTC", "hours": {"mon": ["13:00-18:00", "09:00-13:00"], "tue-fri": ["09:00-18:00"], "sun": []}}`,
			`{"zone":"UTC","hours":{"mon-fri":["09:00-18:00"]}}`},
		{`{"zone": "UTC", "hours": {"wed": ["08:00-09:00"], "mon-tue": ["08:00-09:00"], "fri-sun": ["08:00-09:00:01"]}}`,
			`{"zone":"UTC","hours":{"mon-wed":["08:00-09:00"],"fri-sun":["08:00-09:00:01"]}}`},
		// Dates sorted and unique; "observed": "" left out; "easter": 0 kept.
		{`{"zone": "UTC", "holidays": [{"years": [2026, 2027], "dates": ["2027-01-04", "2026-12-28", "2027-01-04"], "observed": "", "name": "D"}, {"name": "E", "easter": 0}]}`,
			`{"zone":"UTC","holidays":[{"name":"D","dates":["2026-12-28","2027-01-04"],"years":[2026,2027]},{"name":"E","easter":0}]}`},
		// No HTML escaping.
		{`{"zone": "UTC", "holidays": [{"name": "R&D <day>", "date": "03-01"}]}`,
			`{"zone":"UTC","holidays":[{"name":"R&D <day>","date":"03-01"}]}`},
	}
	for _, tt := range tests {
		b, err := mustParse(t, tt.in).MarshalJSON()
		if err != nil || string(b) != tt.want {
			t.Errorf("MarshalJSON of %s:\n got %s (%v)\nwant %s", tt.in, b, err, tt.want)
		}
	}
}

// TestFingerprint: equal meaning, equal fingerprint; any change of meaning
// changes it.
func TestFingerprint(t *testing.T) {
	same := []string{
		`{"zone": "America/New_York", "weekend": ["sat", "sun"]}`,
		`{"zone": "America/New_York", "weekend": ["sun", "sat"]}`,
		`{"zone": "America/New_York", "hours": {"mon-fri": ["09:00-18:00"]}}`,
		`{"hours": {"fri": ["09:00-18:00"], "mon-thu": ["09:00-12:00", "12:00-18:00"], "sat": []}, "zone": "America/New_York", "holidays": []}`,
		`{"zone": "America/New_York", "hours": {"mon-fri": ["09:00:00-18:00:00"]}}`,
	}
	want := mustParse(t, same[0]).Fingerprint()
	for _, js := range same[1:] {
		if got := mustParse(t, js).Fingerprint(); got != want {
			t.Errorf("Fingerprint of %s differs", js)
		}
	}
	different := []string{
		// Holidays only: weekends are business days (issue 13), so the
		// fingerprint differs from the Monday-to-Friday hours it once
		// stood for, and schedules using it re-plan.
		`{"zone": "America/New_York"}`,
		`{"zone": "America/New_York", "weekend": ["sun"]}`,
		`{"zone": "America/Chicago"}`,
		`{"zone": "America/New_York", "hours": {"mon-fri": ["09:00-18:00:01"]}}`,
		`{"zone": "America/New_York", "hours": {"mon-thu": ["09:00-18:00"]}}`,
		`{"zone": "America/New_York", "holidays": [{"name": "X", "date": "01-01"}]}`,
		`{"zone": "America/New_York", "holidays": [{"name": "Y", "date": "01-01"}]}`,
		`{"zone": "America/New_York", "holidays": [{"name": "X", "date": "01-01", "observed": "nearest"}]}`,
		`{"zone": "America/New_York", "holidays": [{"name": "X", "date": "01-01", "years": [2020, 2030]}]}`,
		`{"zone": "America/New_York", "holidays": [{"name": "X", "date": "01-01"}, {"name": "Z", "date": "01-01"}]}`,
		`{"zone": "America/New_York", "holidays": [{"name": "Z", "date": "01-01"}, {"name": "X", "date": "01-01"}]}`,
	}
	seen := map[string]string{want: same[0]}
	for _, js := range different {
		fp := mustParse(t, js).Fingerprint()
		if prev, dup := seen[fp]; dup {
			t.Errorf("same fingerprint for\n%s\n%s", prev, js)
		}
		seen[fp] = js
	}
}

func TestParseErrors(t *testing.T) {
	const zone = `"zone": "UTC", `
	tests := []struct {
		in     string
		field  string
		value  string
		reason string // a prefix of Reason
	}{
		{`not json`, "", "", "invalid character"},
		{`{"zone": "UTC"} {}`, "", "", "invalid character"},
		{`{"zone": "UTC"`, "", "", "unexpected end of JSON input"},
		{`[]`, "", "[]", "want a JSON object"},
		{`null`, "", "null", "want a JSON object"},
		{`{}`, "zone", "", "required"},
		{`{"zone": ""}`, "zone", "", "required"},
		{`{"zone": null}`, "zone", "null", "want a string"},
		{`{"zone": 5}`, "zone", "5", "want a string"},
		{`{"zone": "Mars/Olympus"}`, "zone", "Mars/Olympus", "unknown time zone"},
		{`{"zone": "Local"}`, "zone", "Local", `"Local" depends on the host`},
		{`{"zone": "UTC", "Zone": "UTC"}`, "Zone", "", "unknown field"},
		{`{"zone": "UTC", "zone": "UTC"}`, "zone", "", "duplicate field"},
		{`{"zone": "UTC", "holiday_roll": "skip"}`, "holiday_roll", "", "unknown field"},

		{`{` + zone + `"hours": []}`, "hours", "[]", "want a JSON object"},
		{`{` + zone + `"hours": {"mon-fri": ["09:00-12:00", "11:00-13:00"]}}`, "hours.mon-fri[1]", "11:00-13:00", "overlaps 09:00-12:00"},
		{`{` + zone + `"hours": {"mon-fri": ["11:00-13:00", "09:00-12:00"]}}`, "hours.mon-fri[1]", "09:00-12:00", "overlaps 11:00-13:00"},
		{`{` + zone + `"hours": {"mon": ["09:00-12:00", "09:00-12:00"]}}`, "hours.mon[1]", "09:00-12:00", "overlaps"},
		{`{` + zone + `"hours": {"mon-fri": ["09:00-12:00"], "fri": []}}`, "hours.fri", "fri", "fri is given twice"},
		{`{` + zone + `"hours": {"mon": [], "mon": []}}`, "hours.mon", "", "duplicate field"},
		{`{` + zone + `"hours": {"fri-mon": []}}`, "hours.fri-mon", "fri-mon", "a day range must go forward"},
		{`{` + zone + `"hours": {"sun-mon": []}}`, "hours.sun-mon", "sun-mon", "a day range must go forward"},
		{`{` + zone + `"hours": {"mon-mon": []}}`, "hours.mon-mon", "mon-mon", "a day range must go forward"},
		{`{` + zone + `"hours": {"Mon": []}}`, "hours.Mon", "Mon", "unknown day"},
		{`{` + zone + `"hours": {"monday": []}}`, "hours.monday", "monday", "unknown day"},
		{`{` + zone + `"hours": {"mon-": []}}`, "hours.mon-", "mon-", "unknown day"},
		{`{` + zone + `"hours": {"mon": "09:00-12:00"}}`, "hours.mon", `"09:00-12:00"`, "want a JSON array"},
		{`{` + zone + `"hours": {"mon": null}}`, "hours.mon", "null", "want a JSON array"},
		{`{` + zone + `"hours": {"mon": [9]}}`, "hours.mon[0]", "9", "want a string"},
		{`{` + zone + `"hours": {"mon": ["9:00-12:00"]}}`, "hours.mon[0]", "9:00-12:00", `want "HH:MM-HH:MM"`},
		{`{` + zone + `"hours": {"mon": ["09:00"]}}`, "hours.mon[0]", "09:00", `want "HH:MM-HH:MM"`},
		{`{` + zone + `"hours": {"mon": ["09:00-12:60"]}}`, "hours.mon[0]", "09:00-12:60", `want "HH:MM-HH:MM"`},
		{`{` + zone + `"hours": {"mon": ["09:00-24:01"]}}`, "hours.mon[0]", "09:00-24:01", `want "HH:MM-HH:MM"`},
		{`{` + zone + `"hours": {"mon": ["09:00-25:00"]}}`, "hours.mon[0]", "09:00-25:00", `want "HH:MM-HH:MM"`},
		{`{` + zone + `"hours": {"mon": ["09:00:5-10:00"]}}`, "hours.mon[0]", "09:00:5-10:00", `want "HH:MM-HH:MM"`},
		{`{` + zone + `"hours": {"mon": ["12:00-09:00"]}}`, "hours.mon[0]", "12:00-09:00", "start must be before end"},
		{`{` + zone + `"hours": {"mon": ["09:00-09:00"]}}`, "hours.mon[0]", "09:00-09:00", "start must be before end"},
		{`{` + zone + `"hours": {"mon": ["24:00-24:00"]}}`, "hours.mon[0]", "24:00-24:00", "24:00 can only end an interval"},

		{`{` + zone + `"weekend": ["sat"], "hours": {"mon-fri": ["09:00-18:00"]}}`, "weekend", "", "give hours or weekend, not both"},
		{`{` + zone + `"weekend": "sat"}`, "weekend", `"sat"`, "want a JSON array"},
		{`{` + zone + `"weekend": ["saturday"]}`, "weekend[0]", "saturday", "unknown day"},
		{`{` + zone + `"weekend": ["sat", "fri-sun"]}`, "weekend[1]", "fri-sun", "sat is given twice"},
		{`{` + zone + `"weekend": ["mon-sun"]}`, "weekend", "", "every day is a weekend day"},

		{`{` + zone + `"holidays": {}}`, "holidays", "{}", "want a JSON array"},
		{`{` + zone + `"holidays": [1]}`, "holidays[0]", "1", "want a JSON object"},
		{`{` + zone + `"holidays": [{"date": "01-01"}]}`, "holidays[0].name", "", "required"},
		{`{` + zone + `"holidays": [{"name": " ", "date": "01-01"}]}`, "holidays[0].name", "", "required"},
		{`{` + zone + `"holidays": [{"name": "X"}]}`, "holidays[0]", "", "want exactly one of"},
		{`{` + zone + `"holidays": [{"name": "X", "date": "01-01", "easter": 1}]}`, "holidays[0]", "", `want exactly one of "date", "month"+"weekday"+"nth", "from"+"to", "easter", "julian_easter", "equinox", "weekday"+"before"/"after"/"on_or_before"/"on_or_after", "between_holidays" or "dates"; got "date" and "easter"`},
		{`{` + zone + `"holidays": [{"name": "X", "dates": ["2026-01-01"], "to": "01-02"}]}`, "holidays[0]", "", "want exactly one of"},
		{`{` + zone + `"holidays": [{"name": "X", "date": "01-01", "foo": 1}]}`, "holidays[0].foo", "", "unknown field"},
		{`{` + zone + `"holidays": [{"name": "X", "Name": "Y", "date": "01-01"}]}`, "holidays[0].Name", "", "unknown field"},
		{`{` + zone + `"holidays": [{"name": "X", "date": "01-01", "date": "01-02"}]}`, "holidays[0].date", "", "duplicate field"},
		{`{` + zone + `"holidays": [{"name": "X", "date": "13-01"}]}`, "holidays[0].date", "13-01", `want a day of the year "MM-DD"`},
		{`{` + zone + `"holidays": [{"name": "X", "date": "02-30"}]}`, "holidays[0].date", "02-30", `want a day of the year`},
		{`{` + zone + `"holidays": [{"name": "X", "date": "1-1"}]}`, "holidays[0].date", "1-1", `want a day of the year`},
		{`{` + zone + `"holidays": [{"name": "X", "date": 101}]}`, "holidays[0].date", "101", "want a string"},
		{`{` + zone + `"holidays": [{"name": "X", "month": 13, "weekday": "mon", "nth": 1}]}`, "holidays[0].month", "13", "want a month from 1 to 12"},
		{`{` + zone + `"holidays": [{"name": "X", "month": 1, "weekday": "mon", "nth": 0}]}`, "holidays[0].nth", "0", "want 1 to 5, or -1 (last) to -5"},
		{`{` + zone + `"holidays": [{"name": "X", "month": 1, "weekday": "mon", "nth": 6}]}`, "holidays[0].nth", "6", "want 1 to 5"},
		{`{` + zone + `"holidays": [{"name": "X", "month": 1, "weekday": "mon", "nth": -6}]}`, "holidays[0].nth", "-6", "want 1 to 5"},
		{`{` + zone + `"holidays": [{"name": "X", "month": 1, "weekday": "mon", "nth": 1.5}]}`, "holidays[0].nth", "1.5", "want an integer"},
		{`{` + zone + `"holidays": [{"name": "X", "month": 1, "weekday": "mon", "nth": "1"}]}`, "holidays[0].nth", `"1"`, "want an integer"},
		{`{` + zone + `"holidays": [{"name": "X", "month": 1, "weekday": "mon"}]}`, "holidays[0].nth", "", "required"},
		{`{` + zone + `"holidays": [{"name": "X", "weekday": "mon", "nth": 1}]}`, "holidays[0].month", "", "required"},
		{`{` + zone + `"holidays": [{"name": "X", "month": 1, "nth": 1}]}`, "holidays[0].weekday", "", "required"},
		{`{` + zone + `"holidays": [{"name": "X", "from": "12-24"}]}`, "holidays[0].to", "", "required"},
		{`{` + zone + `"holidays": [{"name": "X", "to": "12-24"}]}`, "holidays[0].from", "", "required"},
		{`{` + zone + `"holidays": [{"name": "X", "from": "12-24", "to": "12-32"}]}`, "holidays[0].to", "12-32", "want a day of the year"},
		{`{` + zone + `"holidays": [{"name": "X", "easter": 301}]}`, "holidays[0].easter", "301", "want days from -300 to 300"},
		{`{` + zone + `"holidays": [{"name": "X", "easter": 99999999999999999999}]}`, "holidays[0].easter", "99999999999999999999", "want an integer"},
		{`{` + zone + `"holidays": [{"name": "X", "dates": []}]}`, "holidays[0].dates", "", "want at least one date"},
		{`{` + zone + `"holidays": [{"name": "X", "dates": ["2026-02-29"]}]}`, "holidays[0].dates[0]", "2026-02-29", `want a date "YYYY-MM-DD"`},
		{`{` + zone + `"holidays": [{"name": "X", "dates": ["2026-01-01", "2026-1-2"]}]}`, "holidays[0].dates[1]", "2026-1-2", `want a date`},
		{`{` + zone + `"holidays": [{"name": "X", "dates": ["0000-01-01"]}]}`, "holidays[0].dates[0]", "0000-01-01", `want a date`},
		{`{` + zone + `"holidays": [{"name": "X", "date": "01-01", "observed": "friday"}]}`, "holidays[0].observed", "friday", "unknown mode"},
		{`{` + zone + `"holidays": [{"name": "X", "from": "12-24", "to": "01-01", "observed": "nearest"}]}`, "holidays[0].observed", "nearest", "only allowed with"},
		{`{` + zone + `"holidays": [{"name": "X", "dates": ["2026-01-01"], "observed": "monday"}]}`, "holidays[0].observed", "monday", "only allowed with"},
		{`{` + zone + `"holidays": [{"name": "X", "date": "01-01", "years": [2030, 2020]}]}`, "holidays[0].years", "[2030, 2020]", "from is after to"},
		{`{` + zone + `"holidays": [{"name": "X", "date": "01-01", "years": [2020]}]}`, "holidays[0].years", "[2020]", "want [from, to]"},
		{`{` + zone + `"holidays": [{"name": "X", "date": "01-01", "years": [0, 10]}]}`, "holidays[0].years[0]", "0", "want a year from 1 to 9999"},
		{`{` + zone + `"holidays": [{"name": "X", "date": "01-01", "years": [2020, "2030"]}]}`, "holidays[0].years[1]", `"2030"`, "want an integer"},
	}
	for _, tt := range tests {
		_, err := calendar.Parse([]byte(tt.in))
		var ce *calendar.Error
		if !errors.As(err, &ce) {
			t.Errorf("Parse(%s): got %v, want *Error", tt.in, err)
			continue
		}
		if ce.Field != tt.field || ce.Value != tt.value || !strings.HasPrefix(ce.Reason, tt.reason) {
			t.Errorf("Parse(%s):\n got Field %q Value %q Reason %q\nwant Field %q Value %q Reason %q...", tt.in, ce.Field, ce.Value, ce.Reason, tt.field, tt.value, tt.reason)
		}
	}
}

func TestErrorMessages(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"zone": "America/New_York", "holidays": [
			{"name": "A", "date": "01-01"}, {"name": "B", "easter": 1},
			{"name": "C", "month": 1, "weekday": "mnday", "nth": 3}]}`,
			`calendar: holidays[2].weekday "mnday": unknown day`},
		{`{}`, `calendar: zone: required`},
		{`{"zone": "UTC", "hours": {"mon-fri": ["09:00-12:00", "11:00-13:00"]}}`,
			`calendar: hours.mon-fri[1] "11:00-13:00": overlaps 09:00-12:00`},
		{`{"zone": "Mars/Olympus"}`, `calendar: zone "Mars/Olympus": unknown time zone`},
		{`{"zone": "UTC",}`, `calendar: invalid character '}' looking for beginning of object key string`},
	}
	for _, tt := range tests {
		_, err := calendar.Parse([]byte(tt.in))
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%s) error:\n got %v\nwant %s", tt.in, err, tt.want)
		}
	}
}

func TestErrorUnwrap(t *testing.T) {
	_, err := calendar.Parse([]byte(`{"zone": "Mars/Olympus"}`))
	var pe *cronx.ParseError
	if !errors.As(err, &pe) || pe.Field != "tz" {
		t.Errorf("zone error does not wrap the *cronx.ParseError: %#v", err)
	}
	_, err = calendar.Parse([]byte(`{`))
	var ce *calendar.Error
	if !errors.As(err, &ce) || ce.Field != "" || ce.Err == nil {
		t.Errorf("malformed JSON: %#v", err)
	}
}

func TestParseRoll(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want calendar.Roll
		name string
	}{
		{"", calendar.RollSkip, "skip"},
		{"skip", calendar.RollSkip, "skip"},
		{"next_business_day", calendar.RollNext, "next_business_day"},
		{"previous_business_day", calendar.RollPrevious, "previous_business_day"},
		{"modified_following", calendar.RollModifiedFollowing, "modified_following"},
	} {
		r, err := calendar.ParseRoll(tt.in)
		if err != nil || r != tt.want || r.String() != tt.name {
			t.Errorf("ParseRoll(%q) = %v (%d), %v", tt.in, r, r, err)
		}
	}
	_, err := calendar.ParseRoll("following")
	var ce *calendar.Error
	if !errors.As(err, &ce) || ce.Field != "holiday_roll" || ce.Value != "following" {
		t.Errorf("ParseRoll(following): %v", err)
	}
	if got := calendar.Roll(9).String(); got != "Roll(9)" {
		t.Errorf("Roll(9).String() = %q", got)
	}
}
