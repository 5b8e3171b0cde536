package kvstore

import (
	"fmt"
	"time"

	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
)

// fireHorizon is how far ahead a recurring schedule with a calendar must
// have a slot: one whose calendar removes every occurrence for this long
// is refused at registration, and reported invalid when a calendar change
// does that to it.
const fireHorizon = 10 * 365 * 24 * time.Hour

// checkFires returns a *FieldError naming the calendar when a recurring
// schedule's calendar leaves it no slot within fireHorizon after now (or
// after its start, if later): the holidays cover every occurrence, or the
// calendar has no business day. A cron expression that never fires is
// refused when parsed; one-shots, and schedules without a calendar, are
// not checked here; a schedule whose end or limit has passed has simply
// ended.
func (c Compiled) checkFires(now time.Time) error {
	if c.Calendar == nil {
		return nil
	}
	s, from := c.Schedule, now
	if b, ok := s.(*cronx.Bounded); ok {
		s = b.Schedule
		if b.Start.After(from) {
			from = b.Start.Add(-time.Nanosecond)
		}
	}
	field := c.calendarField.String()
	switch r := s.(type) {
	case calendar.BusinessDay:
		if at := r.Next(from); at.IsZero() || at.Sub(from) > fireHorizon {
			return fieldcheck.New(field, c.calendarName, fmt.Sprintf("the schedule never fires: the calendar has no business day %d in any month of the next 10 years", r.N))
		}
	case calendar.Schedule:
		if _, once := r.Base.(cronx.Once); once {
			return nil
		}
		st := r.Explain(from)
		if !st.At.IsZero() && st.At.Sub(from) <= fireHorizon {
			return nil
		}
		why := "the calendar has no working time left"
		if n := len(st.Skipped); n > 0 {
			last := st.Skipped[n-1]
			why = fmt.Sprintf("the calendar removes every occurrence (%d passed over; the last, %s, by %s)",
				st.SkippedCount, last.Nominal.In(c.Location).Format(time.RFC3339), last.Reason)
		}
		return fieldcheck.New(field, c.calendarName, "the schedule never fires in the next 10 years: "+why)
	}
	return nil
}
