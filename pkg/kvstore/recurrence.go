package kvstore

import (
	"cmp"
	"fmt"
	"time"
)

// RecurrenceField is the field a *FieldError names when a spec has no
// recurrence or more than one: its Value lists those set ("every,cron").
const RecurrenceField = "recurrence"

// RecurrenceString is the recurrence as a person reads it, e.g.
// "cron 0 9 * * 1-5 (Europe/Paris)", "every 5s" or "business day 2 at
// 10:00 (ecb)".
func (s Spec) RecurrenceString() string {
	var r string
	switch {
	case s.Cron != "":
		r = "cron " + s.Cron
		if s.TZ != "" {
			r += " (" + s.TZ + ")"
		}
	case s.Every != "":
		r = "every " + s.Every
		switch {
		case s.Align == AlignEpoch && s.Phase != "":
			r += " from the epoch + " + s.Phase
		case s.Align == AlignEpoch:
			r += " from the epoch"
		}
		if s.Align != "" && s.TZ != "" {
			r += " (" + s.TZ + ")"
		}
	case s.At != nil:
		r = "at " + s.At.Format(time.RFC3339)
	case s.BusinessDay != 0:
		r = fmt.Sprintf("business day %d at %s", s.BusinessDay, cmp.Or(s.Time, "00:00"))
	}
	switch {
	case s.Calendar != "":
		r += " [" + s.Calendar + "]"
	case len(s.CalendarInline) > 0:
		r += " [inline calendar]"
	}
	return r
}
