package compile

import (
	"errors"
	"fmt"
	"time"

	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/tracing"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Validate checks the spec for the given key and returns a
// *kvstore.FieldError naming the first bad field. A named calendar is
// checked for its name only. Zones and parsed crons are shared through in
// (nil: nothing shared), as a process that checks many specs (a listing
// catalogue of a million) does: loading a zone from disk and parsing a
// cron for every spec was most of the cost.
func Validate(s kvstore.Spec, key string, in *Interner) error {
	if err := CheckFields(s, key); err != nil {
		return err
	}
	_, err := Compile(s, key, nil, in)
	if errors.Is(err, ErrUnresolved) {
		return nil // syntax is fine; PutSpec and the engine resolve the name
	}
	return err
}

// CheckRecord is the whole check of a spec record stored (or about to be
// stored) under id, the one function both its writers (the admin API, the
// CLI, the Go client: PutSpec) and its readers (the scheduler, for every
// record its watch brings, however it was written) apply: the fields
// (CheckFields: id, workflow, sizes, input nesting, ...), the recurrence
// compiled with the calendars of cals (sharing zones and crons through
// in, which may be nil), and that it still fires after now (checkFires).
// It returns the compiled schedule, or a *FieldError naming the field.
func CheckRecord(s kvstore.Spec, id string, cals CalendarSource, in *Interner, now time.Time) (Compiled, error) {
	if err := CheckFields(s, id); err != nil {
		return Compiled{}, err
	}
	c, err := Compile(s, id, cals, in)
	if err != nil {
		return Compiled{}, err
	}
	return c, c.checkFires(now)
}

// CheckFields is Validate without compiling the recurrence: for a caller
// that compiles it next anyway (CompileShared reports the same errors), as
// a scheduler loading its index does, once per spec.
func CheckFields(s kvstore.Spec, key string) error {
	if err := kvstore.ValidateID(key); err != nil {
		return err
	}
	if s.ID != "" && s.ID != key {
		return fieldcheck.New("id", s.ID, fmt.Sprintf("does not match the key %q", key))
	}
	if err := kvstore.ValidateWorkflow(s.Workflow); err != nil {
		return err
	}
	if err := checkSpecLimits(s); err != nil {
		return err
	}
	if err := fieldcheck.JSON("input", s.Input); err != nil {
		return err
	}
	if err := fieldcheck.Labels(s.Labels); err != nil {
		return err
	}
	if s.Static != "" {
		if err := fieldcheck.Source(s.Static); err != nil {
			return err
		}
	}
	return checkTrace("trace.traceparent", s.Trace)
}

// checkSpecLimits checks a spec's sizes against the caps.
func checkSpecLimits(s kvstore.Spec) error {
	if err := fieldcheck.Size("input", len(s.Input), kvstore.MaxInputBytes); err != nil {
		return err
	}
	if err := fieldcheck.Size("calendar_inline", len(s.CalendarInline), calendar.MaxJSONBytes); err != nil {
		return err
	}
	if err := fieldcheck.Note("description", s.Description); err != nil {
		return err
	}
	for _, f := range []struct{ name, value string }{
		{"cron", s.Cron}, {"every", s.Every}, {"tz", s.TZ}, {"dialect", s.Dialect}, {"dom_dow", s.DomDow}, {"dst_gap", s.DSTGap},
		{"dst_overlap", s.DSTOverlap}, {"calendar", s.Calendar}, {"holiday_roll", s.HolidayRoll}, {"time", s.Time},
		{"misfire", string(s.Misfire)}, {"catchup_window", s.CatchupWindow}, {"misfire_threshold", s.MisfireThreshold},
		{"overlap", string(s.Overlap)}, {"completion_timeout", s.CompletionTimeout}, {"jitter", s.Jitter},
	} {
		if err := fieldcheck.Size(f.name, len(f.value), kvstore.MaxFieldBytes); err != nil {
			return err
		}
	}
	return nil
}

// anchorRange is the range of an interval's anchor as the errors name it:
// the supported range and the epoch itself. An anchor is never a slot
// (no Unix time of 0 is planned from it), and anchors at the epoch plus a
// phase ("1970-01-01T00:00:00.02Z") are a common way to spread intervals,
// which specs written before the range existed use.
const anchorRange = "1970-01-01T00:00:00Z to 2261-12-31T23:59:59Z"

// checkSpecTimes checks the spec's times against the supported range.
func checkSpecTimes(s kvstore.Spec) error {
	for _, f := range []struct {
		name string
		t    *time.Time
	}{{"at", s.At}, {"start", s.Start}, {"end", s.End}} {
		if f.t == nil {
			continue
		}
		if err := fieldcheck.Time(f.name, *f.t); err != nil {
			return err
		}
	}
	if a := s.Anchor; a != nil && (a.Before(time.Unix(0, 0)) || !a.Before(kvstore.MaxTime)) {
		return fieldcheck.New("anchor", fieldcheck.FormatAny(*a), "outside the supported time range "+anchorRange)
	}
	return nil
}

// checkTrace refuses a trace context whose traceparent is not a W3C
// traceparent, naming field (e.g. "trace.traceparent").
func checkTrace(field string, t *kvstore.TraceContext) error {
	if t == nil {
		return nil
	}
	if _, ok := tracing.Remote(t); !ok {
		return fieldcheck.New(field, t.TraceParent, "not a W3C traceparent (00-<32 hex trace id>-<16 hex span id>-<2 hex flags>)")
	}
	return nil
}

// fireHorizon is how far ahead a recurring schedule with a calendar must
// have a slot: one whose calendar removes every occurrence for this long
// is refused at registration, and reported invalid when a calendar change
// does that to it.
const fireHorizon = 10 * 365 * 24 * time.Hour

// checkFires returns a *FieldError naming the calendar when a recurring
// schedule's calendar leaves it no slot within fireHorizon after now (or
// after its start, if later): the holidays cover every occurrence, or the
// calendar has no business day. A cron expression that never fires is
// refused when parsed; one-shots, and schedules without a calendar, are
// not checked here; a schedule whose end or limit has passed has simply
// ended.
func (c Compiled) checkFires(now time.Time) error {
	if c.Calendar == nil {
		return nil
	}
	s, from := c.Schedule, now
	if b, ok := s.(*cronx.Bounded); ok {
		s = b.Schedule
		if b.Start.After(from) {
			from = b.Start.Add(-time.Nanosecond)
		}
	}
	field := c.calendarField.String()
	switch r := s.(type) {
	case calendar.BusinessDay:
		if at := r.Next(from); at.IsZero() || at.Sub(from) > fireHorizon {
			return fieldcheck.New(field, c.calendarName, fmt.Sprintf("the schedule never fires: the calendar has no business day %d in any month of the next 10 years", r.N))
		}
	case calendar.Schedule:
		if _, once := r.Base.(cronx.Once); once {
			return nil
		}
		st := r.Explain(from)
		if !st.At.IsZero() && st.At.Sub(from) <= fireHorizon {
			return nil
		}
		why := "the calendar has no working time left"
		if n := len(st.Skipped); n > 0 {
			last := st.Skipped[n-1]
			why = fmt.Sprintf("the calendar removes every occurrence (%d passed over; the last, %s, by %s)",
				st.SkippedCount, last.Nominal.In(c.Location).Format(time.RFC3339), last.Reason)
		}
		return fieldcheck.New(field, c.calendarName, "the schedule never fires in the next 10 years: "+why)
	}
	return nil
}
