package wakeups_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/testcal"
	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/calendar"
)

// minuteAWeek is open one minute a week, with holidays.
const minuteAWeek = testcal.MinuteAWeek

func minuteCalendar(t testing.TB) *calendar.Calendar {
	t.Helper()
	c, err := calendar.Parse([]byte(minuteAWeek))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDueWorkingPastYear9999: the most a form accepts (876000 whours, 100
// years' worth) against a calendar open a minute a week ends after year
// 9999: a *FormError wrapping calendar.ErrOutOfRange, the form's fault,
// not a time no record can hold. So does addWorking in an expression.
func TestDueWorkingPastYear9999(t *testing.T) {
	t.Parallel()
	c := minuteCalendar(t)
	now := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	for _, when := range []string{"30000 whours", "876000 whours", "52560000 wminutes"} {
		f, err := wakeups.ParseWhen(when)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Due(now, nil, c)
		var fe *wakeups.FormError
		if !errors.As(err, &fe) || !errors.Is(err, calendar.ErrOutOfRange) || !strings.Contains(err.Error(), "9999") {
			t.Errorf("%s: %v, want a *FormError wrapping ErrOutOfRange", when, err)
		}
	}
	_, err := wakeups.EvalWhenExpr(`addWorking(now, "876000h")`, wakeups.ExprEnv{Now: now, Calendar: c})
	var ee *wakeups.ExprError
	if !errors.As(err, &ee) || !errors.Is(err, calendar.ErrOutOfRange) {
		t.Errorf("addWorking(now, 876000h): %v, want an *ExprError wrapping ErrOutOfRange", err)
	}
}

// TestDueStopsWithItsContext: a cancelled context stops a working count,
// and the error is the context's, not the form's or the expression's.
func TestDueStopsWithItsContext(t *testing.T) {
	t.Parallel()
	c := minuteCalendar(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	now := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	f, err := wakeups.ParseWhen("6000 whours")
	if err != nil {
		t.Fatal(err)
	}
	var fe *wakeups.FormError
	if _, err := f.DueContext(ctx, now, nil, c); !errors.Is(err, context.Canceled) || errors.As(err, &fe) {
		t.Errorf("DueContext with a cancelled context: %v", err)
	}
	if _, _, err := f.DueExplainContext(ctx, now, nil, c); !errors.Is(err, context.Canceled) || errors.As(err, &fe) {
		t.Errorf("DueExplainContext with a cancelled context: %v", err)
	}
	var ee *wakeups.ExprError
	_, err = wakeups.EvalWhenExprContext(ctx, `addWorkingDays(now, 30000)`, wakeups.ExprEnv{Now: now, Calendar: c})
	if !errors.Is(err, context.Canceled) || errors.As(err, &ee) {
		t.Errorf("EvalWhenExprContext with a cancelled context: %v", err)
	}
}

// BenchmarkDueWHoursMinuteAWeek is `wakeup add --when "876000 whours"` on
// a calendar open a minute a week: the form's Due, which answers
// calendar.ErrOutOfRange after summing every year to 9999.
func BenchmarkDueWHoursMinuteAWeek(b *testing.B) {
	c := minuteCalendar(b)
	f, err := wakeups.ParseWhen("876000 whours")
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		if _, err := f.Due(now, nil, c); !errors.Is(err, calendar.ErrOutOfRange) {
			b.Fatal(err)
		}
	}
}
