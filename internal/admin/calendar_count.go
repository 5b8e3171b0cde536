package admin

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// CalendarCountRequest asks calendar.count for the working days and the
// working time between two instants, against the stored calendar Name or
// the calendar given inline in Calendar (exactly one). From and To are
// instants in the one time grammar of flags and fields (RFC 3339, "now",
// "now+2h", "now-30m"; internal/timearg); To may be before From.
type CalendarCountRequest struct {
	Name     string          `json:"name,omitempty"`
	Calendar json.RawMessage `json:"calendar,omitempty"`
	From     string          `json:"from"`
	To       string          `json:"to"`
}

// CalendarCountResponse answers calendar.count. The range is half-open,
// [From, To): WorkingDays counts the working days (working hours, no
// holiday) among the dates from From's up to, not including, To's in the
// calendar's zone; WorkingTime is the elapsed time inside working
// intervals (a Go duration, "153h30m0s"; WorkingHours the same in hours).
// Both are negative when To is before From.
type CalendarCountResponse struct {
	Name         string    `json:"name,omitempty"`
	Zone         string    `json:"zone"`
	From         time.Time `json:"from"`
	To           time.Time `json:"to"`
	WorkingDays  int       `json:"working_days"`
	WorkingTime  string    `json:"working_time"`
	WorkingHours float64   `json:"working_hours"`
}

// CountCalendar counts the working days and working time of [from, to)
// against cal (named name, "" for an inline one). A count the calendar
// refuses (over its budget, or longer than a Duration holds) is a
// *kvstore.FieldError on from; a context's end is returned as it is.
func CountCalendar(ctx context.Context, name string, cal *calendar.Calendar, from, to time.Time) (CalendarCountResponse, error) {
	out := CalendarCountResponse{Name: name, Zone: cal.Location().String(), From: from.In(cal.Location()), To: to.In(cal.Location())}
	days, err := cal.WorkingDaysBetween(ctx, from, to)
	if err != nil {
		return out, countError(err)
	}
	work, err := cal.WorkingTimeBetween(ctx, from, to)
	if err != nil {
		return out, countError(err)
	}
	out.WorkingDays, out.WorkingTime, out.WorkingHours = days, work.String(), work.Hours()
	return out, nil
}

// countError is a count's error: the input's fault unless a context ended.
func countError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &kvstore.FieldError{Field: "from", Reason: err.Error(), Err: err}
}
