package compile

import (
	"github.com/jetsched/jetsched/calendars"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/pkg/calendar"
)

// builtin resolves a shipped calendar (calendars.Prefix), from the binary
// rather than a CalendarSource, parsed once per Interner: the same
// calendar, so the same plan, on every instance running this binary.
func (in *Interner) builtin(name string) (*calendar.Calendar, error) {
	if in != nil {
		if cal, ok := in.builtins.Load(name); ok {
			return cal.(*calendar.Calendar), nil
		}
	}
	cal, err := calendars.Parse(name, in.zones())
	if err != nil {
		return nil, &fieldcheck.FieldError{Field: "calendar", Value: name, Err: err}
	}
	if in != nil {
		shared, _ := in.builtins.LoadOrStore(name, cal)
		cal = shared.(*calendar.Calendar)
	}
	return cal, nil
}
