package calendar_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jetsched/jetsched/pkg/calendar"
)

// extendedCalendars use the later rule kinds (and seed the fuzz target).
var extendedCalendars = []string{
	englandCalendar,
	japanCalendar,
	halfDayCalendar,
	`{"zone": "Europe/Berlin", "holidays": [{"name": "Buß- und Bettag", "weekday": "wed", "before": "11-23", "years": [1995, 2100]}]}`,
	`{"zone": "America/New_York", "holidays": [{"name": "Election Day", "weekday": "tue", "after": {"month": 11, "weekday": "mon", "nth": 1}, "substitute": "next_free_weekday"}]}`,
	`{"zone": "UTC", "holidays": [{"name": "A", "weekday": "fri", "on_or_before": {"julian_easter": -1}}, {"name": "B", "weekday": "sun", "on_or_after": {"easter": 49}, "hours": ["10:00-12:00"]}]}`,
	`{"zone": "Europe/Athens", "holidays": [{"name": "Orthodox Easter Monday", "julian_easter": 1, "observed": "nearest"}, {"name": "Equinox", "equinox": "march", "observed": "monday"}]}`,
}

// TestExtendedCanonical: the later fields' canonical form.
func TestExtendedCanonical(t *testing.T) {
	tests := []struct{ rule, want string }{
		{`"before": "11-23", "weekday": "wed"`, `"weekday":"wed","before":"11-23"`},
		{`"weekday": "wed", "before": {"date": "11-23"}`, `"weekday":"wed","before":"11-23"`},
		{`"weekday": "tue", "after": {"nth": 1, "weekday": "mon", "month": 11}`, `"weekday":"tue","after":{"month":11,"weekday":"mon","nth":1}`},
		{`"weekday": "mon", "on_or_before": {"easter": 0}`, `"weekday":"mon","on_or_before":{"easter":0}`},
		{`"weekday": "mon", "on_or_after": {"julian_easter": 0}`, `"weekday":"mon","on_or_after":{"julian_easter":0}`},
		{`"julian_easter": 0`, `"julian_easter":0`},
		{`"equinox": "september", "substitute": "next_free_weekday", "substitute_on": ["sun", "sat"]`,
			`"equinox":"september","substitute":"next_free_weekday","substitute_on":["sat","sun"]`},
		{`"date": "12-25", "substitute": "next_free_weekday", "substitute_on": ["sat-sun", "sun"], "observed": ""`,
			`"date":"12-25","substitute":"next_free_weekday","substitute_on":["sat","sun"]`},
		{`"between_holidays": true, "years": [2000, 2050]`, `"between_holidays":true,"years":[2000,2050]`},
		{`"date": "12-24", "hours": ["12:00-13:00", "09:00-12:00"]`, `"date":"12-24","hours":["09:00-13:00"]`},
		{`"from": "12-24", "to": "12-31", "hours": ["10:00-12:00"]`, `"from":"12-24","to":"12-31","hours":["10:00-12:00"]`},
	}
	for _, tt := range tests {
		b, err := mustParse(t, `{"zone": "UTC", "holidays": [{"name": "H", `+tt.rule+`}]}`).MarshalJSON()
		want := `{"zone":"UTC","holidays":[{"name":"H",` + tt.want + `}]}`
		if err != nil || string(b) != want {
			t.Errorf("MarshalJSON of {%s}:\n got %s (%v)\nwant %s", tt.rule, b, err, want)
		}
	}
	// Each change of meaning changes the fingerprint.
	seen := map[string]string{}
	for _, rule := range []string{
		`"date": "12-25"`, `"date": "12-25", "substitute": "next_free_weekday"`,
		`"date": "12-25", "substitute": "next_free_weekday", "substitute_on": ["sun"]`,
		`"date": "12-25", "hours": ["09:00-12:00"]`, `"date": "12-25", "hours": ["09:00-12:01"]`,
		`"easter": 1`, `"julian_easter": 1`, `"equinox": "march"`, `"equinox": "september"`,
		`"weekday": "mon", "before": "05-25"`, `"weekday": "mon", "on_or_before": "05-25"`, `"weekday": "mon", "after": "05-25"`,
		`"weekday": "mon", "on_or_after": "05-25"`, `"weekday": "tue", "before": "05-25"`, `"between_holidays": true`,
	} {
		fp := mustParse(t, `{"zone": "UTC", "holidays": [{"name": "H", `+rule+`}]}`).Fingerprint()
		if prev, ok := seen[fp]; ok {
			t.Errorf("same fingerprint for {%s} and {%s}", prev, rule)
		}
		seen[fp] = rule
	}
}

// TestFingerprintGolden: the calendars written before the later rule
// kinds keep their fingerprints (schedules naming them do not recompile).
func TestFingerprintGolden(t *testing.T) {
	golden := []string{
		"f04feb212c7b074fc48edfae97a27e463ad57552408508c4355edd296340e849",
		"00fcae5ce47bd619c74405aa19d4f9fe88d54d4b6ae51d935135bbc49d8932db",
		"b5449a1e7c08a24f73072f478a40cfff8cd76ff6320f7dc37830d80d588118d0",
		"025a9d33d6270f819e0a181b9c16bd672a6d9fa3197299f74d1f19a528be7153",
		"8646b96fb33a775707b84d64a2505265b744f1a67054bde15ef3ffa4ee9e17a9",
		"01fd6b7bdcbf6615b7432866a1de4c66bc5ec37cb1cac82af5315415b37d607e",
		"46331b5ac044d010558b804d607f300a09749a99e2bc021ff0adaadd4c6aee0f",
		"31a6255876ab38c855485bbe427adb63231a7baeda6f98aa7cb827da95df2cbe",
		"297af1d70e6c2c64e6cc3cde68b5603594d3721bb7f49f22965d5ca2730eecb8",
		"4ad0b3c8842ca751d556ead7a08a4979d78380951be382e6993c70ce424a66d6",
		"392f12ad570b1f5bcbeff1ebb4bfed9b6bc577c97ae121323a272ecb8cb59efa",
		"bf04bfb32dd39b15018fe38f3c039b50fee9827935e49b0b27a139c2591b38a4",
		"4e35a31f41e7d8196933da347e232044c357cdc885b7d57c5e7226aec382739c",
		"659fe4df8f1cea5e6b1d5f3faa56b3ac0e1b651754383abada404ed0212c6723",
		"d629b594493590451d7479e5c15fc00196dde147874934c94c3e0d421857b925",
		"60b11b5c0f4080f2473cfb84048367c6d89926095aec7e2a575d28c144736374",
		"f04feb212c7b074fc48edfae97a27e463ad57552408508c4355edd296340e849",
		"00fcae5ce47bd619c74405aa19d4f9fe88d54d4b6ae51d935135bbc49d8932db",
		"b5449a1e7c08a24f73072f478a40cfff8cd76ff6320f7dc37830d80d588118d0",
		"72628cb9b96051e5b6ddd711888e916bf264ae286fe214050f7721e8e54d122b",
		"2e25f9d7a3d95337bcfb1cdc608139af6c36d0728110a0d6acc70b90b0007f70",
		"f7b35080f730d391906524a74dfb8f13d0f402b76fd7a1c080ea742a9431fd6b",
		"83916d1f856f7c38a08e17ddaf09baec72bbee7dfa286d897fd60af3dc1ec1e1",
	}
	all := append(append([]string{}, validCalendars[:16]...), propertyCalendars[:7]...)
	for i, js := range all {
		if got := mustParse(t, js).Fingerprint(); got != golden[i] {
			t.Errorf("fingerprint of %s\n got %s\nwant %s", js, got, golden[i])
		}
	}
}

// TestExtendedParseErrors: each later field's errors name its path.
func TestExtendedParseErrors(t *testing.T) {
	const pre = `{"zone": "UTC", "holidays": [{"name": "X", `
	tests := []struct {
		rule   string
		field  string
		value  string
		reason string // a prefix of Reason
	}{
		{`"date": "12-25", "substitute": "next_weekday"`, "holidays[0].substitute", "next_weekday", `unknown mode; want "next_free_weekday"`},
		{`"date": "12-25", "substitute": 1`, "holidays[0].substitute", "1", "want a string"},
		{`"date": "12-25", "observed": "monday", "substitute": "next_free_weekday"`, "holidays[0].substitute", "next_free_weekday", `give "observed" or "substitute", not both`},
		{`"from": "12-24", "to": "12-26", "substitute": "next_free_weekday"`, "holidays[0].substitute", "next_free_weekday", "only allowed with"},
		{`"dates": ["2026-01-01"], "substitute": "next_free_weekday"`, "holidays[0].substitute", "next_free_weekday", "only allowed with"},
		{`"date": "12-25", "substitute_on": ["sun"]`, "holidays[0].substitute_on", "", `only allowed with "substitute"`},
		{`"date": "12-25", "substitute": "next_free_weekday", "substitute_on": []`, "holidays[0].substitute_on", "", "want at least one day"},
		{`"date": "12-25", "substitute": "next_free_weekday", "substitute_on": ["sunday"]`, "holidays[0].substitute_on[0]", "sunday", "unknown day"},
		{`"date": "12-25", "substitute": "next_free_weekday", "substitute_on": "sun"`, "holidays[0].substitute_on", `"sun"`, "want a JSON array"},
		{`"weekday": "wed"`, "holidays[0].month", "", "required"},
		{`"before": "11-23"`, "holidays[0].weekday", "", `required with "before"`},
		{`"weekday": "wday", "after": "11-23"`, "holidays[0].weekday", "wday", "unknown day"},
		{`"weekday": "wed", "before": "11-31"`, "holidays[0].before", "11-31", `want a day of the year "MM-DD"`},
		{`"weekday": "wed", "before": 1123`, "holidays[0].before", "1123", `want "MM-DD" or an object`},
		{`"weekday": "wed", "before": "11-23", "after": "11-01"`, "holidays[0].after", "", `give one of "before", "after", "on_or_before" or "on_or_after"; got "before" too`},
		{`"weekday": "wed", "before": "11-23", "month": 11`, "holidays[0]", "", `want exactly one of`},
		{`"weekday": "wed", "before": "11-23", "date": "11-01"`, "holidays[0]", "", `want exactly one of`},
		{`"weekday": "wed", "before": {"name": "Y", "date": "11-23"}`, "holidays[0].before.name", "", "unknown field"},
		{`"weekday": "wed", "before": {"from": "11-23"}`, "holidays[0].before.from", "", "unknown field"},
		{`"weekday": "wed", "before": {"date": "11-23", "easter": 1}`, "holidays[0].before", "", `want "MM-DD" or an object`},
		{`"weekday": "wed", "before": {}`, "holidays[0].before", "", `want "MM-DD" or an object`},
		{`"weekday": "wed", "before": {"month": 11, "weekday": "mon"}`, "holidays[0].before.nth", "", "required"},
		{`"weekday": "wed", "before": {"easter": 400}`, "holidays[0].before.easter", "400", "want days from -300 to 300"},
		{`"weekday": "wed", "before": {"weekday": "wed", "before": "11-23"}`, "holidays[0].before.before", "", "unknown field"},
		{`"julian_easter": -301`, "holidays[0].julian_easter", "-301", "want days from -300 to 300"},
		{`"julian_easter": "1"`, "holidays[0].julian_easter", `"1"`, "want an integer"},
		{`"julian_easter": 1, "easter": 1`, "holidays[0]", "", `want exactly one of`},
		{`"equinox": "june"`, "holidays[0].equinox", "june", `want "march" or "september"`},
		{`"equinox": true`, "holidays[0].equinox", "true", "want a string"},
		{`"between_holidays": false`, "holidays[0].between_holidays", "false", "want true"},
		{`"between_holidays": 1`, "holidays[0].between_holidays", "1", "want true"},
		{`"between_holidays": true, "date": "01-01"`, "holidays[0]", "", `want exactly one of`},
		{`"between_holidays": true, "observed": "monday"`, "holidays[0].observed", "monday", "only allowed with"},
		{`"between_holidays": true, "substitute": "next_free_weekday"`, "holidays[0].substitute", "next_free_weekday", "only allowed with"},
		{`"between_holidays": true, "hours": ["09:00-12:00"]`, "holidays[0].hours", "", `not allowed with "between_holidays"`},
		{`"date": "12-24", "hours": []`, "holidays[0].hours", "", "want at least one interval"},
		{`"date": "12-24", "hours": ["13:00-12:00"]`, "holidays[0].hours[0]", "13:00-12:00", "start must be before end"},
		{`"date": "12-24", "hours": ["09:00-12:00", "11:00-13:00"]`, "holidays[0].hours[1]", "11:00-13:00", "overlaps 09:00-12:00"},
		{`"date": "12-24", "hours": ["09:00-12:00"], "observed": "nearest"`, "holidays[0].hours", "", "a half day is a business day"},
		{`"date": "12-24", "hours": ["09:00-12:00"], "substitute": "next_free_weekday"`, "holidays[0].hours", "", "a half day is a business day"},
	}
	for _, tt := range tests {
		in := pre + tt.rule + "}]}"
		_, err := calendar.Parse([]byte(in))
		var ce *calendar.Error
		if !errors.As(err, &ce) {
			t.Errorf("Parse(%s): got %v, want *Error", in, err)
			continue
		}
		if ce.Field != tt.field || ce.Value != tt.value || !strings.HasPrefix(ce.Reason, tt.reason) {
			t.Errorf("Parse(%s):\n got Field %q Value %q Reason %q\nwant Field %q Value %q Reason %q...", in, ce.Field, ce.Value, ce.Reason, tt.field, tt.value, tt.reason)
		}
	}
}
