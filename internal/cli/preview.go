package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/specwrite"
	"github.com/jetsched/jetsched/internal/timearg"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// previewFlags are preview's flags: the recurrence flags of schedule add,
// and what to print.
type previewFlags struct {
	rec       recurrenceFlags
	from, key string
	count     int
	explain   bool
}

// previewCommand prints the next fire times of a recurrence. Its output
// is a contract scripts depend on: one RFC 3339 time per line with the
// zone's offset, nothing else on stdout; invalid input exits 2 with one
// line on stderr; no further fire time prints nothing and exits 0.
func (a *app) previewCommand() *cobra.Command {
	var f previewFlags
	cmd := &cobra.Command{
		Use:   "preview [--from RFC3339] [-n COUNT] [--explain] [--key ID] [recurrence flags of schedule add] [--] [EXPR]",
		Short: "Print the next fire times of a recurrence: what schedule add with the same flags fires",
		Long: `Print the next COUNT fire times strictly after --from (default now), one
per line, RFC 3339 with the zone's offset. With --explain, a time that a DST
gap, a holiday or business hours moved, or that comes after skipped
occurrences, is followed by two spaces and the reasons.

preview takes every recurrence and calendar flag of schedule add (--cron,
--every, --anchor, --at, --daily-at, --business-day/--time, --tz, --calendar
NAME|FILE.json, --holiday-roll, --business-hours-only, --start, --end,
--limit, --dialect, --dom-dow, --dst-gap, --dst-overlap), builds the same
spec and compiles it as the scheduler does, so it prints exactly the slots
such a schedule fires. An --every without --anchor counts from --from, as a
schedule registered then would.

EXPR, a cron expression or "@every DURATION", is the same as --cron: one
argument (quote it) or the remaining arguments joined by spaces.`,
		Example: `  scheduler preview --tz America/New_York --from 2026-03-07T12:00:00-05:00 -n 3 '30 2 * * *'
  scheduler preview -- 0 9 * * MON-FRI
  scheduler preview --dialect quartz '0 0 12 ? * 6#3'
  scheduler preview --dom-dow posix '0 0 */10 * SUN'
  scheduler preview '@every 90m'
  scheduler preview --every 7d --tz Europe/Paris --anchor 2026-03-02T09:00:00+01:00
  scheduler preview --daily-at 06:00 --business-hours-only --tz Europe/Paris --explain
  scheduler preview --business-day -1 --time 17:00 --calendar ./us-holidays.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if expr := strings.Join(args, " "); expr != "" {
				if f.rec.cron != "" {
					return invalidf("give the cron expression as EXPR or as --cron, not both")
				}
				f.rec.cron = expr
			}
			if !f.rec.given() {
				return invalidf("missing EXPR: a cron expression, or one of --cron, --every, --at, --daily-at, --business-day")
			}
			var spec kvstore.Spec
			if err := f.rec.apply(&spec, cmd.InOrStdin()); err != nil {
				return err
			}
			var src compile.CalendarSource
			if spec.Calendar != "" {
				cal, err := a.loadCalendar(cmd, spec.Calendar)
				if err != nil {
					return err
				}
				src = func(string) (*calendar.Calendar, error) { return cal, nil }
			}
			return a.preview(f, spec, src, time.Now())
		},
	}
	fl := cmd.Flags()
	f.rec.register(fl)
	fl.StringVar(&f.from, "from", "", "print fire times strictly after this RFC 3339 time (default now)")
	fl.IntVarP(&f.count, "count", "n", 5, "how many fire times")
	fl.StringVar(&f.key, "key", "", "schedule id that seeds H fields and fixes --jitter's offsets (default: the expression)")
	fl.BoolVar(&f.explain, "explain", false, "say why a time moved or what was skipped before it")
	return cmd
}

// preview compiles spec as the scheduler does (an --every without an
// anchor registered at --from) and prints its fire times after --from.
func (a *app) preview(f previewFlags, spec kvstore.Spec, src compile.CalendarSource, now time.Time) error {
	if f.count < 0 {
		return invalidf("-n %d: must not be negative", f.count)
	}
	from := now
	if f.from != "" {
		var err error
		if from, err = timearg.ParseTime(f.from, now); err != nil {
			return invalidf("invalid --from %q: %w", f.from, err)
		}
		if err := fieldcheck.Time("from", from); err != nil {
			return invalidf("--from %q: outside the supported time range %s", f.from, fieldcheck.TimeRange)
		}
	}
	c, err := compile.Compile(specwrite.WithAnchor(spec, nil, from), f.key, src, nil)
	if err != nil {
		return err
	}
	var b strings.Builder
	step := cronx.Explain(c.Schedule, from)
	for i := range f.count {
		if i > 0 {
			// From the occurrence the last fire came from: a calendar
			// may have moved later occurrences before it.
			step = cronx.ExplainAfter(c.Schedule, step.At, step.Nominal)
		}
		t := step.At
		if t.IsZero() {
			break
		}
		b.WriteString(t.In(c.Location).Format(time.RFC3339Nano))
		if j := c.Policy.Jitter; j > 0 {
			off := compile.JitterOffset(f.key, t, j)
			fmt.Fprintf(&b, "  +%s jitter: fires %s", off, t.Add(off).In(c.Location).Format(time.RFC3339Nano))
		}
		if f.explain {
			if why := explainStep(step, c.Location); why != "" {
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
	return strings.Join(st.Notes(loc, "2006-01-02 15:04"), "; ")
}
