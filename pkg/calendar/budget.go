package calendar

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// MaxYear is the last year working-time arithmetic reaches: a result
// after the end of year 9999 in UTC is ErrOutOfRange, since no record's
// RFC 3339 time can hold it.
const MaxYear = 9999

// MaxExplainDays bounds the days an explanation walks through (the
// Explain variants list every working interval, counted day and skipped
// day, so their cost and size grow with the span counted): about 270
// years. Past it the error wraps ErrOverBudget.
const MaxExplainDays = 100_000

// jumpBudget bounds the units of work (days walked, years and weeks
// summed, holiday runs and zone periods looked at) one plain arithmetic
// call may spend: a count from 2026 to the end of year 9999 on a calendar
// with five holiday rules spends about 100,000, a few percent of it; a
// calendar of thousands of rules counted over thousands of years exceeds
// it after about a second of work. Past it the error wraps ErrOverBudget.
const jumpBudget = 1 << 22

// maxTime is the last instant arithmetic returns (see MaxYear), and
// minTime the first (year 1, which RFC 3339 can hold too).
var (
	maxTime = time.Date(MaxYear, time.December, 31, 23, 59, 59, 999_999_999, time.UTC)
	minTime = time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)
)

// stopDays is the unix day (10000-01-03) from which no wall-clock reading
// is in year 9999 UTC, whatever the zone's offset: walks stop there.
var stopDays = daysOf(MaxYear+1, time.January, 3)

// startDays is the unix day (0000-12-30) before which no wall-clock
// reading is in year 1 UTC: backward walks stop there.
var startDays = daysOf(0, time.December, 30)

// meter counts the work of one computation against its budget and
// watches its context, checking the context on the first unit and then
// every 1,024.
type meter struct {
	ctx   context.Context
	what  string // the computation, for errors: "AddWorking"
	over  string // why it is over budget, for errors
	spent int
	limit int
	next  int // spent at which the context is checked next
}

// newMeter starts a meter for one arithmetic call.
func newMeter(ctx context.Context, what string, limit int) *meter {
	return &meter{ctx: ctx, what: what, limit: limit,
		over: fmt.Sprintf("%s needs more than %d steps (a calendar with very many holiday rules, counted over very many years)", what, limit)}
}

// newExplainMeter starts a meter for an explanation, which walks a day
// a step.
func newExplainMeter(ctx context.Context, what string) *meter {
	return &meter{ctx: ctx, what: what, limit: MaxExplainDays,
		over: fmt.Sprintf("explaining %s would list more than %d days; count less, or ask without the explanation", what, MaxExplainDays)}
}

// spend records n units of work; the error wraps ErrOverBudget or the
// context's error.
func (m *meter) spend(n int) error {
	m.spent += n
	if m.spent > m.limit {
		return fmt.Errorf("%w: %s", ErrOverBudget, m.over)
	}
	if m.spent >= m.next {
		m.next = m.spent + 1024
		if err := m.ctx.Err(); err != nil {
			return fmt.Errorf("calendar: %s stopped: %w", m.what, err)
		}
	}
	return nil
}

// outOfRange is the error for a count that ends after year 9999 (or,
// counting backwards, before year 1).
func outOfRange(from time.Time, count string) error {
	end := fmt.Sprintf("after %d-12-31", MaxYear)
	if strings.HasPrefix(count, "-") {
		end = "before 0001-01-01"
	}
	return fmt.Errorf("%w: %s from %s ends %s (the calendar has too little working time for it)",
		ErrOutOfRange, count, from.Format(time.RFC3339), end)
}
