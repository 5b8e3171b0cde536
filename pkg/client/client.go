// Package client is the Go client of jetsched: services declare their
// schedules in code and register them at every start, on every instance;
// operators pause, resume, trigger and backfill them; workflows set, list,
// cancel and re-arm timers (Wakeup, GetWakeup, Wakeups, CancelWakeup,
// CancelWakeups, RearmWakeup; pkg/wakeup holds their data types). It writes to the JetStream buckets
// directly, with the same validation and compare-and-swap as the scheduler
// CLI, and reads timers from their bucket; reads of a schedule's state
// (Get, List, Schedules) ask the admin API of a running scheduler, which
// shows every schedule as the schedulers see it (one read model: its plan,
// its record caught up with the fire stream, the ended lists) and keeps
// the sorted catalogue that makes a page cheap at a million schedules.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/control"
	"github.com/jetsched/jetsched/internal/jsonenc"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
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
	store *jsstore.Store
	nc    *nats.Conn
}

// New binds to the buckets of a NATS system where `scheduler run` (or
// kvstore.Setup) created them: the default layout, unless WithNamePrefix
// or WithLayout names another; through js's JetStream domain, or the one
// WithDomain names.
func New(ctx context.Context, js jetstream.JetStream, opts ...ClientOption) (*Client, error) {
	if js == nil {
		return nil, errors.New("client: New: the JetStream is nil")
	}
	var o clientOptions
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	js, err := o.inDomain(js)
	if err != nil {
		return nil, err
	}
	store, err := jsstore.Open(ctx, js, o.layout)
	if err != nil {
		return nil, fmt.Errorf("client: open the buckets of layout %q: %w", o.layout.WithDefaults().Prefix, err)
	}
	store.RecordSpecTraces(o.specTraces)
	return &Client{store: store, nc: js.Conn()}, nil
}

// Recurrence says when a schedule fires: Cron, Every, At or BusinessDay.
type Recurrence struct {
	apply func(*kvstore.Spec)
	text  string
}

// recurrence words apply as ScheduleInfo.Recurrence does.
func recurrence(apply func(*kvstore.Spec)) Recurrence {
	var s kvstore.Spec
	apply(&s)
	return Recurrence{apply: apply, text: recurrenceText(s)}
}

// String says when it fires: "cron 0 9 * * MON-FRI", "every 1h0m0s", ...
func (r Recurrence) String() string { return r.text }

// Cron fires on a cron expression (5 fields, 6 with seconds first, 7 with a
// year, an @alias, L/W/#/H; docs/cron.md).
func Cron(expr string) Recurrence {
	return recurrence(func(s *kvstore.Spec) { s.Cron = expr })
}

// Every fires every d, on multiples of d since the Unix epoch.
func Every(d time.Duration) Recurrence {
	v := d.String()
	return recurrence(func(s *kvstore.Spec) { s.Every = v })
}

// At fires once, at t.
func At(t time.Time) Recurrence {
	u := t.UTC()
	return recurrence(func(s *kvstore.Spec) { s.At = &u })
}

// BusinessDay fires on the n-th business day of each month (-1: the last)
// at clock ("HH:MM") of the calendar (WithCalendar).
func BusinessDay(n int, clock string) Recurrence {
	return recurrence(func(s *kvstore.Spec) { s.BusinessDay, s.Time = n, clock })
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
// still at revision rev (ScheduleInfo.Revision): ErrConflict when another writer
// changed it since, ErrNotFound when it is gone.
func IfRevision(rev uint64) Option { return func(o *options) { o.ifRevision = rev } }

// CreateOnly makes Schedule refuse a key that is taken (ErrConflict)
// instead of updating that schedule.
func CreateOnly() Option { return func(o *options) { o.createOnly = true } }

// InZone reads the recurrence in an IANA zone.
func InZone(tz string) Option { return specOption(func(s *kvstore.Spec) { s.TZ = tz }) }

// WithDomDow sets how a Cron recurrence combines day-of-month and
// day-of-week: cronx.DomDowCronie (the default: as Linux cron, a field
// starting with '*' is unrestricted, and two restricted fields match on
// either), cronx.DomDowPOSIX (only a bare '*' or '?' is unrestricted, as
// robfig/cron and croniter) or cronx.DomDowAnd (a day must match both:
// "0 0 13 * FRI" is Friday the 13th). Schedule refuses any other value,
// naming the field dom_dow.
func WithDomDow(rule cronx.DomDow) Option {
	return specOption(func(s *kvstore.Spec) { s.DomDow = rule.String() })
}

// WithCalendar applies a calendar from sched_calendars, and how an
// occurrence on a holiday rolls: calendar.RollSkip (the zero value),
// RollNext, RollPrevious, RollModifiedFollowing or RollModifiedPreceding.
func WithCalendar(name string, holidayRoll calendar.Roll) Option {
	return specOption(func(s *kvstore.Spec) { s.Calendar, s.HolidayRoll = name, holidayRoll.String() })
}

// BusinessHoursOnly moves fires outside working hours to the next working
// start.
func BusinessHoursOnly() Option {
	return specOption(func(s *kvstore.Spec) { s.BusinessHoursOnly = true })
}

// WithMisfire sets what happens to slots that fell due while no scheduler
// could fire them (kvstore.MisfireSkip, the default; MisfireFireOnce;
// MisfireFireAll; docs/records.md) and the catch-up window (0: default
// 24h).
func WithMisfire(policy kvstore.MisfirePolicy, window time.Duration) Option {
	return specOption(func(s *kvstore.Spec) {
		s.Misfire = policy
		if window > 0 {
			s.CatchupWindow = window.String()
		}
	})
}

// WithOverlap sets what happens when a slot comes due while the previous
// fire has not reported its completion (kvstore.OverlapAllow, the default;
// OverlapSkip; OverlapBufferOne; OverlapBufferAll; OverlapCancelOther, which
// asks the workers to cancel the running slot; docs/protocol.md) and the
// completion timeout (0: default 1h).
func WithOverlap(policy kvstore.OverlapPolicy, completionTimeout time.Duration) Option {
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

// WithLabels sets the schedule's labels, key=value pairs that List
// (ListOptions.Selector), `scheduler schedule ls --selector` and the
// console filter on: at most kvstore.MaxLabels, keys of letters, digits,
// '-', '_', '.' and '/', values of letters, digits, '-', '_' and '.'.
// Schedule refuses others, naming the field labels.<key>. Like the
// description, labels are not part of the default key: changing them
// updates the schedule in place. The map is copied.
func WithLabels(labels map[string]string) Option {
	labels = maps.Clone(labels)
	return specOption(func(s *kvstore.Spec) { s.Labels = labels })
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
	if _, err := c.store.SaveSpec(ctx, key, spec, jsstore.SaveOptions{Create: o.createOnly, IfRevision: o.ifRevision}); err != nil {
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
	return jsonenc.Canonical(raw)
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
func (c *Client) Static(ctx context.Context, source string, schedules ...StaticSchedule) (StaticResult, error) {
	set := jsstore.StaticSet{Source: source, Schedules: make([]jsstore.StaticSchedule, len(schedules))}
	for i, sc := range schedules {
		key, spec, o, err := build(sc.Workflow, sc.Input, sc.Recurrence, sc.Options)
		if err == nil && (o.createOnly || o.ifRevision != 0) {
			err = &kvstore.FieldError{Field: "if_revision", Reason: "CreateOnly and IfRevision do not apply to a static schedule"}
		}
		if err != nil {
			return StaticResult{}, fmt.Errorf("client: static %s: entry %d: %w", source, i+1, err)
		}
		set.Schedules[i] = jsstore.StaticSchedule{ID: key, Spec: spec}
	}
	r, err := c.store.ApplyStatic(ctx, set)
	return StaticResult(r), err
}

// StaticResult says what Static did, by schedule id.
type StaticResult struct {
	Created, Updated, Unchanged, Removed []string
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

// Get returns one schedule, as the admin API of a running scheduler shows
// it (sched.api.schedule.get, so it needs the NATS rights on sched.api.>).
// ErrNotFound when there is none.
func (c *Client) Get(ctx context.Context, key string) (ScheduleInfo, error) {
	var v admin.ScheduleInfo
	if err := c.call(ctx, "schedule.get", admin.IDRequest{ID: key}, &v); err != nil {
		return ScheduleInfo{}, err
	}
	return newScheduleInfo(v), nil
}

func (c *Client) control() control.Control { return control.Control{Store: c.store} }

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
