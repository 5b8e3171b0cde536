package calendar

import (
	"context"
	"time"
)

// Explanation tells how working-time arithmetic counted: the working time
// it used, the working days it counted and the days it passed over, each
// with the rule that took it out. The Explain variants of AddWorking,
// AddWorkingDays, AddWorkingMonths and AddWorkingYears return one; they
// compute the same result as the plain calls.
type Explanation struct {
	// From is the instant counted from, in the calendar's zone.
	From time.Time `json:"from"`
	// Intervals are the parts of working intervals AddWorking used, in
	// the order counted (latest first when counting back); their lengths
	// add up to the duration asked for.
	Intervals []WorkedInterval `json:"intervals,omitempty"`
	// Days are the working days AddWorkingDays counted (at 00:00 in the
	// calendar's zone), in the order counted (latest first when counting
	// back).
	Days []time.Time `json:"days,omitempty"`
	// Skipped are the days passed over: days without working time that
	// AddWorking and AddWorkingDays went through, and the days
	// AddWorkingMonths rolled its result over.
	Skipped []SkippedDay `json:"skipped,omitempty"`
	// Result is the instant the count ended at.
	Result time.Time `json:"result"`
}

// WorkedInterval is working time used by a count: [Start, End).
type WorkedInterval struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// SkippedDay is a day a count passed over.
type SkippedDay struct {
	// Date is the day at 00:00 in the calendar's zone (or when a DST gap
	// that swallows midnight ends).
	Date time.Time `json:"date"`
	// Reason is the rule that leaves it without working time: `holiday
	// "Christmas Day" (fixed 12-25, observed nearest)` or `no working
	// hours on Saturday`.
	Reason string `json:"reason"`
}

// AddWorkingExplainContext is [Calendar.AddWorkingContext] with the
// explanation of how it counted: the working intervals used and the days
// passed over. It walks a day at a time to list them: past
// [MaxExplainDays] days the error wraps [ErrOverBudget]; when ctx ends
// first, it wraps ctx's error.
func (c *Calendar) AddWorkingExplainContext(ctx context.Context, t time.Time, d time.Duration) (time.Time, Explanation, error) {
	ex := c.explanation(t)
	r, err := c.addWorkingWalk(ctx, t, d, &ex)
	ex.Result = r
	return r, ex, err
}

// AddWorkingDaysExplainContext is [Calendar.AddWorkingDaysContext] with
// the explanation of how it counted: the working days counted and the days
// passed over. Past [MaxExplainDays] days the error wraps [ErrOverBudget];
// when ctx ends first, it wraps ctx's error.
func (c *Calendar) AddWorkingDaysExplainContext(ctx context.Context, t time.Time, n int) (time.Time, Explanation, error) {
	ex := c.explanation(t)
	r, err := c.addWorkingDaysWalk(ctx, t, n, &ex)
	ex.Result = r
	return r, ex, err
}

// AddWorkingMonthsExplain is [Calendar.AddWorkingMonths] with the
// explanation of the roll: the days the result was moved over.
func (c *Calendar) AddWorkingMonthsExplain(t time.Time, n int) (time.Time, Explanation, error) {
	ex := c.explanation(t)
	r, err := c.addWorkingMonths(t, n, &ex)
	ex.Result = r
	return r, ex, err
}

// AddWorkingYearsExplain is [Calendar.AddWorkingYears] with the
// explanation of the roll.
func (c *Calendar) AddWorkingYearsExplain(t time.Time, n int) (time.Time, Explanation, error) {
	if n < -maxMonths/12 || n > maxMonths/12 {
		_, err := c.AddWorkingYears(t, n)
		return time.Time{}, c.explanation(t), err
	}
	return c.AddWorkingMonthsExplain(t, 12*n)
}

func (c *Calendar) explanation(t time.Time) Explanation {
	return Explanation{From: t.In(c.loc)}
}

// used records working time used; a nil Explanation records nothing.
func (ex *Explanation) used(start, end time.Time) {
	if ex != nil {
		ex.Intervals = append(ex.Intervals, WorkedInterval{Start: start, End: end})
	}
}

// count records a working day counted.
func (ex *Explanation) count(c *Calendar, d date) {
	if ex != nil {
		ex.Days = append(ex.Days, c.atWall(d, 0, 0))
	}
}

// skip records a day passed over, with the rule that took it out.
func (ex *Explanation) skip(c *Calendar, d date) {
	if ex != nil {
		ex.Skipped = append(ex.Skipped, SkippedDay{Date: c.atWall(d, 0, 0), Reason: c.workReason(d)})
	}
}
