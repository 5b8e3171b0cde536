package adminapi

import (
	"context"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/timearg"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// calendarCount is calendar.count: working days and working time in
// [from, to) against a stored or inline calendar.
func (h handlers) calendarCount(ctx context.Context, body []byte) (any, error) {
	r, err := decode[admin.CalendarCountRequest](body)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	from, err := timearg.ParseTime(r.From, now)
	if err != nil {
		return nil, &kvstore.FieldError{Field: "from", Value: r.From, Reason: err.Error()}
	}
	to, err := timearg.ParseTime(r.To, now)
	if err != nil {
		return nil, &kvstore.FieldError{Field: "to", Value: r.To, Reason: err.Error()}
	}
	var cal *calendar.Calendar
	switch {
	case r.Name != "" && len(r.Calendar) > 0:
		return nil, &kvstore.FieldError{Field: "calendar", Reason: "give name (a stored calendar) or calendar (its JSON form), not both"}
	case len(r.Calendar) > 0:
		if cal, err = calendar.Parse(r.Calendar); err != nil {
			return nil, &kvstore.FieldError{Field: "calendar", Err: err}
		}
	default:
		if err := fieldcheck.Token("calendar", r.Name); err != nil {
			return nil, err
		}
		e, err := h.store.GetCalendar(ctx, r.Name)
		if err != nil {
			return nil, err
		}
		cal = e.Calendar
	}
	return admin.CountCalendar(ctx, r.Name, cal, from, to)
}
