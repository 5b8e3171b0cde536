// Package client is the Go client of jetsched: services declare their
// schedules in code and register them at every start, on every instance;
// operators pause, resume, trigger and backfill them; workflows set and
// cancel timers. It talks to the JetStream buckets directly, with the same
// validation and compare-and-swap as the scheduler CLI; listings (List,
// Schedules) ask the admin API of a running scheduler, which keeps the
// sorted catalogue that makes a page cheap at a million schedules.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/pkg/fire"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/wakeup"
)

// ErrNotFound is returned for a schedule or timer that does not exist.
var ErrNotFound = kvstore.ErrNotFound

// ErrConflict is returned when a schedule is not at the revision an
// IfRevision option expects, or when CreateOnly finds its key taken.
var ErrConflict = kvstore.ErrConflict

// ErrStatic is returned for a put or removal of a static schedule by
// anyone but the Static set that declares it.
var ErrStatic = kvstore.ErrStatic

// Client registers and operates schedules and timers.
type Client struct {
	store *kvstore.Store
	nc    *nats.Conn
}

// New binds to the buckets of a NATS system where `scheduler run` (or
// kvstore.Setup) created them.
func New(ctx context.Context, js jetstream.JetStream) (*Client, error) {
	store, err := kvstore.Open(ctx, js, kvstore.Layout{})
	if err != nil {
		return nil, err
	}
	return &Client{store: store, nc: js.Conn()}, nil
}

// Recurrence says when a schedule fires: Cron, Every, At or BusinessDay.
type Recurrence struct {
	apply func(*kvstore.Spec)
	text  string
}

// Cron fires on a cron expression (5 fields, 6 with seconds first, 7 with a
// year, an @alias, L/W/#/H; docs/cron.md).
func Cron(expr string) Recurrence {
	return Recurrence{apply: func(s *kvstore.Spec) { s.Cron = expr }, text: "cron " + expr}
}

// Every fires every d, on multiples of d since the Unix epoch.
func Every(d time.Duration) Recurrence {
	v := d.String()
	return Recurrence{apply: func(s *kvstore.Spec) { s.Every = v }, text: "every " + v}
}

// At fires once, at t.
func At(t time.Time) Recurrence {
	u := t.UTC()
	return Recurrence{apply: func(s *kvstore.Spec) { s.At = &u }, text: "at " + u.Format(time.RFC3339Nano)}
}

// BusinessDay fires on the n-th business day of each month (-1: the last)
// at clock ("HH:MM") of the calendar (WithCalendar).
func BusinessDay(n int, clock string) Recurrence {
	return Recurrence{apply: func(s *kvstore.Spec) { s.BusinessDay, s.Time = n, clock }, text: fmt.Sprintf("business_day %d %s", n, clock)}
}

// Option refines a schedule.
type Option func(*options)

type options struct {
	key        string
	spec       func(*kvstore.Spec)
	ifRevision uint64
	createOnly bool
}

func specOption(f func(*kvstore.Spec)) Option {
	return func(o *options) {
		prev := o.spec
		o.spec = func(s *kvstore.Spec) {
			if prev != nil {
				prev(s)
			}
			f(s)
		}
	}
}

// WithKey chooses the schedule's key (its id) instead of the default hash.
func WithKey(key string) Option { return func(o *options) { o.key = key } }

// IfRevision makes Schedule and Unschedule act only if the schedule is
// still at revision rev (Info.Revision): ErrConflict when another writer
// changed it since, ErrNotFound when it is gone.
func IfRevision(rev uint64) Option { return func(o *options) { o.ifRevision = rev } }

// CreateOnly makes Schedule refuse a key that is taken (ErrConflict)
// instead of updating that schedule.
func CreateOnly() Option { return func(o *options) { o.createOnly = true } }

// InZone reads the recurrence in an IANA zone.
func InZone(tz string) Option { return specOption(func(s *kvstore.Spec) { s.TZ = tz }) }

// WithDomDow chooses how a Cron recurrence combines day-of-month and
// day-of-week: "cronie" (the default: as Linux cron, a field starting with
// '*' is unrestricted, and two restricted fields match on either), "posix"
// (only a bare '*' or '?' is unrestricted, as robfig/cron and croniter) or
// "and" (a day must match both: "0 0 13 * FRI" is Friday the 13th).
// Schedule refuses any other value, naming the field dom_dow.
func WithDomDow(rule string) Option { return specOption(func(s *kvstore.Spec) { s.DomDow = rule }) }

// WithCalendar applies a calendar from sched_calendars, and how holidays
// roll ("" = skip).
func WithCalendar(name, holidayRoll string) Option {
	return specOption(func(s *kvstore.Spec) { s.Calendar, s.HolidayRoll = name, holidayRoll })
}

// BusinessHoursOnly moves fires outside working hours to the next working
// start.
func BusinessHoursOnly() Option {
	return specOption(func(s *kvstore.Spec) { s.BusinessHoursOnly = true })
}

// WithMisfire sets the misfire policy ("skip", "fire_once", "fire_all") and
// catch-up window (0: default 24h).
func WithMisfire(policy string, window time.Duration) Option {
	return specOption(func(s *kvstore.Spec) {
		s.Misfire = policy
		if window > 0 {
			s.CatchupWindow = window.String()
		}
	})
}

// WithOverlap sets the overlap policy ("allow", "skip", "buffer_one",
// "buffer_all", "cancel_other") and completion timeout (0: default 1h).
func WithOverlap(policy string, completionTimeout time.Duration) Option {
	return specOption(func(s *kvstore.Spec) {
		s.Overlap = policy
		if completionTimeout > 0 {
			s.CompletionTimeout = completionTimeout.String()
		}
	})
}

// WithDescription sets free text for operators.
func WithDescription(text string) Option {
	return specOption(func(s *kvstore.Spec) { s.Description = text })
}

// Schedule registers workflow to fire on recurrence with input (any value
// that marshals to JSON; nil for none) and returns its key. The key
// defaults to the schedule's content hash (DefaultKey: the workflow, the
// recurrence with its zone and policies, the canonical JSON of the input),
// so every instance of a service computes the same key without
// configuration. Registering the same schedule again writes nothing (no
// revision, no audit entry); registering the same key with another
// content updates the schedule in place and keeps its cadence unless the
// recurrence changed: call it at every start, on every instance.
// CreateOnly and IfRevision make it refuse to overwrite what it does not
// expect. A static schedule (Static, or a file of scheduler run
// --schedules) is refused: kvstore.ErrStatic.
func (c *Client) Schedule(ctx context.Context, workflow string, input any, r Recurrence, opts ...Option) (string, error) {
	key, spec, o, err := build(workflow, input, r, opts)
	if err != nil {
		return "", err
	}
	if o.createOnly && o.ifRevision != 0 {
		return "", &kvstore.FieldError{Field: "if_revision", Reason: "CreateOnly and IfRevision exclude each other"}
	}
	if _, err := c.store.SaveSpec(ctx, key, spec, kvstore.SaveOptions{Create: o.createOnly, IfRevision: o.ifRevision}); err != nil {
		return "", err
	}
	return key, nil
}

// build makes the spec Schedule registers, and its key.
func build(workflow string, input any, r Recurrence, opts []Option) (string, kvstore.Spec, options, error) {
	var o options
	if r.apply == nil {
		return "", kvstore.Spec{}, o, &kvstore.FieldError{Field: kvstore.RecurrenceField, Reason: "no recurrence: use Cron, Every, At or BusinessDay"}
	}
	for _, opt := range opts {
		opt(&o)
	}
	raw, err := canonicalJSON(input)
	if err != nil {
		return "", kvstore.Spec{}, o, &kvstore.FieldError{Field: "input", Reason: "does not marshal to JSON", Err: err}
	}
	spec := kvstore.Spec{Workflow: workflow, Input: raw}
	r.apply(&spec)
	if o.spec != nil {
		o.spec(&spec)
	}
	key := o.key
	if key == "" {
		key = kvstore.DefaultKey(spec)
	}
	return key, spec, o, nil
}

// DefaultKey is the key Schedule gives these arguments without WithKey:
// kvstore.DefaultKey of the spec, "<workflow>-<12 hex digits>" of the hash
// of its canonical form (docs/records.md). The scheduler CLI's schedule
// add without --id and the admin API's put without id derive the same key
// from the same schedule.
func DefaultKey(workflow string, input any, r Recurrence, opts ...Option) (string, error) {
	_, spec, _, err := build(workflow, input, r, append(opts[:len(opts):len(opts)], WithKey("")))
	if err != nil {
		return "", err
	}
	return kvstore.DefaultKey(spec), nil
}

// canonicalJSON marshals v with object keys sorted and numbers kept
// exactly, so equal inputs hash alike.
func canonicalJSON(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	raw, ok := v.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	return kvstore.CanonicalJSON(raw)
}

// StaticSchedule is one schedule of a Static set, with Schedule's
// arguments. Of the options, CreateOnly and IfRevision do not apply.
type StaticSchedule struct {
	Workflow   string
	Input      any
	Recurrence Recurrence
	Options    []Option
}

// Static declares the static schedules of source, a label naming where
// they are defined (the service, say "billing-service"): the set owns its
// schedules. Each is created, or updated when it changed (one that did not
// is not written); the schedules of source that the set no longer lists
// are removed; and nothing but the set changes them: Schedule, Unschedule,
// the admin API and the CLI refuse to put or remove them (ErrStatic),
// while Pause, Resume, Trigger and Backfill work as on any schedule. Every
// schedule is checked before anything is written: an error names the
// entry (1-based) and the field, and the set is left as it was. Call it at
// every start, on every instance, with the same label: it is what
// `scheduler run --schedules FILE` does with a file.
func (c *Client) Static(ctx context.Context, source string, schedules ...StaticSchedule) (kvstore.StaticResult, error) {
	set := kvstore.StaticSet{Source: source, Schedules: make([]kvstore.StaticSchedule, len(schedules))}
	for i, sc := range schedules {
		key, spec, o, err := build(sc.Workflow, sc.Input, sc.Recurrence, sc.Options)
		if err == nil && (o.createOnly || o.ifRevision != 0) {
			err = &kvstore.FieldError{Field: "if_revision", Reason: "CreateOnly and IfRevision do not apply to a static schedule"}
		}
		if err != nil {
			return kvstore.StaticResult{}, fmt.Errorf("client: static %s: entry %d: %w", source, i+1, err)
		}
		set.Schedules[i] = kvstore.StaticSchedule{ID: key, Spec: spec}
	}
	return c.store.ApplyStatic(ctx, set)
}

// Unschedule removes the schedule for the whole fleet. ErrNotFound when
// there is none; with IfRevision (the only option it reads), ErrConflict
// when the schedule changed since that revision.
func (c *Client) Unschedule(ctx context.Context, key string, opts ...Option) error {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return c.store.DeleteSpecAt(ctx, key, o.ifRevision)
}

// Info is a schedule as registered, with the scheduler's state (nil before
// a scheduler planned it).
type Info struct {
	Key  string
	Spec kvstore.Spec
	// Revision is the spec's revision, for IfRevision.
	Revision uint64
	State    *kvstore.State
	// Planned: State is the plan schedulers keep in memory for a schedule
	// that has not fired yet; the record is written with the first fire.
	Planned bool
	// Invalid says why a spec written straight into the bucket does not
	// validate ("" when it does).
	Invalid string
	// Omitted names the spec fields a listing left out because they are
	// larger than 1 KiB ("input", "calendar_inline"); Get returns them.
	Omitted []string
}

// Get returns one schedule.
func (c *Client) Get(ctx context.Context, key string) (Info, error) {
	e, err := c.store.GetSpec(ctx, key)
	if err != nil {
		return Info{}, err
	}
	info := Info{Key: key, Spec: e.Spec, Revision: e.Revision}
	st, planned, err := fire.StoredState(ctx, c.store, e, time.Now())
	switch {
	case err == nil:
		info.State, info.Planned = &st, planned
	case errors.Is(err, kvstore.ErrNotFound):
	default:
		return info, err
	}
	return info, nil
}

func (c *Client) control() fire.Control { return fire.Control{Store: c.store} }

// Pause stops the schedule's regular fires until Resume (or until, if not
// zero).
func (c *Client) Pause(ctx context.Context, key, note string, until time.Time) error {
	_, err := c.control().Pause(ctx, key, note, until)
	return err
}

// Resume ends a pause.
func (c *Client) Resume(ctx context.Context, key string) error {
	_, err := c.control().Resume(ctx, key)
	return err
}

// Trigger fires the schedule once now, as an extra slot; it returns the
// slot id.
func (c *Client) Trigger(ctx context.Context, key, note string) (string, error) {
	return c.control().Trigger(ctx, key, note)
}

// Backfill replays the schedule's slots in [from, to] at most rate per
// second.
func (c *Client) Backfill(ctx context.Context, key string, from, to time.Time, rate float64) error {
	_, err := c.control().Backfill(ctx, key, from, to, rate, "")
	return err
}

// Wakeup sets a timer that wakes run at step: one message on
// sched.wakeup.<workflow> when due. Registering the same run and step again
// replaces it. r.Run, r.Step and r.Workflow are required; see
// wakeup.Request for the forms of r.When.
func (c *Client) Wakeup(ctx context.Context, r wakeup.Request) (time.Time, error) {
	e, err := wakeup.Client{Store: c.store}.Register(ctx, r)
	if err != nil {
		return time.Time{}, err
	}
	return e.Timer.Due, nil
}

// CancelWakeup cancels a timer: "cancelled", or "fired" when it was
// already firing (a harmless race: the worker's condition check drops it).
func (c *Client) CancelWakeup(ctx context.Context, run, step string) (string, error) {
	return wakeup.Client{Store: c.store}.Cancel(ctx, run, step)
}
