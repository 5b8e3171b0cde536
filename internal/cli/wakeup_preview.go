package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// wakeupCount is one counting step of a preview: a working form's count,
// or one addWorking/addWorkingDays call of an expression.
type wakeupCount struct {
	Call string `json:"call,omitempty"`
	calendar.Explanation
}

// wakeupPreviewOut is what wakeup preview prints with --json.
type wakeupPreviewOut struct {
	Due      time.Time     `json:"due"`
	From     time.Time     `json:"from"`
	When     string        `json:"when,omitempty"`
	WhenExpr string        `json:"when_expr,omitempty"`
	Zone     string        `json:"zone"`
	Calendar string        `json:"calendar,omitempty"`
	Counts   []wakeupCount `json:"counts,omitempty"`
}

func (a *app) wakeupPreview() *cobra.Command {
	var from, when, whenExpr, zone, cal, payload string
	var explain bool
	cmd := &cobra.Command{
		Use:   "preview [--from RFC3339] (--when FORM | --when-expr EXPR [--payload JSON|@FILE]) [--zone Z] [--calendar NAME|FILE.json] [--explain]",
		Short: "Print the due time a timer would get, and with --explain how it was counted",
		Long: `Compute the due time of a timer registered at --from (default now) without
registering it: the same forms and expressions as wakeup add. --explain
says how it was counted: the working intervals used, the working days
counted, and the days passed over with the rule (holiday or weekday without
hours) that took each out. A named calendar is read through the admin API
(calendar.get); a FILE.json is read locally.`,
		Example: `  scheduler wakeup preview --from 2026-12-04T17:00:00-05:00 --when "48 whours" --calendar us --explain
  scheduler wakeup preview --when 02:00 --zone Europe/Paris
  scheduler wakeup preview --when-expr 'addWorking(now, "16h")' --calendar ./us.json --explain
  scheduler wakeup preview --when-expr 'date(payload.due_at) - duration("24h")' --payload '{"due_at":"2026-12-31T17:00:00Z"}'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var form wakeups.Form
			switch {
			case (when == "") == (whenExpr == ""):
				return invalidf("--when or --when-expr: give exactly one")
			case when != "":
				f, err := wakeups.ParseWhen(when)
				if err != nil {
					return usageError{fmt.Errorf("--when: %w", err)}
				}
				form = f
				if payload != "" {
					return invalidf("--payload: only an expression (--when-expr) reads the payload")
				}
			default:
				if err := wakeups.CheckWhenExpr(whenExpr); err != nil {
					return usageError{fmt.Errorf("--when-expr: %w", err)}
				}
			}
			body, err := readPayload(payload)
			if err != nil {
				return err
			}
			now := time.Now()
			if from != "" {
				if now, err = parseTimeFlag("from", from); err != nil {
					return err
				}
			}
			var c *calendar.Calendar
			if cal != "" {
				if c, err = a.loadCalendar(cmd, cal); err != nil {
					return err
				}
			}
			if zone == "" && c != nil {
				zone = c.Location().String()
			}
			loc, err := cronx.LoadZone(zone)
			if err != nil {
				return usageError{fmt.Errorf("--zone %q: %w", zone, err)}
			}
			out := wakeupPreviewOut{From: now, When: when, WhenExpr: whenExpr, Zone: loc.String(), Calendar: cal}
			// The explanation walks a day at a time; without --explain the
			// count jumps. Both stop on SIGINT/SIGTERM (cmd.Context()).
			ctx := cmd.Context()
			if when != "" {
				var due time.Time
				var ex calendar.Explanation
				if explain {
					due, ex, err = form.DueExplainContext(ctx, now, loc, c)
				} else {
					due, err = form.DueContext(ctx, now, loc, c)
				}
				if err != nil {
					return previewError("--when", err)
				}
				out.Due = due
				if explain && form.Kind == wakeups.KindWorking {
					out.Counts = append(out.Counts, wakeupCount{Explanation: ex})
				}
			} else {
				env := wakeups.ExprEnv{Now: now, Zone: loc, Calendar: c, Payload: body}
				if explain {
					env.Explain = func(call string, ex calendar.Explanation) {
						out.Counts = append(out.Counts, wakeupCount{Call: call, Explanation: ex})
					}
				}
				if out.Due, err = wakeups.EvalWhenExprContext(ctx, whenExpr, env); err != nil {
					return previewError("--when-expr", err)
				}
				out.Due = out.Due.In(loc)
			}
			// What wakeup add would refuse, preview refuses too.
			flag := "--when"
			if when == "" {
				flag = "--when-expr"
			}
			if !kvstore.InTimeRange(out.Due) {
				return invalidf("%s: due %s, outside the supported time range %s", flag, out.Due.UTC().Format(time.RFC3339), fieldcheck.TimeRange)
			}
			if a.jsonOut {
				return writeJSON(a.stdout, out)
			}
			fmt.Fprintln(a.stdout, out.Due.Format(time.RFC3339Nano))
			if explain {
				printWakeupExplain(a.stdout, out, form)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&from, "from", "", "the registration instant to count from (RFC 3339; default now)")
	fl.StringVar(&when, "when", "", `due time form, as wakeup add --when: "90m", "02:00", "2026-12-31 23:59", "48 whours", "3 wdays"`)
	fl.StringVar(&whenExpr, "when-expr", "", "an expression over payload and now, as wakeup add --when-expr")
	fl.StringVar(&payload, "payload", "", "the payload an expression reads: JSON, or @FILE")
	fl.StringVar(&zone, "zone", "", "IANA zone of time-of-day and date forms (default UTC, or the calendar's)")
	fl.StringVar(&cal, "calendar", "", "calendar of working forms: a stored name (read through the API) or a JSON file")
	fl.BoolVar(&explain, "explain", false, "say how the due time was counted")
	return cmd
}

// previewError is a preview's error for flag: bad input (exit 2), unless
// the count was stopped by a signal.
func previewError(flag string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return usageError{fmt.Errorf("%s: %w", flag, err)}
}

// printWakeupExplain writes how a preview's due time was counted, one line
// a step.
func printWakeupExplain(w io.Writer, out wakeupPreviewOut, form wakeups.Form) {
	loc := out.Due.Location()
	day := func(t time.Time) string { return t.In(loc).Format("2006-01-02 Mon") }
	fmt.Fprintf(w, "from      %s %s\n", out.From.In(loc).Format(time.RFC3339Nano), out.From.In(loc).Format("Mon"))
	if out.WhenExpr != "" {
		fmt.Fprintf(w, "expr      %s\n", out.WhenExpr)
	} else {
		fmt.Fprintf(w, "form      %s (%s)\n", form.Text, form.Kind)
	}
	for _, c := range out.Counts {
		if c.Call != "" {
			fmt.Fprintf(w, "call      %s\n", c.Call)
		}
		var worked time.Duration
		// Intervals, counted days and skipped days, in date order.
		iv, dy, sk := c.Intervals, c.Days, c.Skipped
		for len(iv)+len(dy)+len(sk) > 0 {
			next := func(t time.Time, ok bool) bool {
				if !ok {
					return false
				}
				for _, o := range []struct {
					t  time.Time
					ok bool
				}{{firstStart(iv), len(iv) > 0}, {firstDay(dy), len(dy) > 0}, {firstSkip(sk), len(sk) > 0}} {
					if o.ok && o.t.Before(t) {
						return false
					}
				}
				return true
			}
			switch {
			case next(firstStart(iv), len(iv) > 0):
				s, e := iv[0].Start.In(loc), iv[0].End.In(loc)
				worked += e.Sub(s)
				fmt.Fprintf(w, "worked    %s %s-%s  %s\n", day(s), s.Format("15:04"), clockEnd(s, e), hours(e.Sub(s)))
				iv = iv[1:]
			case next(firstDay(dy), len(dy) > 0):
				fmt.Fprintf(w, "counted   %s  working day %d\n", day(dy[0]), len(c.Days)-len(dy)+1)
				dy = dy[1:]
			default:
				fmt.Fprintf(w, "skipped   %s  %s\n", day(sk[0].Date), sk[0].Reason)
				sk = sk[1:]
			}
		}
		if worked > 0 {
			fmt.Fprintf(w, "total     %s of working time\n", hours(worked))
		}
	}
	fmt.Fprintf(w, "due       %s %s (%s after from)\n", out.Due.Format(time.RFC3339Nano), out.Due.Format("Mon"),
		cronx.FormatDuration(out.Due.Sub(out.From).Round(time.Second)))
}

func firstStart(iv []calendar.WorkedInterval) time.Time {
	if len(iv) == 0 {
		return time.Time{}
	}
	return iv[0].Start
}

func firstDay(d []time.Time) time.Time {
	if len(d) == 0 {
		return time.Time{}
	}
	return d[0]
}

func firstSkip(s []calendar.SkippedDay) time.Time {
	if len(s) == 0 {
		return time.Time{}
	}
	return s[0].Date
}

// clockEnd writes an interval's end as HH:MM, or 24:00 when it ends at
// the midnight after its start's date.
func clockEnd(start, end time.Time) string {
	if end.Format("2006-01-02") != start.Format("2006-01-02") && end.Format("15:04:05") == "00:00:00" {
		return "24:00"
	}
	return end.Format("15:04")
}

// hours writes working time in hours and minutes: "48h", "1h30m", "45m"
// (seconds only when there are any).
func hours(d time.Duration) string {
	h, m, sec := d/time.Hour, d%time.Hour/time.Minute, d%time.Minute
	out := ""
	if h > 0 {
		out = fmt.Sprintf("%dh", h)
	}
	if m > 0 {
		out += fmt.Sprintf("%dm", m)
	}
	if sec > 0 || out == "" {
		out += sec.String()
	}
	return out
}
