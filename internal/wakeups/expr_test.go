package wakeups_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestEvalWhenExpr: expressions over the payload and now, in a zone and
// against a calendar (nine to six, Monday to Friday, New York).
func TestEvalWhenExpr(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	cal, err := calendar.Parse([]byte(`{"zone": "America/New_York", "holidays": [{"name": "Christmas Day", "date": "12-25"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	friday := time.Date(2026, 12, 4, 17, 0, 0, 0, ny) // Friday 17:00
	payload := []byte(`{"due_at": "2026-12-31T10:00:00Z", "days": 3, "sla": "36h", "name": "x"}`)
	for _, tt := range []struct {
		expr string
		want string
	}{
		{`date(payload.due_at) - duration("24h")`, "2026-12-30T10:00:00Z"},
		{`now + duration(payload.sla)`, "2026-12-06T05:00:00-05:00"},
		{`date("2026-12-31 09:30") + duration("1h")`, "2026-12-31T10:30:00-05:00"},
		{`date("31/12/2026 09:30", "02/01/2006 15:04", "Europe/Paris")`, "2026-12-31T09:30:00+01:00"},
		{`addWorking(now, "16h")`, "2026-12-08T15:00:00-05:00"}, // 1 h Friday, 9 Monday, 6 Tuesday
		{`addWorking(now, duration("90m"))`, "2026-12-07T09:30:00-05:00"},
		{`addWorkingDays(now, payload.days)`, "2026-12-09T17:00:00-05:00"},
		{`addWorkingDays(date("2026-12-24"), 1)`, "2026-12-28T00:00:00-05:00"}, // the zone reads the date; Christmas skipped
		{`now.Hour() >= 17 ? addWorkingDays(now, 1) : now + duration("1h")`, "2026-12-07T17:00:00-05:00"},
		{"date(payload.due_at)\n  - duration(\"1h\")", "2026-12-31T09:00:00Z"},
		// Both ways: 48 working hours (nine to six) before a deadline,
		// three working days before a date, a zero step rolls.
		{`addWorking(date("2026-12-21 11:00"), "-48h")`, "2026-12-11T17:00:00-05:00"},
		{`addWorking(date(payload.due_at), duration("-1h"))`, "2026-12-30T17:00:00-05:00"}, // 05:00 is before the day's hours
		{`addWorkingDays(date("2026-12-28"), -3)`, "2026-12-22T00:00:00-05:00"},            // Christmas skipped
		{`addWorkingDays(date("2026-12-25 10:00"), 0)`, "2026-12-28T10:00:00-05:00"},
		{`addWorking(date("2026-12-05"), "0h")`, "2026-12-07T09:00:00-05:00"},
		// Counts: [a, b), in working time and working days.
		{`now + workingTimeBetween(date("2026-12-07 09:00"), date("2026-12-08 10:00"))`, "2026-12-05T03:00:00-05:00"},
		{`workingDaysBetween(now, date("2026-12-31")) == 18 ? date(payload.due_at) : now`, "2026-12-31T10:00:00Z"},
		{`workingDaysBetween(date("2026-12-31"), now) == -18 ? date(payload.due_at) : now`, "2026-12-31T10:00:00Z"},
	} {
		got, err := wakeups.EvalWhenExpr(tt.expr, wakeups.ExprEnv{Now: friday, Zone: ny, Calendar: cal, Payload: payload})
		if err != nil || !got.Equal(mustTime(t, tt.want)) {
			t.Errorf("%s = %v, %v; want %s", tt.expr, got, err, tt.want)
		}
	}
}

// TestEvalWhenExprErrors: every error names the expression and, where it
// is at fault, the line and column; results that are no time or in the
// past are refused; the environment holds payload and now only.
func TestEvalWhenExprErrors(t *testing.T) {
	now := time.Date(2026, 12, 4, 22, 0, 0, 0, time.UTC)
	payload := []byte(`{"due_at": "2026-12-01T10:00:00Z", "n": 3}`)
	for _, tt := range []struct {
		expr     string
		noCal    bool
		line     int
		col      int
		contains string
	}{
		{"date(payload.due_at) +", false, 1, 22, "unexpected token EOF"},
		{"now +\n  nope", false, 2, 3, "unknown name nope"},
		{`now()`, false, 1, 1, "not callable"},                  // expr's clock is not the timer's
		{`os.Getenv("HOME")`, false, 1, 1, "unknown name os"},   // nothing but payload and now
		{`addWorking(now, 3)`, false, 1, 17, "cannot use int"},  // typed
		{`date(payload.due_at)`, false, 0, 0, "is in the past"}, // 2026-12-01 < now
		{`payload.n + 1`, false, 0, 0, "gives a number (4), not a time"},
		{`duration("1h")`, false, 0, 0, "gives a duration (1h0m0s), not a time"},
		{`payload.missing`, false, 0, 0, "gives null, not a time"},
		{`addWorking(now, "16h")`, true, 1, 1, "needs the timer's calendar"},
		{`addWorking(now, "soon")`, false, 1, 1, `duration "soon"`},
		{`addWorkingDays(now, payload.n / 2)`, false, 1, 1, "1.5 working days is not a whole number"},
		{`addWorkingDays(now, -36526)`, false, 1, 1, "-36525 to 36525"},
		{`addWorkingDays(now, -1)`, false, 0, 0, "is in the past"},
		{`addWorking(now, "-876601h")`, false, 1, 1, "at most 100 years either way"},
		{`now + workingTimeBetween(now, 3)`, false, 1, 31, "cannot use int"},
		{`now + workingTimeBetween(now, now)`, true, 1, 7, "workingTimeBetween needs the timer's calendar"},
		{`now + duration("1h") * workingDaysBetween(now, now)`, true, 1, 24, "workingDaysBetween needs the timer's calendar"},
		{`len(map(1..10000000, #)) > 0 ? now : now`, false, 1, 10, "memory budget exceeded"},
		{`date("31/12/2026")`, false, 1, 1, `date "31/12/2026": want RFC 3339`},
		{`date(payload.n)`, false, 1, 1, "not a string"},
		{"", false, 0, 0, "empty"},
		{strings.Repeat("1+", 600) + "1", false, 0, 0, "over the maximum of 1024"},
	} {
		var cal *calendar.Calendar
		if !tt.noCal {
			var err error
			if cal, err = calendar.Parse([]byte(`{"zone": "UTC"}`)); err != nil {
				t.Fatal(err)
			}
		}
		_, err := wakeups.EvalWhenExpr(tt.expr, wakeups.ExprEnv{Now: now, Calendar: cal, Payload: payload})
		var ee *wakeups.ExprError
		if !errors.As(err, &ee) {
			t.Errorf("%q: err %v, want an *ExprError", tt.expr, err)
			continue
		}
		if ee.Line != tt.line || ee.Column != tt.col || !strings.Contains(err.Error(), tt.contains) || !strings.Contains(err.Error(), "when_expr") {
			t.Errorf("%q: %v (line %d, column %d); want line %d, column %d, saying %q", tt.expr, err, ee.Line, ee.Column, tt.line, tt.col, tt.contains)
		}
	}
	if err := wakeups.CheckWhenExpr(`date(payload.x) - duration("24h")`); err != nil {
		t.Errorf("CheckWhenExpr of a valid expression: %v", err)
	}
	if err := wakeups.CheckWhenExpr(`date(`); err == nil {
		t.Error("CheckWhenExpr(`date(`): want an error")
	}
}

// TestRegisterWhenExprAndCompute registers computed timers against a real
// server: the expression text is kept in the record with the due time it
// gave; Compute's instant is stored; errors name when_expr or at and store
// nothing.
func TestRegisterWhenExprAndCompute(t *testing.T) {
	t.Parallel()
	_, store := natstest.Start(t).Store(t)
	e := struct {
		store  *jsstore.Store
		client wakeups.Client
	}{store, wakeups.Client{Store: store}}
	ctx := context.Background()
	if _, err := e.store.PutCalendar(ctx, "office", []byte(`{"zone":"UTC","hours":{"mon-sun":["00:00-24:00"]}}`)); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	dueAt := now.Add(72 * time.Hour).UTC().Truncate(time.Second)
	ent, err := e.client.Register(ctx, wakeups.Request{Run: "order-9", Step: "remind", Workflow: "wf",
		WhenExpr: `date(payload.due_at) - duration("24h")`, Payload: []byte(`{"due_at":"` + dueAt.Format(time.RFC3339) + `"}`)})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.store.GetTimer(ctx, ent.Key)
	if err != nil || !got.Timer.Due.Equal(dueAt.Add(-24*time.Hour)) || got.Timer.WhenExpr != `date(payload.due_at) - duration("24h")` {
		t.Fatalf("stored %+v, %v", got.Timer, err)
	}
	ent, err = e.client.Register(ctx, wakeups.Request{Run: "order-9", Step: "work", Workflow: "wf", WhenExpr: `addWorking(now, "2h")`, Calendar: "office"})
	if err != nil {
		t.Fatal(err)
	}
	if d := ent.Timer.Due.Sub(now); d < 2*time.Hour || d > 2*time.Hour+time.Minute {
		t.Fatalf("addWorking(now, 2h) on a 24/7 calendar is due in %v", d)
	}

	// The Go form: a function of the registration instant.
	var seen time.Time
	ent, err = e.client.Register(ctx, wakeups.Request{Run: "order-9", Step: "computed", Workflow: "wf",
		Compute: func(at time.Time) (time.Time, error) { seen = at; return at.Add(90 * time.Minute), nil }})
	if err != nil {
		t.Fatal(err)
	}
	if seen.IsZero() || !ent.Timer.Due.Equal(seen.Add(90*time.Minute).UTC()) || ent.Timer.WhenExpr != "" || ent.Timer.When != "" {
		t.Fatalf("computed timer %+v, function saw %v", ent.Timer, seen)
	}
	if stored, err := e.store.GetTimer(ctx, ent.Key); err != nil || !stored.Timer.Due.Equal(ent.Timer.Due) {
		t.Fatalf("stored %+v, %v", stored.Timer, err)
	}

	for _, bad := range []struct {
		r     wakeups.Request
		field string
		says  string
	}{
		{wakeups.Request{WhenExpr: `date(payload.due_at) +`}, "when_expr", "line 1, column 22"},
		{wakeups.Request{WhenExpr: `"tomorrow"`}, "when_expr", `gives a string ("tomorrow"), not a time`},
		{wakeups.Request{WhenExpr: `now - duration("1h")`}, "when_expr", "is in the past"},
		{wakeups.Request{WhenExpr: `addWorking(now, "1h")`}, "when_expr", "needs the timer's calendar"},
		{wakeups.Request{WhenExpr: `now + duration("1h")`, When: "1h"}, "when", "exactly one of"},
		{wakeups.Request{Compute: func(time.Time) (time.Time, error) { return time.Time{}, errors.New("no due date in the order") }}, "at", "no due date in the order"},
		{wakeups.Request{Compute: func(at time.Time) (time.Time, error) { return at.Add(-time.Minute), nil }}, "at", "in the past"},
	} {
		r := bad.r
		r.Run, r.Step, r.Workflow = "bad", "s", "wf"
		_, err := e.client.Register(ctx, r)
		var fe *kvstore.FieldError
		if !errors.As(err, &fe) || fe.Field != bad.field || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%+v: err %v, want field %s saying %q", bad.r, err, bad.field, bad.says)
		}
	}
	if left, _ := e.client.List(ctx, wakeups.Filter{Run: "bad"}); len(left) != 0 {
		t.Fatalf("bad requests stored %d timers", len(left))
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
