package wakeup

import (
	"time"

	"github.com/jetsched/jetsched/pkg/calendar"
)

// DueExplain is [Form.Due] with, for a working form, how the calendar
// counted: the working intervals used (whours, wminutes), the working days
// counted (wdays), and the days passed over or rolled across, each with
// the rule that took it out. Other forms return a zero Explanation.
func (f Form) DueExplain(now time.Time, loc *time.Location, cal *calendar.Calendar) (time.Time, calendar.Explanation, error) {
	if f.Kind != KindWorking || cal == nil {
		due, err := f.Due(now, loc, cal)
		return due, calendar.Explanation{}, err
	}
	if loc == nil {
		loc = time.UTC
	}
	now = now.Round(0)
	var t time.Time
	var ex calendar.Explanation
	var err error
	switch f.unit {
	case formWHours, formWMinutes:
		t, ex, err = cal.AddWorkingExplain(now, f.dur)
	case formWDays:
		t, ex, err = cal.AddWorkingDaysExplain(now, f.n)
	case formWMonths:
		t, ex, err = cal.AddWorkingMonthsExplain(now, f.n)
	case formWYears:
		t, ex, err = cal.AddWorkingYearsExplain(now, f.n)
	}
	if err != nil {
		return time.Time{}, ex, &FormError{Text: f.Text, Reason: err.Error(), Err: err}
	}
	return t.In(loc), ex, nil
}
