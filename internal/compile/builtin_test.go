package compile_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/calendars"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestBuiltinCalendar: a spec naming a shipped calendar compiles without a
// calendar source, to the same plan on every instance (each with its own
// Interner, as after a restart), which holds the calendar's fingerprint;
// the source is never asked for it.
func TestBuiltinCalendar(t *testing.T) {
	spec := kvstore.Spec{Workflow: "pay", Cron: "0 9 * * *", TZ: "America/New_York", Calendar: "builtin:us-federal", HolidayRoll: "next_business_day"}
	asked := func(name string) (*calendar.Calendar, error) {
		t.Errorf("the calendar source was asked for %q", name)
		return nil, kvstore.ErrNotFound
	}
	a, err := compile.Compile(spec, "payroll", asked, &compile.Interner{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := compile.Compile(spec, "payroll", nil, &compile.Interner{})
	if err != nil {
		t.Fatal(err)
	}
	cal, err := calendars.Parse("builtin:us-federal", nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Plan != b.Plan || !strings.Contains(a.Plan, "calendar="+cal.Fingerprint()) {
		t.Errorf("plans %q and %q, want equal ones holding the fingerprint %s", a.Plan, b.Plan, cal.Fingerprint())
	}
	// Christmas 2022 is a Sunday, observed on Monday: 09:00 that day rolls to Tuesday.
	next := a.Schedule.Next(time.Date(2022, 12, 25, 12, 0, 0, 0, time.UTC))
	if want := time.Date(2022, 12, 27, 9, 0, 0, 0, cal.Location()); !next.Equal(want) {
		t.Errorf("next after 2022-12-25 noon: %v, want %v", next, want)
	}

	spec.Calendar = "builtin:us-federl"
	_, err = compile.Compile(spec, "payroll", asked, nil)
	var fe *kvstore.FieldError
	if !errors.As(err, &fe) || fe.Field != "calendar" || !errors.Is(err, calendars.ErrNotFound) || !strings.Contains(err.Error(), "did you mean builtin:us-federal?") {
		t.Errorf("unknown builtin: %v", err)
	}
}
