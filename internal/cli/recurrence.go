package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/jetsched/jetsched/internal/timearg"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// recurrenceFlags say when a schedule fires: its recurrence, zone, cron
// options, bounds and calendar. `schedule add` and `preview` register the
// same set and build the spec with the same function, so that preview
// prints exactly the slots a schedule added with those flags fires.
type recurrenceFlags struct {
	cron, every, at, dailyAt, anchor, tz string
	dialect, domDow, dstGap, dstOverlap  string
	start, end, calendar, roll, bdTime   string
	jitter                               string
	limit, businessDay                   int
	businessHoursOnly                    bool
}

// register adds the flags to fl.
func (f *recurrenceFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.cron, "cron", "", "cron expression: 5 fields, 6 with seconds first, or @daily etc.")
	fl.StringVar(&f.every, "every", "", `fixed interval: 30s, 90m, "2 hours", "1 day 3 hours", 7d, 3600000 (ms); counted from --anchor`)
	fl.StringVar(&f.at, "at", "", "one-shot time: RFC 3339, now+DURATION (now+2h), or 'YYYY-MM-DD HH:MM[:SS]' in --tz")
	fl.StringVar(&f.dailyAt, "daily-at", "", "every day at HH:MM[:SS] in --tz (the cron 'M H * * *')")
	fl.StringVar(&f.anchor, "anchor", "", "with --every: now (default: the first registration), now+DURATION, epoch, epoch+DURATION, or an RFC 3339 time; whole days follow --tz's wall clock")
	fl.StringVar(&f.tz, "tz", "", "IANA time zone of the recurrence and of --at (default UTC)")
	fl.StringVar(&f.start, "start", "", "time before which the schedule does not fire: RFC 3339 or now+DURATION")
	fl.StringVar(&f.end, "end", "", "time after which the schedule does not fire: RFC 3339 or now+DURATION (now+30d)")
	fl.IntVar(&f.limit, "limit", 0, "fire at most this many times, counted from --start")
	fl.StringVar(&f.calendar, "calendar", "", "business calendar: a name in sched_calendars (scheduler calendar put), or a JSON file (FILE.json, - for stdin) stored in the spec")
	fl.StringVar(&f.roll, "holiday-roll", "", "an occurrence on a non-business day: skip (default), next_business_day, previous_business_day, modified_following, modified_preceding")
	fl.BoolVar(&f.businessHoursOnly, "business-hours-only", false, "move occurrences outside working hours to the next working start (default hours: Mon-Fri 09:00-18:00 in --tz)")
	fl.IntVar(&f.businessDay, "business-day", 0, "recurrence: the n-th business day of each month (-1 the last) of --calendar (default: Mon-Fri in --tz)")
	fl.StringVar(&f.bdTime, "time", "", "with --business-day: the time of day, HH:MM[:SS]")
	fl.StringVar(&f.dialect, "dialect", "", "cron dialect: standard (default) or quartz")
	fl.StringVar(&f.domDow, "dom-dow", "", "cron day-of-month/day-of-week rule: cronie (default), posix or and")
	fl.StringVar(&f.dstGap, "dst-gap", "", "cron time in a DST gap: natural (default), skip or shift")
	fl.StringVar(&f.dstOverlap, "dst-overlap", "", "cron time in a DST overlap: natural (default), once or twice")
	fl.StringVar(&f.jitter, "jitter", "", `spread the fires: each slot fires up to this long (1ms to 24h: "30s", "5 minutes") after its time, at an offset fixed by its slot id`)
}

// given reports whether a recurrence flag is set.
func (f *recurrenceFlags) given() bool {
	return f.cron != "" || f.every != "" || f.at != "" || f.dailyAt != "" || f.businessDay != 0
}

// apply writes the flags into s; errors are *kvstore.FieldError naming the
// field (describe turns it into the flag). stdin is read for --calendar -.
// Whether the spec is valid as a whole is Compile's to say.
func (f *recurrenceFlags) apply(s *kvstore.Spec, stdin io.Reader) error {
	s.Cron, s.Every, s.TZ, s.Limit = f.cron, f.every, f.tz, f.limit
	s.Dialect, s.DomDow, s.DSTGap, s.DSTOverlap = f.dialect, f.domDow, f.dstGap, f.dstOverlap
	s.HolidayRoll, s.BusinessHoursOnly, s.BusinessDay, s.Time = f.roll, f.businessHoursOnly, f.businessDay, f.bdTime
	s.Jitter = f.jitter
	if f.dailyAt != "" {
		if f.cron != "" {
			return &kvstore.FieldError{Field: "daily_at", Value: f.dailyAt, Reason: "give --daily-at or a cron expression, not both"}
		}
		cron, err := dailyAtCron(f.dailyAt)
		if err != nil {
			return &kvstore.FieldError{Field: "daily_at", Value: f.dailyAt, Reason: err.Error()}
		}
		s.Cron = cron
	}
	for _, b := range []struct {
		name, value string
		dst         **time.Time
	}{{"start", f.start, &s.Start}, {"end", f.end, &s.End}} {
		if b.value == "" {
			continue
		}
		t, err := timearg.ParseTime(b.value, time.Now())
		if err != nil {
			return &kvstore.FieldError{Field: b.name, Value: b.value, Reason: err.Error()}
		}
		*b.dst = &t
	}
	if f.at != "" {
		loc, err := cronx.LoadZone(f.tz)
		if err != nil {
			return &kvstore.FieldError{Field: "tz", Value: f.tz, Err: err}
		}
		t, err := parseAt(f.at, loc)
		if err != nil {
			return &kvstore.FieldError{Field: "at", Value: f.at, Reason: err.Error()}
		}
		s.At = &t
	}
	if err := applyAnchor(s, f.anchor); err != nil {
		return err
	}
	return applyCalendar(s, f.calendar, stdin)
}

// dailyAtCron is the cron expression of --daily-at HH:MM[:SS]: 5 fields,
// or 6 (seconds first) when seconds are given.
func dailyAtCron(v string) (string, error) {
	layout := "15:04"
	if strings.Count(v, ":") == 2 {
		layout = "15:04:05"
	}
	t, err := time.Parse(layout, v)
	if err != nil {
		return "", fmt.Errorf("want HH:MM or HH:MM:SS (00:00 to 23:59:59)")
	}
	if layout == "15:04:05" {
		return fmt.Sprintf("%d %d %d * * *", t.Second(), t.Minute(), t.Hour()), nil
	}
	return fmt.Sprintf("%d %d * * *", t.Minute(), t.Hour()), nil
}

// applyAnchor reads --anchor: now (from the first registration, the
// default), epoch, epoch+DURATION (a phase) or an RFC 3339 time.
func applyAnchor(s *kvstore.Spec, v string) error {
	if v == "" {
		return nil
	}
	if s.Every == "" {
		return &kvstore.FieldError{Field: "anchor", Value: v, Reason: "only applies to --every"}
	}
	switch phase, isPhase := strings.CutPrefix(v, "epoch+"); {
	case v == "now":
		s.Align = kvstore.AlignAnchor
	case strings.HasPrefix(v, "now"):
		t, err := timearg.ParseTime(v, time.Now())
		if err != nil {
			return &kvstore.FieldError{Field: "anchor", Value: v, Reason: err.Error()}
		}
		t = t.UTC().Truncate(time.Millisecond)
		s.Align, s.Anchor = kvstore.AlignAnchor, &t
	case v == "epoch":
		s.Align = kvstore.AlignEpoch
	case isPhase:
		s.Align, s.Phase = kvstore.AlignEpoch, strings.TrimSpace(phase)
	default:
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return &kvstore.FieldError{Field: "anchor", Value: v, Reason: "want now, now+DURATION, epoch, epoch+DURATION (epoch+15m) or an RFC 3339 time"}
		}
		s.Align, s.Anchor = kvstore.AlignAnchor, &t
	}
	return nil
}

// isCalendarFile reports whether a --calendar value is a file (a name
// ending in .json, a path, or - for stdin) rather than a stored calendar's
// name.
func isCalendarFile(ref string) bool {
	return ref == "-" || strings.HasSuffix(ref, ".json") || strings.ContainsRune(ref, os.PathSeparator)
}

// applyCalendar sets the spec's calendar: a stored calendar's name, or a
// file's calendar inline, in canonical form.
func applyCalendar(s *kvstore.Spec, ref string, stdin io.Reader) error {
	if ref == "" {
		return nil
	}
	if !isCalendarFile(ref) {
		s.Calendar = ref
		return nil
	}
	data, err := readInput(ref, stdin)
	if err != nil {
		return &kvstore.FieldError{Field: "calendar", Value: ref, Reason: "cannot read the file", Err: err}
	}
	cal, err := calendar.Parse(data)
	if err != nil {
		return &kvstore.FieldError{Field: "calendar", Value: ref, Err: err}
	}
	canon, err := cal.MarshalJSON()
	if err != nil {
		return fmt.Errorf("calendar %s: %w", ref, err)
	}
	s.CalendarInline = canon
	return nil
}
