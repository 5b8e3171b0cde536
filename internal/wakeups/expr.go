package wakeups

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"

	"github.com/jetsched/jetsched/internal/textcut"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
)

// Limits of a when_expr: its text, its syntax tree, and the memory its
// evaluation may allocate (ranges, maps, repeated strings). Together they
// bound what one evaluation can cost: the language has no loops but over
// ranges and collections, which the memory budget caps.
const (
	MaxWhenExprBytes  = 1 << 10
	maxWhenExprNodes  = 256
	whenExprMemBudget = 100_000
)

// ExprEnv is what a when_expr is evaluated with.
type ExprEnv struct {
	// Now is the registration instant: the expression's now (in Zone).
	Now time.Time
	// Zone reads dates without an offset (date("2026-12-31")) and is now's
	// zone. Nil: UTC.
	Zone *time.Location
	// Calendar is the timer's calendar, which addWorking and
	// addWorkingDays count against. Nil: they fail.
	Calendar *calendar.Calendar
	// Payload is the timer's payload, the expression's payload (JSON; empty
	// is null).
	Payload json.RawMessage
	// Explain, if set, receives how each addWorking or addWorkingDays
	// call counted (for wakeup preview --explain).
	Explain func(call string, ex calendar.Explanation)

	ctx context.Context // set by EvalWhenExprContext, read by the functions
}

// ExprError reports a when_expr that does not compile, fails while it is
// evaluated, or gives no usable due time (not a time, or in the past).
type ExprError struct {
	// Expr is the expression.
	Expr string
	// Line and Column locate the error (1-based; 0 when it is about the
	// expression as a whole, such as its result).
	Line, Column int
	// Reason says what is wrong.
	Reason string
	// Err is the underlying error, if any.
	Err error
}

// Error formats the error, for example
//
//	wakeup: when_expr "date(payload.due) +": line 1, column 20: unexpected token EOF
func (e *ExprError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("wakeup: when_expr %q: line %d, column %d: %s", e.Expr, e.Line, e.Column, e.Reason)
	}
	return fmt.Sprintf("wakeup: when_expr %q: %s", e.Expr, e.Reason)
}

// Unwrap returns the underlying error, or nil.
func (e *ExprError) Unwrap() error { return e.Err }

// CheckWhenExpr compiles a when_expr without evaluating it: its length,
// syntax, names and types. It is what the CLI checks before connecting;
// EvalWhenExpr checks it again. Errors are *ExprError.
func CheckWhenExpr(text string) error {
	_, err := compileWhenExpr(text, &ExprEnv{})
	return err
}

// EvalWhenExpr evaluates a when_expr, an expression of
// github.com/expr-lang/expr over two names, payload (the timer's payload,
// decoded from JSON) and now (the registration instant, in env.Zone), with
// expr's pure builtins (duration, arithmetic on times and durations,
// string and math functions; not its now(), which would read another
// clock) and three functions of jetsched:
//
//	date(s [, layout [, zone]])  an RFC 3339 instant, or "2026-12-31 23:59[:59]"
//	                      or "2026-12-31" read in env.Zone (or the zone given)
//	addWorking(t, d)      t plus d of working time against env.Calendar (d a
//	                      duration or a string such as "16h", "1h30m" or
//	                      "-48h": a negative d counts back, 0 rolls to
//	                      working time): Calendar.AddWorking
//	addWorkingDays(t, n)  the same wall-clock time n working days later
//	                      (n < 0: earlier; 0: t's date rolled forward to a
//	                      working day): Calendar.AddWorkingDays
//	workingTimeBetween(a, b)  the working time in [a, b), a duration,
//	                      negative when b is before a:
//	                      Calendar.WorkingTimeBetween
//	workingDaysBetween(a, b)  the working days among the dates of [a, b), an
//	                      integer, negative when b is before a:
//	                      Calendar.WorkingDaysBetween
//
// For example `date(payload.due_at) - duration("24h")`,
// `addWorking(now, "16h")` or, 48 working hours before a deadline,
// `addWorking(date(payload.deadline), "-48h")`. Working time and days are
// at most 100 years either way. The expression sees nothing else (no
// variables, no environment, no I/O); its size and the memory its
// evaluation allocates are bounded. The result must be a time, not before
// env.Now. Errors are *ExprError, with the line and column where the
// expression is at fault.
func EvalWhenExpr(text string, env ExprEnv) (time.Time, error) {
	return EvalWhenExprContext(context.Background(), text, env)
}

// EvalWhenExprContext is [EvalWhenExpr], its addWorking and addWorkingDays
// stopped by ctx. When ctx ends first the error wraps ctx's error and is
// not an *ExprError, since the expression is not at fault.
func EvalWhenExprContext(ctx context.Context, text string, env ExprEnv) (time.Time, error) {
	env.ctx = ctx
	if env.Zone == nil {
		env.Zone = time.UTC
	}
	prog, err := compileWhenExpr(text, &env)
	if err != nil {
		return time.Time{}, err
	}
	var payload any
	if len(env.Payload) > 0 {
		if err := json.Unmarshal(env.Payload, &payload); err != nil {
			return time.Time{}, &ExprError{Expr: text, Reason: "payload is not valid JSON", Err: err}
		}
	}
	now := env.Now.Round(0).In(env.Zone)
	machine := vm.VM{MemoryBudget: whenExprMemBudget}
	out, err := machine.Run(prog, map[string]any{"payload": payload, "now": now})
	if err != nil {
		if isContextErr(err) {
			return time.Time{}, fmt.Errorf("wakeup: when_expr %q: %w", text, err)
		}
		return time.Time{}, exprError(text, err)
	}
	due, ok := out.(time.Time)
	switch {
	case !ok:
		return time.Time{}, &ExprError{Expr: text, Reason: fmt.Sprintf("gives %s, not a time", describeValue(out))}
	case due.IsZero():
		return time.Time{}, &ExprError{Expr: text, Reason: "gives the zero time"}
	case due.Before(now):
		return time.Time{}, &ExprError{Expr: text, Reason: fmt.Sprintf("is in the past (%s, now %s)",
			due.Format(time.RFC3339Nano), now.In(due.Location()).Format(time.RFC3339Nano))}
	}
	return due, nil
}

// compileWhenExpr compiles text with the restricted environment, the
// working-time functions bound to env (read when they are called).
func compileWhenExpr(text string, env *ExprEnv) (*vm.Program, error) {
	if text == "" {
		return nil, &ExprError{Expr: text, Reason: "empty"}
	}
	if len(text) > MaxWhenExprBytes {
		return nil, &ExprError{Expr: text[:64] + "…", Reason: fmt.Sprintf("%d bytes is over the maximum of %d", len(text), MaxWhenExprBytes)}
	}
	if env.Zone == nil {
		env.Zone = time.UTC
	}
	types := map[string]any{"payload": map[string]any{}, "now": time.Time{}}
	prog, err := expr.Compile(text,
		expr.Env(types),
		expr.DisableBuiltin("now"),
		expr.MaxNodes(maxWhenExprNodes),
		expr.DisableBuiltin("date"),
		expr.Function("date", env.date, new(func(string) time.Time), new(func(string, string) time.Time),
			new(func(string, string, string) time.Time)),
		expr.Function("addWorking", env.addWorking,
			new(func(time.Time, string) time.Time), new(func(time.Time, time.Duration) time.Time)),
		expr.Function("addWorkingDays", env.addWorkingDays, new(func(time.Time, int) time.Time), new(func(time.Time, float64) time.Time)),
		expr.Function("workingTimeBetween", env.workingTimeBetween, new(func(time.Time, time.Time) time.Duration)),
		expr.Function("workingDaysBetween", env.workingDaysBetween, new(func(time.Time, time.Time) int)),
	)
	if err != nil {
		return nil, exprError(text, err)
	}
	return prog, nil
}

// dateLayouts are the forms date(s) reads, in the expression's zone
// unless they carry an offset.
var dateLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04",
	"2006-01-02 15:04", "2006-01-02"}

// date is the expression's date(s [, layout [, zone]]): an RFC 3339
// instant, or a date and time read in the zone (the timer's unless zone
// is given), as expr's builtin date does, whose zone handling fails
// inside a function's arguments.
func (env *ExprEnv) date(args ...any) (any, error) {
	s, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("date: the argument is %s, not a string", describeValue(args[0]))
	}
	loc := env.Zone
	layouts := dateLayouts
	if len(args) > 1 {
		layout, ok := args[1].(string)
		if !ok {
			return nil, fmt.Errorf("date: the layout is %s, not a string", describeValue(args[1]))
		}
		layouts = []string{layout}
	}
	if len(args) > 2 {
		name, ok := args[2].(string)
		if !ok {
			return nil, fmt.Errorf("date: the zone is %s, not a string", describeValue(args[2]))
		}
		l, err := cronx.LoadZone(name)
		if err != nil {
			return nil, fmt.Errorf("date: zone %q: %w", name, err)
		}
		loc = l
	}
	for _, layout := range layouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	if len(args) > 1 {
		return nil, fmt.Errorf("date %q does not match the layout %q", s, layouts[0])
	}
	return nil, fmt.Errorf(`date %q: want RFC 3339 ("2026-12-31T23:59:00Z"), "2026-12-31 23:59[:59]" or "2026-12-31", or give a layout`, s)
}

// context is the evaluation's context (background outside
// EvalWhenExprContext).
func (env *ExprEnv) context() context.Context {
	if env.ctx == nil {
		return context.Background()
	}
	return env.ctx
}

// addWorking is the expression's addWorking(t, d).
func (env *ExprEnv) addWorking(args ...any) (any, error) {
	t, ok := args[0].(time.Time)
	if !ok {
		return nil, fmt.Errorf("addWorking: the first argument is %s, not a time", describeValue(args[0]))
	}
	var d time.Duration
	switch v := args[1].(type) {
	case time.Duration:
		d = v
	case string:
		body, neg := strings.CutPrefix(strings.TrimSpace(v), "-")
		p, err := cronx.ParseDuration(body)
		if err != nil {
			return nil, fmt.Errorf("addWorking: duration %q: %w", v, err)
		}
		if d = p; neg {
			d = -p
		}
	default:
		return nil, fmt.Errorf("addWorking: the second argument is %s, not a duration", describeValue(args[1]))
	}
	if env.Calendar == nil {
		return nil, errors.New("addWorking needs the timer's calendar (--calendar)")
	}
	if d < -formMaxSpan || d > formMaxSpan {
		return nil, fmt.Errorf("addWorking: working time %v: at most 100 years either way", d)
	}
	if env.Explain == nil {
		return env.Calendar.AddWorkingContext(env.context(), t, d)
	}
	r, ex, err := env.Calendar.AddWorkingExplainContext(env.context(), t, d)
	if err == nil {
		env.Explain(fmt.Sprintf("addWorking(%s, %s)", t.Format(time.RFC3339), cronx.FormatDuration(d)), ex)
	}
	return r, err
}

// addWorkingDays is the expression's addWorkingDays(t, n).
func (env *ExprEnv) addWorkingDays(args ...any) (any, error) {
	t, ok := args[0].(time.Time)
	if !ok {
		return nil, fmt.Errorf("addWorkingDays: the first argument is %s, not a time", describeValue(args[0]))
	}
	var n int
	switch v := args[1].(type) {
	case int:
		n = v
	case float64: // a number from the payload
		if v != math.Trunc(v) || v > math.MaxInt32 || v < math.MinInt32 {
			return nil, fmt.Errorf("addWorkingDays: %v working days is not a whole number", v)
		}
		n = int(v)
	default:
		return nil, fmt.Errorf("addWorkingDays: the second argument is %s, not a number", describeValue(args[1]))
	}
	if env.Calendar == nil {
		return nil, errors.New("addWorkingDays needs the timer's calendar (--calendar)")
	}
	if n < -36525 || n > 36525 {
		return nil, fmt.Errorf("addWorkingDays: %d working days: must be -36525 to 36525 (100 years either way)", n)
	}
	if env.Explain == nil {
		return env.Calendar.AddWorkingDaysContext(env.context(), t, n)
	}
	r, ex, err := env.Calendar.AddWorkingDaysExplainContext(env.context(), t, n)
	if err == nil {
		env.Explain(fmt.Sprintf("addWorkingDays(%s, %d)", t.Format(time.RFC3339), n), ex)
	}
	return r, err
}

// betweenArgs reads the two instants of a count's call.
func (env *ExprEnv) betweenArgs(name string, args []any) (a, b time.Time, err error) {
	for i, v := range args[:2] {
		t, ok := v.(time.Time)
		if !ok {
			return a, b, fmt.Errorf("%s: argument %d is %s, not a time", name, i+1, describeValue(v))
		}
		if i == 0 {
			a = t
		} else {
			b = t
		}
	}
	if env.Calendar == nil {
		return a, b, fmt.Errorf("%s needs the timer's calendar (--calendar)", name)
	}
	return a, b, nil
}

// workingTimeBetween is the expression's workingTimeBetween(a, b).
func (env *ExprEnv) workingTimeBetween(args ...any) (any, error) {
	a, b, err := env.betweenArgs("workingTimeBetween", args)
	if err != nil {
		return nil, err
	}
	return env.Calendar.WorkingTimeBetween(env.context(), a, b)
}

// workingDaysBetween is the expression's workingDaysBetween(a, b).
func (env *ExprEnv) workingDaysBetween(args ...any) (any, error) {
	a, b, err := env.betweenArgs("workingDaysBetween", args)
	if err != nil {
		return nil, err
	}
	return env.Calendar.WorkingDaysBetween(env.context(), a, b)
}

// exprError converts an error of expr into an *ExprError with its
// position.
func exprError(text string, err error) error {
	e := &ExprError{Expr: text, Reason: err.Error(), Err: err}
	var fe *file.Error
	if errors.As(err, &fe) {
		e.Line, e.Column, e.Reason = fe.Line, fe.Column+1, fe.Message
		if fe.Line == 0 {
			e.Column = 0
		}
	}
	return e
}

// describeValue names a value's type for an error: "a number (3)", "a
// string", "null".
func describeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("a string (%q)", textcut.Cut(x, 40, "…"))
	case int, int64, float64:
		return fmt.Sprintf("a number (%v)", x)
	case bool:
		return fmt.Sprintf("a boolean (%v)", x)
	case time.Duration:
		return fmt.Sprintf("a duration (%v)", x)
	}
	return fmt.Sprintf("a %T", v)
}
