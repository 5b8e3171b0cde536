package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/labels"
	"github.com/jetsched/jetsched/internal/strictjson"
	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func (a *app) wakeupCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "wakeup",
		Aliases: []string{"wakeups", "timer", "timers"},
		Short:   "Register, cancel and list timers (delay wakeups of workflow runs)",
		Long: `A timer wakes workflow run RUN at step STEP: one message on
sched.wakeup.<workflow> when it is due. Registering the same run and step
again replaces it. Forms of --when are in docs/timers.md.`,
	}
	cmd.PersistentFlags().BoolVar(&a.jsonOut, "json", false, "print JSON instead of a human table")
	cmd.AddCommand(a.wakeupAdd(), a.wakeupCancel(), a.wakeupList(), a.wakeupPreview())
	return cmd
}

func (a *app) wakeupAdd() *cobra.Command {
	var r admin.WakeupRequest
	var at, payload string
	var labelPairs []string
	var expire time.Duration
	cmd := &cobra.Command{
		Use:   "add --run RUN --step STEP --workflow WF (--when FORM | --when-expr EXPR | --at RFC3339) [--zone Z] [--calendar C] [--payload JSON|@FILE] [--condition VALUE [--condition-key BUCKET/KEY]] [--expire-after D]",
		Short: "Register (or replace) a timer",
		Example: `  scheduler wakeup add --run order-42 --step escalate --workflow approvals --when "48 whours" --calendar us
  scheduler wakeup add --run order-42 --step remind --workflow approvals --when "1 d 3 h" --condition awaiting_approval
  scheduler wakeup add --run job-7 --step nightly --workflow etl --when 02:00 --zone Europe/Paris
  scheduler wakeup add --run launch --step go --workflow notify --when "2026-12-31 23:59" --zone America/New_York
  scheduler wakeup add --run order-42 --step escalate --workflow approvals --when "48 whours" --calendar us \
      --condition-key runs/order-42 --condition awaiting_approval      # dropped as stale unless runs/order-42 still holds it
  scheduler wakeup add --run order-42 --step remind --workflow approvals --payload '{"due_at":"2026-12-31T17:00:00Z"}' \
      --when-expr 'date(payload.due_at) - duration("24h")'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if r.When != "" {
				// The form is the server's to evaluate; its grammar is
				// checked here, before connecting.
				if _, err := wakeups.ParseWhen(r.When); err != nil {
					return usageError{fmt.Errorf("--when: %w", err)}
				}
			}
			if r.WhenExpr != "" {
				if err := wakeups.CheckWhenExpr(r.WhenExpr); err != nil {
					return usageError{fmt.Errorf("--when-expr: %w", err)}
				}
			}
			if at != "" {
				t, err := parseTimeFlag("at", at)
				if err != nil {
					return err
				}
				r.At = t
			}
			var err error
			if r.Payload, err = readPayload(payload); err != nil {
				return err
			}
			if r.Labels, err = labels.ParsePairs(labelPairs); err != nil {
				return err
			}
			if err := fieldcheck.Note("condition", r.Condition); err != nil {
				return err
			}
			if r.ConditionKey != "" {
				if _, _, err := fieldcheck.ConditionKey(r.ConditionKey); err != nil {
					return usageError{fmt.Errorf("--condition-key %q: %w", r.ConditionKey, err)}
				}
				if r.Condition == "" {
					return invalidf("--condition-key: give --condition, the value the key must hold when the timer falls due")
				}
			}
			if expire > 0 {
				r.ExpireAfter = cronx.FormatDuration(expire)
			}
			var out struct {
				Key      string        `json:"key"`
				Revision uint64        `json:"revision"`
				Timer    kvstore.Timer `json:"timer"`
			}
			if err := a.call(cmd.Context(), "wakeup.add", r, &out); err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.stdout, out)
			}
			fmt.Fprintf(a.stdout, "timer %s/%s due %s (%s) -> sched.wakeup.%s\n", r.Run, r.Step,
				out.Timer.Due.Format(time.RFC3339), time.Until(out.Timer.Due).Round(time.Second), r.Workflow)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&r.Run, "run", "", "run id (letters, digits, inner spaces and most punctuation; not * > or control characters: docs/timers.md)")
	fl.StringVar(&r.Step, "step", "", "step id (the characters of --run)")
	fl.StringVar(&r.Workflow, "workflow", "", "workflow: wakeups go to sched.wakeup.<workflow>")
	fl.StringVar(&r.When, "when", "", `due time: "90m", "1 d 3 h", "3600000" (ms), "02:00", "2026-12-31", "2026-12-31 23:59", RFC 3339, "48 whours", "3 wdays", "1 wmonth", "2 wyears"`)
	fl.StringVar(&r.WhenExpr, "when-expr", "", `due time computed at registration from the payload and now: 'date(payload.due_at) - duration("24h")', 'addWorking(now, "16h")' (docs/timers.md)`)
	fl.StringVar(&at, "at", "", "an absolute due time (RFC 3339): the form of a computed timer")
	fl.StringVar(&r.Zone, "zone", "", "IANA zone of time-of-day and date forms (default UTC, or the calendar's); --tz is accepted as another name")
	fl.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "tz" { // the schedules' name for the same thing
			name = "zone"
		}
		return pflag.NormalizedName(name)
	})
	fl.StringVar(&r.Calendar, "calendar", "", "calendar for working-time forms (whours, wdays, wmonth, wyears)")
	fl.StringVar(&payload, "payload", "", "message body: JSON, or @FILE")
	fl.StringVar(&r.Condition, "condition", "", "token the worker checks before acting (e.g. the activity the run must still be in); with --condition-key, the value the scheduler checks")
	fl.StringVar(&r.ConditionKey, "condition-key", "", "BUCKET/KEY the workflow keeps current: at due time the scheduler drops the timer as stale unless the key holds --condition")
	durationVar(fl, &expire, "expire-after", 0, "drop the timer if not delivered this long after it is due")
	fl.StringArrayVar(&labelPairs, "label", nil, "a label KEY=VALUE, repeatable: what wakeup ls --selector filters on")
	return cmd
}

// readPayload reads --payload: JSON, or @FILE; "" is no payload.
func readPayload(payload string) (json.RawMessage, error) {
	if payload == "" {
		return nil, nil
	}
	raw := []byte(payload)
	if name, ok := strings.CutPrefix(payload, "@"); ok {
		b, err := readInput(name, nil)
		if err != nil {
			return nil, usageError{fmt.Errorf("--payload %s: %w", payload, err)}
		}
		raw = b
	}
	if err := fieldcheck.Size("payload", len(raw), kvstore.MaxInputBytes); err != nil {
		return nil, err
	}
	if !json.Valid(raw) {
		return nil, invalidf("--payload: not valid JSON")
	}
	if err := strictjson.Check(raw); err != nil {
		return nil, invalidf("--payload: %v", err)
	}
	return compactJSON(raw), nil
}

func (a *app) wakeupCancel() *cobra.Command {
	var run, step string
	cmd := &cobra.Command{
		Use:   "cancel --run RUN [--step STEP]",
		Short: "Cancel a timer, or every timer of a run (it left the activity)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if run == "" {
				return invalidf("--run is required")
			}
			var out struct {
				Cancelled int    `json:"cancelled"`
				Outcome   string `json:"outcome"`
			}
			err := a.call(cmd.Context(), "wakeup.cancel", admin.WakeupCancelRequest{Run: run, Step: step}, &out)
			if err != nil {
				return err
			}
			switch {
			case a.jsonOut && step == "":
				return writeJSON(a.stdout, map[string]any{"run": run, "cancelled": out.Cancelled})
			case a.jsonOut:
				return writeJSON(a.stdout, map[string]any{"run": run, "step": step, "outcome": out.Outcome})
			case step == "":
				fmt.Fprintf(a.stdout, "%d timer(s) of run %s cancelled\n", out.Cancelled, run)
			default:
				fmt.Fprintf(a.stdout, "timer %s/%s: %s\n", run, step, out.Outcome)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&run, "run", "", "run id")
	cmd.Flags().StringVar(&step, "step", "", "step id (default: every timer of the run)")
	return cmd
}

func (a *app) wakeupList() *cobra.Command {
	var f admin.WakeupListRequest
	var p pageFlags
	cmd := &cobra.Command{
		Use:     "ls [--run RUN] [--workflow WF] [-l SELECTOR] [--limit N] [--cursor C | --all | --watch]",
		Aliases: []string{"list"},
		Short:   "List pending timers in key order, a page at a time",
		Long: `List pending timers in key order (run, then step), a page at a time like
schedule ls. A payload larger than 1 KiB is left out of a listed timer
(named in its "omitted" field).

--watch follows the page from the writes of the wakeups bucket, as
schedule ls --watch does, with a LEFT column (time to the due time): a
timer that fires or is cancelled shows as "<key> removed".`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkSelector(f.Selector); err != nil {
				return err
			}
			return listing[admin.TimerItem]{a: a, flags: p, what: "timers", workflow: f.Workflow,
				fetch: func(ctx context.Context, cursor string, limit int) (admin.Page[admin.TimerItem], error) {
					req := f
					req.Cursor, req.Limit = cursor, limit
					var pg admin.Page[admin.TimerItem]
					return pg, a.call(ctx, "wakeup.list", req, &pg)
				},
				header: timerHeader,
				row:    timerRow,
				watch: &watchSpec[admin.TimerItem]{
					buckets: func(l kvstore.Layout) []string { return []string{l.WakeupsBucket} },
					key:     func(t admin.TimerItem) string { return t.Key }, header: timerHeader, row: timerRow,
					times: func(t admin.TimerItem) (time.Time, time.Time) { return t.Due, time.Time{} }},
			}.run(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&f.Run, "run", "", "only this run")
	cmd.Flags().StringVar(&f.Workflow, "workflow", "", "only this workflow")
	registerSelector(cmd.Flags(), &f.Selector, "timers")
	p.register(cmd.Flags(), admin.DefaultLimit, "timers")
	p.registerWatch(cmd.Flags())
	return cmd
}

// timerHeader is wakeup ls's table header.
const timerHeader = "RUN\tSTEP\tWORKFLOW\tDUE (UTC)\tWHEN\tCONDITION"

// timerRow is a timer's line in wakeup ls.
func timerRow(t admin.TimerItem) string {
	if t.Invalid != "" {
		return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\tINVALID (key %s): %s", orDash(t.Run), orDash(t.Step), orDash(t.Workflow), orDash(formatDue(t.Due)), orDash(t.When), t.Key, t.Invalid)
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", t.Run, t.Step, t.Workflow, t.Due.UTC().Format(time.RFC3339), orDash(t.When), orDash(t.Condition))
}

// formatDue is a listed timer's due time, empty when it has none (a
// record that does not decode).
func formatDue(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
