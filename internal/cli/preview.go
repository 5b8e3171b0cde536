package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
)

type previewFlags struct {
	tz, from, dialect, domDow, gap, overlap, key string
	calendar, roll                               string
	count                                        int
	explain, businessHoursOnly                   bool
}

// previewCommand prints the next fire times of an expression. Its output
// is a contract scripts depend on: one RFC 3339 time per line with the
// zone's offset, nothing else on stdout; invalid input exits 2 with one
// line on stderr; no further fire time prints nothing and exits 0.
func (a *app) previewCommand() *cobra.Command {
	var f previewFlags
	cmd := &cobra.Command{
		Use:   "preview [--tz ZONE] [--from RFC3339] [-n COUNT] [--dialect standard|quartz] [--dom-dow cronie|posix|and] [--dst-gap natural|skip|shift] [--dst-overlap natural|once|twice] [--key ID] [--calendar NAME|FILE.json [--holiday-roll MODE] [--business-hours-only]] [--explain] [--] EXPR",
		Short: "Print the next fire times of a cron expression or @every interval",
		Long: `Print the next COUNT fire times strictly after --from (default now), one
per line, RFC 3339 with the zone's offset. With --explain, a time that a DST
gap, a holiday or business hours moved, or that comes after skipped
occurrences, is followed by two spaces and the reasons. --calendar applies a
stored calendar (or a JSON file) as a schedule with it would.

EXPR is one argument (quote it) or the remaining arguments joined by spaces.`,
		Example: `  scheduler preview --tz America/New_York --from 2026-03-07T12:00:00-05:00 -n 3 '30 2 * * *'
  scheduler preview -- 0 9 * * MON-FRI
  scheduler preview --dialect quartz '0 0 12 ? * 6#3'
  scheduler preview --dom-dow posix '0 0 */10 * SUN'
  scheduler preview '@every 90m'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return invalidf("missing EXPR")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var cal *calendar.Calendar
			if f.calendar != "" {
				var err error
				if cal, err = a.loadCalendar(cmd, f.calendar); err != nil {
					return err
				}
			} else if f.roll != "" || f.businessHoursOnly {
				return invalidf("--holiday-roll and --business-hours-only need --calendar")
			}
			return a.preview(f, strings.Join(args, " "), cal, time.Now())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.tz, "tz", "", "IANA time zone (default UTC)")
	fl.StringVar(&f.from, "from", "", "print fire times strictly after this RFC 3339 time (default now)")
	fl.IntVarP(&f.count, "count", "n", 5, "how many fire times")
	fl.StringVar(&f.dialect, "dialect", "standard", "cron dialect: standard or quartz")
	fl.StringVar(&f.domDow, "dom-dow", "cronie", "day-of-month/day-of-week rule: cronie (a field starting with * is unrestricted, else either matches), posix (only a bare * or ? is unrestricted) or and (both must match)")
	fl.StringVar(&f.gap, "dst-gap", "natural", "time in a DST gap: natural, skip or shift")
	fl.StringVar(&f.overlap, "dst-overlap", "natural", "time in a DST overlap: natural, once or twice")
	fl.StringVar(&f.key, "key", "", "schedule id that seeds H fields (default: the expression)")
	fl.BoolVar(&f.explain, "explain", false, "say why a time moved or what was skipped before it")
	fl.StringVar(&f.calendar, "calendar", "", "apply a calendar: a name in sched_calendars, or a JSON file")
	fl.StringVar(&f.roll, "holiday-roll", "", "with --calendar: skip (default), next_business_day, previous_business_day, modified_following")
	fl.BoolVar(&f.businessHoursOnly, "business-hours-only", false, "with --calendar: move fires outside working hours to the next working start")
	return cmd
}

func (a *app) preview(f previewFlags, expr string, cal *calendar.Calendar, now time.Time) error {
	if f.count < 0 {
		return invalidf("-n %d: must not be negative", f.count)
	}
	loc, err := cronx.LoadZone(f.tz)
	if err != nil {
		return usageError{fmt.Errorf("--tz: %w", err)}
	}
	from := now
	if f.from != "" {
		if from, err = time.Parse(time.RFC3339Nano, f.from); err != nil {
			return invalidf("--from %q: want an RFC 3339 time such as 2026-03-08T00:00:00Z", f.from)
		}
	}
	opts := cronx.Options{Location: loc, Key: f.key}
	if opts.Dialect, err = cronx.ParseDialect(f.dialect); err != nil {
		return usageError{fmt.Errorf("--dialect: %w", err)}
	}
	if opts.DomDow, err = cronx.ParseDomDow(f.domDow); err != nil {
		return usageError{fmt.Errorf("--dom-dow: %w", err)}
	}
	if opts.Gap, err = cronx.ParseGapPolicy(f.gap); err != nil {
		return usageError{fmt.Errorf("--dst-gap: %w", err)}
	}
	if opts.Overlap, err = cronx.ParseOverlapPolicy(f.overlap); err != nil {
		return usageError{fmt.Errorf("--dst-overlap: %w", err)}
	}
	sched, err := cronx.Parse(expr, opts)
	if err != nil {
		return usageError{err}
	}
	out := loc
	if c, ok := sched.(*cronx.Cron); ok {
		out = c.Location() // a CRON_TZ= prefix wins
	}
	if cal != nil {
		roll, err := calendar.ParseRoll(f.roll)
		if err != nil {
			return usageError{fmt.Errorf("--holiday-roll: %w", err)}
		}
		sched = calendar.Schedule{Base: sched, Calendar: cal, Roll: roll, BusinessHoursOnly: f.businessHoursOnly}
	}
	var b strings.Builder
	t := from
	for range f.count {
		step := cronx.Explain(sched, t)
		if t = step.At; t.IsZero() {
			break
		}
		b.WriteString(t.In(out).Format(time.RFC3339Nano))
		if f.explain {
			if why := explainStep(step, out); why != "" {
				b.WriteString("  " + why)
			}
		}
		b.WriteByte('\n')
	}
	_, err = fmt.Fprint(a.stdout, b.String())
	return err
}

// explainStep says what moved a fire time and what was skipped before it.
func explainStep(st cronx.Step, loc *time.Location) string {
	var parts []string
	for _, sk := range st.Skipped {
		parts = append(parts, "skipped "+sk.Nominal.In(loc).Format("2006-01-02 15:04")+": "+sk.Reason)
	}
	if extra := st.SkippedCount - len(st.Skipped); extra > 0 {
		parts = append(parts, fmt.Sprintf("and %d more skipped", extra))
	}
	if st.Moved != "" {
		if !st.Nominal.IsZero() && !st.Nominal.Equal(st.At) && !strings.HasPrefix(st.Moved, "moved:") && !strings.HasPrefix(st.Moved, "shifted:") {
			parts = append(parts, "moved from "+st.Nominal.In(loc).Format("2006-01-02 15:04")+": "+st.Moved)
		} else {
			parts = append(parts, st.Moved)
		}
	}
	return strings.Join(parts, "; ")
}
