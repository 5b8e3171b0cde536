package wakeups

import (
	"context"
	"time"

	"github.com/jetsched/jetsched/pkg/calendar"
)

// DueExplain is [Form.Due] with, for a working form, how the calendar
// counted: the working intervals used (whours, wminutes), the working days
// counted (wdays), and the days passed over or rolled across, each with
// the rule that took it out. Other forms return a zero Explanation. The
// explanation walks a day at a time: a count over more than
// calendar.MaxExplainDays days is an error wrapping
// calendar.ErrOverBudget.
func (f Form) DueExplain(now time.Time, loc *time.Location, cal *calendar.Calendar) (time.Time, calendar.Explanation, error) {
	return f.DueExplainContext(context.Background(), now, loc, cal)
}

// DueExplainContext is [Form.DueExplain], stopped by ctx (see
// [Form.DueContext]).
func (f Form) DueExplainContext(ctx context.Context, now time.Time, loc *time.Location, cal *calendar.Calendar) (time.Time, calendar.Explanation, error) {
	if f.Kind != KindWorking || cal == nil {
		due, err := f.DueContext(ctx, now, loc, cal)
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
		t, ex, err = cal.AddWorkingExplainContext(ctx, now, f.dur)
	case formWDays:
		t, ex, err = cal.AddWorkingDaysExplainContext(ctx, now, f.n)
	case formWMonths:
		t, ex, err = cal.AddWorkingMonthsExplain(now, f.n)
	case formWYears:
		t, ex, err = cal.AddWorkingYearsExplain(now, f.n)
	}
	if err != nil {
		return time.Time{}, ex, f.dueError(err)
	}
	return t.In(loc), ex, nil
}
