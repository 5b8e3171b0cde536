package wakeups

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/labels"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Request registers a timer. Exactly one of When, WhenExpr, At and
// Compute gives the due time.
type Request struct {
	// Run and Step identify the timer: any characters.
	Run, Step string
	// Workflow is the subject token: sched.wakeup.<workflow>.
	Workflow string
	// When is a form such as "1h30m", "02:00", "2026-12-31 23:59" or
	// "48 whours" (see ParseWhen), read in Zone and against Calendar.
	When string
	// WhenExpr is an expression over the payload and now, evaluated once,
	// at registration (see EvalWhenExpr): `date(payload.due_at) -
	// duration("24h")`, `addWorking(now, "16h")` against Calendar. It is
	// kept in the timer record.
	WhenExpr string
	// At is an absolute due time (the wire form of a computed timer).
	At time.Time
	// Compute is evaluated once, now; the instant it returns is stored. It
	// must be in the future.
	Compute Computed
	// Zone is the IANA zone of time-of-day and date forms. Default UTC,
	// or the calendar's zone.
	Zone string
	// Calendar names a calendar in sched_calendars, for working forms.
	Calendar string
	// Payload is the wakeup message body (any JSON).
	Payload json.RawMessage
	// Condition is a token the worker checks before acting (the
	// Sched-Condition header); with ConditionKey, the value the scheduler
	// checks.
	Condition string
	// ConditionKey is "BUCKET/KEY", a KV key the workflow side keeps
	// current: when the timer falls due the scheduler reads it, and drops
	// the timer as stale, unpublished, unless it holds Condition byte for
	// byte. The bucket must exist at registration.
	ConditionKey string
	// ExpireAfter drops the timer, recorded as expired, if it has not been
	// delivered this long after it was due. Zero: never.
	ExpireAfter time.Duration
	// Labels are key=value pairs operators select timers by
	// (kvstore.Timer.Labels).
	Labels map[string]string
}

// Outcomes of Cancel.
const (
	OutcomeCancelled = "cancelled"
	// OutcomeFired: a scheduler had already claimed the timer; the cancel
	// lost the race. It is being fired, or, when its condition key no
	// longer holds, dropped as stale: the ledger says which (and a worker's
	// condition check drops a wakeup that raced the cancel).
	OutcomeFired = "fired"
)

// Client registers, cancels and lists timers. The zero Clock is the system
// clock.
type Client struct {
	Store *jsstore.Store
	Clock clock.Clock
	// ConditionBuckets, when set, are the only KV buckets a condition key
	// may name: the admin API sets the scheduler's own list (scheduler run
	// --condition-buckets), and a key naming another bucket is refused
	// (field condition_key) before the bucket is even looked up; an empty
	// non-nil list refuses every condition key. Nil leaves the check to
	// the scheduler that fires the timer, which reports such a timer
	// invalid and never fires it.
	ConditionBuckets []string
}

func field(name, value, reason string) error {
	return &kvstore.FieldError{Field: name, Value: value, Reason: reason}
}

// Register validates r, computes its due time and stores the timer,
// replacing one pending under the same (run, step). Errors are
// *kvstore.FieldError naming the field; nothing is stored on error.
func (c Client) Register(ctx context.Context, r Request) (kvstore.TimerEntry, error) {
	return c.register(ctx, r, 0)
}

func (c Client) register(ctx context.Context, r Request, rearms int) (kvstore.TimerEntry, error) {
	now := c.Clock.Now()
	if err := fieldcheck.TimerID("run", r.Run); err != nil {
		return kvstore.TimerEntry{}, &kvstore.FieldError{Field: "run", Err: err}
	}
	if err := fieldcheck.TimerID("step", r.Step); err != nil {
		return kvstore.TimerEntry{}, &kvstore.FieldError{Field: "step", Err: err}
	}
	if err := kvstore.ValidateWorkflow(r.Workflow); err != nil {
		return kvstore.TimerEntry{}, err
	}
	if err := fieldcheck.JSON("payload", r.Payload); err != nil {
		return kvstore.TimerEntry{}, err
	}
	if err := fieldcheck.Text("condition", r.Condition, kvstore.MaxNoteBytes); err != nil {
		return kvstore.TimerEntry{}, err
	}
	if err := c.checkConditionKey(ctx, r); err != nil {
		return kvstore.TimerEntry{}, err
	}
	if r.ExpireAfter < 0 {
		return kvstore.TimerEntry{}, field("expire_after", r.ExpireAfter.String(), "must not be negative")
	}
	set := 0
	for _, b := range []bool{r.When != "", r.WhenExpr != "", !r.At.IsZero(), r.Compute != nil} {
		if b {
			set++
		}
	}
	if set != 1 {
		return kvstore.TimerEntry{}, field("when", r.When, "give exactly one of when, when_expr, at and a computed time")
	}
	if r.WhenExpr != "" {
		if err := CheckWhenExpr(r.WhenExpr); err != nil { // before reading the calendar
			return kvstore.TimerEntry{}, &kvstore.FieldError{Field: "when_expr", Err: err}
		}
	}
	var cal *calendar.Calendar
	if r.Calendar != "" {
		e, err := c.Store.GetCalendar(ctx, r.Calendar)
		if errors.Is(err, kvstore.ErrNotFound) {
			return kvstore.TimerEntry{}, field("calendar", r.Calendar, "no such calendar in sched_calendars")
		}
		if err != nil {
			return kvstore.TimerEntry{}, err
		}
		cal = e.Calendar
	}
	zone := r.Zone
	if zone == "" && cal != nil {
		zone = cal.Location().String()
	}
	loc, err := cronx.LoadZone(zone)
	if err != nil {
		return kvstore.TimerEntry{}, &kvstore.FieldError{Field: "zone", Value: zone, Err: err}
	}
	var due time.Time
	switch {
	case r.When != "":
		f, err := ParseWhen(r.When)
		if err != nil {
			return kvstore.TimerEntry{}, &kvstore.FieldError{Field: "when", Value: r.When, Err: err}
		}
		if due, err = f.DueContext(ctx, now, loc, cal); err != nil {
			if isContextErr(err) {
				return kvstore.TimerEntry{}, err
			}
			return kvstore.TimerEntry{}, &kvstore.FieldError{Field: "when", Value: r.When, Err: err}
		}
	case r.WhenExpr != "":
		due, err = EvalWhenExprContext(ctx, r.WhenExpr, ExprEnv{Now: now, Zone: loc, Calendar: cal, Payload: r.Payload})
		if err != nil {
			if isContextErr(err) {
				return kvstore.TimerEntry{}, err
			}
			return kvstore.TimerEntry{}, &kvstore.FieldError{Field: "when_expr", Err: err}
		}
	case r.Compute != nil:
		if due, err = r.Compute(now); err != nil {
			return kvstore.TimerEntry{}, &kvstore.FieldError{Field: "at", Reason: "the computed time failed", Err: err}
		}
		if due.Before(now) {
			return kvstore.TimerEntry{}, field("at", due.Format(time.RFC3339Nano),
				fmt.Sprintf("the computed time is in the past (now %s)", now.UTC().Format(time.RFC3339Nano)))
		}
	default:
		due = r.At
	}
	if due.IsZero() {
		return kvstore.TimerEntry{}, field("at", "", "no due time")
	}
	if err := checkDueRange(r, due); err != nil {
		return kvstore.TimerEntry{}, err
	}
	t := kvstore.Timer{
		Run: r.Run, Step: r.Step, Workflow: r.Workflow, Due: due.UTC(), When: r.When, WhenExpr: r.WhenExpr, Zone: zone,
		Calendar: r.Calendar, Payload: r.Payload, Condition: r.Condition, ConditionKey: r.ConditionKey, Created: now.UTC(),
		Rearms: rearms, Labels: r.Labels,
	}
	if r.ExpireAfter > 0 {
		t.ExpiresAt = due.Add(r.ExpireAfter).UTC()
	}
	key := kvstore.TimerKey(r.Run, r.Step)
	// The record as the scheduler will read it passes the scheduler's
	// own check (the two cannot drift).
	if err := kvstore.ValidateTimer(key, t); err != nil {
		return kvstore.TimerEntry{}, err
	}
	action := "wakeup.add"
	if rearms > 0 {
		action = "wakeup.rearm"
	}
	rev, err := c.Store.PutTimerAudited(ctx, action, key, t)
	if err != nil {
		return kvstore.TimerEntry{}, err
	}
	return kvstore.TimerEntry{Key: key, Timer: t, Revision: rev}, nil
}

// checkConditionKey checks a condition key's form, that it comes with the
// value it must hold, and that its bucket exists.
func (c Client) checkConditionKey(ctx context.Context, r Request) error {
	if r.ConditionKey == "" {
		return nil
	}
	bucket, _, err := fieldcheck.ConditionKey(r.ConditionKey)
	if err != nil {
		return &kvstore.FieldError{Field: "condition_key", Value: r.ConditionKey, Err: err}
	}
	if r.Condition == "" {
		return field("condition", "", "a condition key needs the value it must hold (condition)")
	}
	if c.ConditionBuckets != nil {
		if err := jsstore.CheckConditionBucket(r.ConditionKey, c.ConditionBuckets); err != nil {
			return err // before the lookup: whether another's bucket exists is not told
		}
	}
	_, err = c.Store.JetStream().KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return field("condition_key", r.ConditionKey, fmt.Sprintf("no KV bucket %q: create it (the workflow side keeps the key current) before registering", bucket))
	}
	if err != nil {
		return fmt.Errorf("wakeup: condition bucket %s: %w", bucket, err)
	}
	return nil
}

// Cancel removes the pending timer (run, step) by CAS: OutcomeCancelled,
// or OutcomeFired when a scheduler already claimed it. Exactly one of the
// two is recorded in the ledger. kvstore.ErrNotFound: no such timer.
func (c Client) Cancel(ctx context.Context, run, step string) (string, error) {
	for _, id := range []struct{ field, v string }{{"run", run}, {"step", step}} {
		if err := fieldcheck.TimerID(id.field, id.v); err != nil {
			return "", &kvstore.FieldError{Field: id.field, Err: err}
		}
	}
	key := kvstore.TimerKey(run, step)
	for range 20 {
		e, err := c.Store.GetTimer(ctx, key)
		if err != nil {
			return "", err
		}
		if e.Timer.Claim != nil {
			return OutcomeFired, nil
		}
		_, err = c.Store.CancelTimer(ctx, key, e.Revision, map[string]any{"run": run, "step": step, "due": e.Timer.Due})
		if errors.Is(err, kvstore.ErrConflict) {
			continue // re-read: a claim, a re-registration, or a delete
		}
		if err != nil {
			return "", err
		}
		tick := kvstore.Tick{Schedule: "wakeup", SlotID: kvstore.WakeupID(key, e.Timer.Due), Workflow: e.Timer.Workflow,
			Slot: e.Timer.Due, Status: kvstore.TickCancelled, At: c.Clock.Now().UTC()}
		if err := c.Store.PutTick(ctx, tick); err != nil {
			return OutcomeCancelled, fmt.Errorf("wakeup: cancelled, but the ledger write failed: %w", err)
		}
		return OutcomeCancelled, nil
	}
	return "", fmt.Errorf("wakeup: timer %s kept changing; cancel gave up", key)
}

// CancelRun cancels every pending timer of run (it left the activity) and
// returns how many were cancelled.
func (c Client) CancelRun(ctx context.Context, run string) (int, error) {
	if err := fieldcheck.TimerID("run", run); err != nil {
		return 0, &kvstore.FieldError{Field: "run", Err: err}
	}
	timers, err := c.Store.ListTimers(ctx, kvstore.TimerRunFilter(run))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range timers {
		out, err := c.Cancel(ctx, e.Timer.Run, e.Timer.Step)
		if err != nil && !errors.Is(err, kvstore.ErrNotFound) {
			return n, err
		}
		if out == OutcomeCancelled {
			n++
		}
	}
	return n, nil
}

// Filter selects timers for List.
type Filter struct {
	Run      string
	Workflow string
	// Selector keeps the timers whose labels (Request.Labels) match a
	// label selector, as `scheduler wakeup ls -l` takes it: requirements
	// joined by commas, each key=value, key!=value, key in (v1,v2), key
	// notin (v1,v2), key or !key. An invalid one is a *kvstore.FieldError
	// naming the field selector.
	Selector string
}

// List returns the pending timers of a run, of a workflow, or all, that
// f's label selector keeps.
func (c Client) List(ctx context.Context, f Filter) ([]kvstore.TimerEntry, error) {
	sel, err := labels.Parse("selector", f.Selector)
	if err != nil {
		return nil, err
	}
	filter := ">"
	if f.Run != "" {
		filter = kvstore.TimerRunFilter(f.Run)
	}
	all, err := c.Store.ListTimers(ctx, filter)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, e := range all {
		if (f.Workflow == "" || e.Timer.Workflow == f.Workflow) && sel.Matches(e.Timer.Labels) {
			out = append(out, e)
		}
	}
	return out, nil
}

// Rearm answers a wakeup with "not ready, retry at": it registers the
// timer again for at, with the message's workflow, condition (and
// condition key), labels and payload
// (the seed's re-enter PENDING).
func (c Client) Rearm(ctx context.Context, m Meta, payload []byte, at time.Time) (kvstore.TimerEntry, error) {
	if !at.After(c.Clock.Now()) {
		return kvstore.TimerEntry{}, field("at", at.Format(time.RFC3339), "a re-armed timer must be due in the future")
	}
	return c.register(ctx, Request{Run: m.Run, Step: m.Step, Workflow: m.Workflow, At: at, Payload: payload,
		Condition: m.Condition, ConditionKey: m.ConditionKey, Labels: m.Labels}, m.Rearms+1)
}

// checkDueRange refuses a due time, or an expiry, outside the supported
// time range (fieldcheck.Time), naming the input it came from.
func checkDueRange(r Request, due time.Time) error {
	name := "at"
	switch {
	case r.When != "":
		name = "when"
	case r.WhenExpr != "":
		name = "when_expr"
	}
	if err := fieldcheck.Time(name, due); err != nil {
		return err
	}
	if r.ExpireAfter > 0 && !kvstore.InTimeRange(due.Add(r.ExpireAfter)) {
		return field("expire_after", r.ExpireAfter.String(), "the due time plus it is outside the supported time range "+fieldcheck.TimeRange)
	}
	return nil
}
