package cronx_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

// checkParseError asserts err is a *ParseError with the given Field and Pos
// and a non-empty Reason; when reason is not empty, Reason must contain it.
func checkParseError(t *testing.T, what string, err error, field string, pos int, reason string) {
	t.Helper()
	var pe *cronx.ParseError
	if !errors.As(err, &pe) {
		t.Errorf("%s: error %v (%T), want *cronx.ParseError", what, err, err)
		return
	}
	if pe.Field != field || pe.Pos != pos || pe.Reason == "" {
		t.Errorf("%s: got Field %q Pos %d Reason %q, want Field %q Pos %d and a reason", what, pe.Field, pe.Pos, pe.Reason, field, pos)
	}
	if reason != "" && !strings.Contains(pe.Reason, reason) {
		t.Errorf("%s: Reason %q does not contain %q", what, pe.Reason, reason)
	}
	if !strings.HasPrefix(pe.Error(), "cronx: ") {
		t.Errorf("%s: Error() = %q, want the cronx: prefix", what, pe.Error())
	}
}

func TestParseCronErrors(t *testing.T) {
	tests := []struct {
		expr   string
		field  string
		pos    int
		reason string // substring of Reason, optional
	}{
		// The expression as a whole.
		{"", "cron", 0, "empty"},
		{"   ", "cron", 0, "empty"},
		{"* * *", "cron", 0, "got 3"},
		{"* * * *", "cron", 0, "got 4"},
		{"* * * * * * * *", "cron", 0, "got 8"},
		{"0 0 0 1 1 * 2200", "year", 7, "out of range 1970-2199"},
		{"0 0 0 1 1 * 1969", "year", 7, "out of range 1970-2199"},
		{"0 0 0 1 1 * 2031-2030", "year", 7, "reversed"},
		{"0 0 0 1 1 * H", "year", 7, "not allowed"},
		{"0 0 0 30 2 * 2024-2030", "cron", 0, "never fires"},
		{"@reboot", "cron", 0, "unknown alias"},
		{"@every 5s", "cron", 0, "got 2"},
		{"0 0 30 2 *", "cron", 0, "never fires"},
		{"0 0 31 4,6,9,11 *", "cron", 0, "never fires"},
		{"0 0 30,31 feb *", "cron", 0, "never fires"},
		{"0 0 0 31 2 ?", "cron", 0, "never fires"},
		// Out of range, 5 and 6 fields.
		{"0 25 * * *", "hour", 2, "out of range 0-23"},
		{"0 0 25 * * *", "hour", 3, "out of range 0-23"},
		{"60 * * * *", "minute", 1, "out of range 0-59"},
		{"60 * * * * *", "second", 1, "out of range 0-59"},
		{"0 0 0 * *", "day-of-month", 3, "out of range 1-31"},
		{"0 0 32 * *", "day-of-month", 3, "out of range 1-31"},
		{"0 0 * 13 *", "month", 4, "out of range 1-12"},
		{"0 0 * 0 *", "month", 4, "out of range 1-12"},
		{"0 0 * * 8", "day-of-week", 5, "out of range 0-7"},
		{"0 0-24 * * *", "hour", 2, "out of range"},
		{"99999999999 * * * *", "minute", 1, "out of range"},
		// Ranges wrap around (22-2) except in the year; their ends are
		// still checked.
		{"0 0 0 1 1 * 2031-2030", "year", 7, "cannot wrap"},
		{"0 25-2 * * *", "hour", 2, "out of range 0-23"},
		{"0 0 * * 8-2", "day-of-week", 5, "out of range 0-7"},
		{"0 0 * jan-13 *", "month", 4, "out of range 1-12"},
		// Names.
		{"0 0 * foo *", "month", 4, "unknown name"},
		{"0 0 * * funday", "day-of-week", 5, "unknown name"},
		{"0 0 * * mondays", "day-of-week", 5, "unknown name"},
		{"0 0 * sept *", "month", 4, "unknown name"},
		{"0 0 * * thurs", "day-of-week", 5, "unknown name"},
		{"mon 0 * * *", "minute", 1, "must be a number"},
		// "?" is for day-of-month and day-of-week only, and alone.
		{"? * * * *", "minute", 1, `"?"`},
		{"0 ? * * * *", "minute", 2, `"?"`},
		{"0 0 ?,1 * *", "day-of-month", 3, `"?"`},
		{"0 0 * * ?/2", "day-of-week", 5, `"?"`},
		// Steps.
		{"*/0 * * * *", "minute", 1, "at least 1"},
		{"*/60 * * * *", "minute", 1, "larger than the field's range"},
		{"0 */x * * *", "hour", 2, "invalid step"},
		{"0 1/2/3 * * *", "hour", 2, "invalid step"},
		// Malformed items.
		{"1-2-3 * * * *", "minute", 1, ""},
		{"1,,2 * * * *", "minute", 1, "empty"},
		{"1, * * * *", "minute", 1, "empty"},
		{"-5 * * * *", "minute", 1, "missing value"},
		{"5- * * * *", "minute", 1, "missing value"},
		{"?,5 * * * *", "minute", 1, `"?"`},
		{"1.5 * * * *", "minute", 1, "invalid character"},
		{"0 0 * * 1;2", "day-of-week", 5, "invalid character"},
		{"@hourly * * * *", "minute", 1, "invalid character"},
		// L, W, # and H misuse.
		{"0 0 32W * *", "day-of-month", 3, "nW"},
		{"0 0 W32 * *", "day-of-month", 3, "nW"},
		{"0 0 W * *", "day-of-month", 3, "nW"},
		{"0 0 W15W * *", "day-of-month", 3, "nW"},
		{"0 0 5-LW * *", "day-of-month", 3, "nW"},
		{"0 0 L-31 * *", "day-of-month", 3, "L-n"},
		{"0 0 L-31W * *", "day-of-month", 3, "L-nW"},
		{"0 0 L-5-L * *", "day-of-month", 3, "L-n"},
		{"0 0 LX * *", "day-of-month", 3, "L and W"},
		{"0 0 LW-1 * *", "day-of-month", 3, "L and W"},
		{"0 0 15-L/0 * *", "day-of-month", 3, "at least 1"},
		{"0 0 15-L/31 * *", "day-of-month", 3, "larger than the field's range"},
		{"0 0 15-LX * *", "day-of-month", 3, "L and W"},
		{"0 0 * * 5-L", "day-of-week", 5, "invalid character"},
		{"0 L-2 * * *", "hour", 2, "must be a number"},
		{"0 0 * * L", "day-of-week", 5, "needs a day"},
		{"0 0 * * 5#6", "day-of-week", 5, "k from 1 to 5"},
		{"0 0 * * 9#2", "day-of-week", 5, "out of range"},
		{"0 0 * * 9L", "day-of-week", 5, "out of range"},
		{"H(30-20) * * * *", "minute", 1, "reversed"},
		{"H(0-5 * * * *", "minute", 1, "missing ')'"},
		{"H/0 * * * *", "minute", 1, "step"},
		{"Hx * * * *", "minute", 1, "want H"},
	}
	for _, tt := range tests {
		c, err := cronx.NewCron(tt.expr, cronx.Options{})
		if err == nil {
			t.Errorf("NewCron(%q) = %q, want an error", tt.expr, c)
			continue
		}
		checkParseError(t, "NewCron("+tt.expr+")", err, tt.field, tt.pos, tt.reason)
	}
}

func TestParseErrorMessage(t *testing.T) {
	_, err := cronx.NewCron("0 25 * * *", cronx.Options{})
	want := `cronx: cron field 2 (hour) "25": value 25 out of range 0-23`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
	var pe *cronx.ParseError
	if errors.As(err, &pe) && pe.Value != "25" {
		t.Errorf("Value = %q, want 25", pe.Value)
	}
	_, err = cronx.NewCron("* * *", cronx.Options{})
	want = `cronx: cron "* * *": got 3 fields; want 5 (minute hour day-of-month month day-of-week), 6 (second first) or 7 (second first, year last)`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

func TestLoadZone(t *testing.T) {
	for _, name := range []string{"", "UTC"} {
		loc, err := cronx.LoadZone(name)
		if err != nil || loc != time.UTC {
			t.Errorf("LoadZone(%q) = %v, %v; want UTC", name, loc, err)
		}
	}
	loc, err := cronx.LoadZone("Europe/London")
	if err != nil || loc.String() != "Europe/London" {
		t.Errorf("LoadZone(Europe/London) = %v, %v", loc, err)
	}
	for _, name := range []string{"Mars/Olympus", "Local", "../etc/passwd", "europe/london "} {
		loc, err := cronx.LoadZone(name)
		if err == nil {
			t.Errorf("LoadZone(%q) = %v, want an error", name, loc)
			continue
		}
		checkParseError(t, "LoadZone("+name+")", err, "tz", 0, "")
	}
	_, err = cronx.LoadZone("Mars/Olympus")
	if want := `cronx: tz "Mars/Olympus": unknown time zone`; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}
