package jsstore

import (
	"github.com/jetsched/jetsched/calendars"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// CheckStoredCalendarName checks the name of a calendar in the calendars
// bucket: a token, and not in the shipped calendars' namespace (builtin:),
// which is read-only.
func CheckStoredCalendarName(name string) error {
	if calendars.IsBuiltin(name) {
		return fieldcheck.New("calendar", name, "names starting with "+calendars.Prefix+" are the shipped calendars, which cannot be written or removed; store yours under another name")
	}
	return fieldcheck.Token("calendar", name)
}

// CheckCalendarRef checks a calendar name to read: a shipped calendar's
// (builtin:NAME) or a stored one's.
func CheckCalendarRef(name string) error { return fieldcheck.CalendarRef("calendar", name) }

// builtinCalendar is the shipped calendar name as a CalendarEntry
// (revision 0); a name that does not ship is a FieldError.
func builtinCalendar(name string) (CalendarEntry, error) {
	cal, err := calendars.Parse(name, nil)
	if err != nil {
		return CalendarEntry{Name: name}, &kvstore.FieldError{Field: "calendar", Value: name, Err: err}
	}
	return CalendarEntry{Name: name, Calendar: cal}, nil
}
