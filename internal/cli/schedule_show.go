package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/labels"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// scheduleView is what get and ls show of one schedule.
type scheduleView = admin.ScheduleInfo

func (a *app) scheduleGet() *cobra.Command {
	return &cobra.Command{
		Use:   "get ID",
		Short: "Show a schedule: its spec, state and last slot",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := kvstore.ValidateID(args[0]); err != nil {
				return err
			}
			var v scheduleView
			if err := a.call(cmd.Context(), "schedule.get", admin.IDRequest{ID: args[0]}, &v); err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.stdout, v)
			}
			printView(a.stdout, v)
			return nil
		},
	}
}

// printView prints a schedule for people: every field its spec sets,
// named as in its JSON, then its state, with why a slot was moved.
func printView(w io.Writer, v scheduleView) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, val string) { fmt.Fprintf(tw, "%s:\t%s\n", k, val) }
	row("id", v.ID)
	row("recurrence", v.Spec.RecurrenceString())
	loc := compile.Location(v.Spec)
	for _, f := range specFields(v.Spec, loc) {
		if f.name != "id" {
			row(f.name, f.value)
		}
	}
	if v.Invalid != "" {
		row("INVALID", v.Invalid)
	}
	if st := v.State; st != nil {
		printState(row, v, st, loc)
	} else if v.Invalid == "" {
		row("next", "none (the spec does not compile)")
	}
	row("revision", fmt.Sprint(v.Revision))
	_ = tw.Flush()
}

// printState prints the rows of a schedule's state.
func printState(row func(k, v string), v scheduleView, st *kvstore.State, loc *time.Location) {
	next := nextString(st, loc)
	if v.Planned {
		next += "  planned (no fire yet)"
	}
	if !st.NextNominal.IsZero() {
		next += "  moved from " + st.NextNominal.In(loc).Format(time.RFC3339)
		if st.NextReason != "" {
			next += ": " + st.NextReason
		}
	}
	row("next", next)
	row("fires", fmt.Sprint(st.Fires))
	if st.Missed > 0 {
		missed := fmt.Sprint(st.Missed)
		if st.MissedAtLeast {
			missed = "at least " + missed
		}
		row("missed", missed)
	}
	if st.Skipped > 0 {
		row("skipped", fmt.Sprint(st.Skipped))
	}
	if p := st.Paused; p != nil {
		paused := "since " + p.At.In(loc).Format(time.RFC3339)
		if !p.Until.IsZero() {
			paused += " until " + p.Until.In(loc).Format(time.RFC3339)
		}
		if p.Note != "" {
			paused += ": " + p.Note
		}
		row("paused", paused)
	}
	if st.SkipNext > 0 {
		row("skip next", fmt.Sprintf("%d slot(s)", st.SkipNext))
	}
	if n := len(st.Triggers); n > 0 {
		row("triggers", fmt.Sprintf("%d pending", n))
	}
	if c := st.Claim; c != nil {
		last := c.Slot.In(loc).Format(time.RFC3339) + " (" + v.LastStatus + ", by " + c.Owner + ")"
		if c.Reason != "" {
			last += " " + c.Reason
			if !c.Nominal.IsZero() {
				last += " from " + c.Nominal.In(loc).Format(time.RFC3339)
			}
			if c.Note != "" {
				last += ": " + c.Note
			}
		}
		row("last slot", last)
	}
	if r := st.Running; r != nil {
		row("running", r.SlotID+" since "+r.Since.In(loc).Format(time.RFC3339))
	}
	if b := st.Backfill; b != nil {
		row("backfill", backfillProgress(b))
	}
}

// specField is one field of a spec as schedule get shows it: its JSON
// name and its value.
type specField struct{ name, value string }

// specFields lists the fields the spec sets, in the order of
// kvstore.Spec, named by their JSON names: a field added to the spec shows
// without a change here. Times are shown in the schedule's zone.
func specFields(spec kvstore.Spec, loc *time.Location) []specField {
	var out []specField
	v := reflect.ValueOf(spec)
	for i := range v.NumField() {
		fv := v.Field(i)
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" || fv.IsZero() {
			continue
		}
		var text string
		switch x := fv.Interface().(type) {
		case *time.Time:
			text = x.In(loc).Format(time.RFC3339Nano)
		case json.RawMessage:
			text = string(x)
		case *kvstore.TraceContext:
			text = strings.TrimSpace(x.TraceParent + " " + x.TraceState)
		case map[string]string:
			text = labels.Format(x)
		default:
			text = fmt.Sprint(x)
		}
		out = append(out, specField{name, text})
	}
	return out
}

// backfillProgress renders a backfill's progress: "120/1000 slots at
// 10/s, at 2026-01-05T00:00:00Z (from ... to ...)".
func backfillProgress(b *kvstore.Backfill) string {
	at := "not started"
	if !b.Cursor.IsZero() {
		at = "at " + b.Cursor.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("%d/%d slots at %v/s, %s (from %s to %s)", b.Done, b.Total, b.Rate, at,
		b.From.UTC().Format(time.RFC3339), b.To.UTC().Format(time.RFC3339))
}

func nextString(st *kvstore.State, loc *time.Location) string {
	if st.Ended || st.Next.IsZero() {
		return "none (ended)"
	}
	return st.Next.In(loc).Format(time.RFC3339) + "  (" + st.Next.UTC().Format(time.RFC3339) + ")"
}

// listFlags are the filters of schedule ls and status.
type listFlags struct {
	pageFlags
	workflow, state, prefix, selector string
}

func (f *listFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	f.pageFlags.register(fl, admin.DefaultLimit, "schedules")
	fl.StringVar(&f.workflow, "workflow", "", "only the schedules of this workflow")
	fl.StringVar(&f.state, "state", "", "only the schedules in this state: "+strings.Join(admin.States, ", "))
	fl.StringVar(&f.prefix, "prefix", "", "only the schedules whose id starts with this")
	registerSelector(fl, &f.selector, "schedules")
}

func (f listFlags) request(cursor string, limit int) admin.ListRequest {
	return admin.ListRequest{Cursor: cursor, Limit: limit, Workflow: f.workflow, State: f.state, Prefix: f.prefix, Selector: f.selector}
}

// registerSelector adds -l/--selector, the label filter of the listings.
func registerSelector(fl *pflag.FlagSet, dst *string, what string) {
	fl.StringVarP(dst, "selector", "l", "", "only the "+what+" whose labels match: team=billing,tier!=gold,env in (prod,staging),!legacy")
}

// checkSelector checks a --selector before anything is asked (the API
// checks it again).
func checkSelector(sel string) error {
	_, err := labels.Parse("selector", sel)
	return err
}

func (a *app) scheduleList() *cobra.Command {
	var f listFlags
	var wide bool
	cmd := &cobra.Command{
		Use:     "ls [--workflow WF] [--state STATE] [--prefix P] [-l SELECTOR] [--wide] [--limit N] [--cursor C | --all | --watch]",
		Aliases: []string{"list"},
		Short:   "List schedules in id order, a page at a time, with their next fire and last status",
		Long: `List schedules in id order, a page at a time (--limit, default 100). A page
that is not the last ends with a line on stderr giving the --cursor of the
next; --all prints every page in turn, holding one page in memory at a
time. --json prints one page as {"items", "total", "next_cursor"}; with
--all it prints JSON lines, one schedule per line. An input larger than
1 KiB is left out of a listed schedule (named in its "omitted" field);
schedule get shows it.

-l/--selector keeps the schedules whose labels (schedule add --label)
match a selector: requirements joined by commas, each key=value,
key!=value, key in (v1,v2), key notin (v1,v2), key (the label is set) or
!key (it is not). --wide adds a LABELS column; --json always has them.

--watch keeps following the page (one page: not with --all) from the
writes of the specs and state buckets ($KV.<bucket>.>), not by polling: each change
reads the page again. On a terminal the table is redrawn, with a STATE
column and the columns LEFT (time to the next fire) and PASSED (since
the last slot), refreshed each second; when stdout is not a terminal the
whole page is printed once, then only the rows that change, and
"<id> removed" for a schedule gone (--json: JSON lines, {"removed": id}).
Ctrl-C ends it (exit status 0).`,
		Example: `  scheduler schedule ls -l team=billing
  scheduler schedule ls --selector 'team=billing,tier!=gold' --wide
  scheduler schedule ls -l 'env in (prod,staging),!legacy' --all --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkSelector(f.selector); err != nil {
				return err
			}
			header, row := "ID\tWORKFLOW\tRECURRENCE\tNEXT (ZONE)\tNEXT (UTC)\tLAST", tableRow
			if wide {
				header += "\tLABELS"
				row = func(v scheduleView) string { return tableRow(v) + "\t" + orDash(labels.Format(v.Spec.Labels)) }
			}
			return listing[scheduleView]{a: a, flags: f.pageFlags, what: "schedules", workflow: f.workflow,
				fetch: func(ctx context.Context, cursor string, limit int) (admin.Page[scheduleView], error) {
					var pg admin.Page[scheduleView]
					return pg, a.call(ctx, "schedule.list", f.request(cursor, limit), &pg)
				},
				header: header,
				row:    row,
				watch: &watchSpec[scheduleView]{buckets: scheduleBuckets, key: func(v scheduleView) string { return v.ID },
					header: header + "\tSTATE", row: func(v scheduleView) string { return row(v) + "\t" + readmodel.StateOf(v) },
					times: scheduleTimes, passed: true},
			}.run(cmd.Context())
		},
	}
	f.register(cmd)
	f.registerWatch(cmd.Flags())
	cmd.Flags().BoolVar(&wide, "wide", false, "add a LABELS column")
	return cmd
}

// scheduleHeader is schedule ls's table header.
const scheduleHeader = "ID\tWORKFLOW\tRECURRENCE\tNEXT (ZONE)\tNEXT (UTC)\tLAST"

// scheduleBuckets are the buckets whose changes a schedule listing's
// --watch follows: the specs and the state records.
func scheduleBuckets(l kvstore.Layout) []string { return []string{l.SpecsBucket, l.StateBucket} }

// scheduleTimes are a listed schedule's next fire and last slot (zero:
// none), for --watch's LEFT and PASSED.
func scheduleTimes(v scheduleView) (next, last time.Time) {
	if st := v.State; st != nil && !st.Ended && v.Invalid == "" {
		next = st.Next
	}
	if v.LastSlot != nil {
		last = *v.LastSlot
	}
	return next, last
}

// tableRow is a schedule's line in schedule ls.
func tableRow(v scheduleView) string {
	next, nextUTC, last := "-", "-", "-"
	if v.Invalid != "" {
		next = "INVALID"
		last = v.Invalid
	} else if st := v.State; st != nil {
		if st.Ended || st.Next.IsZero() {
			next, nextUTC = "ended", "ended"
		} else {
			next = st.Next.In(compile.Location(v.Spec)).Format("2006-01-02 15:04:05 MST")
			nextUTC = st.Next.UTC().Format("2006-01-02 15:04:05Z")
		}
		if v.LastSlot != nil {
			last = v.LastStatus + " " + v.LastSlot.In(compile.Location(v.Spec)).Format("15:04:05")
		}
	} else {
		next = "not planned"
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", v.ID, v.Spec.Workflow, v.Spec.RecurrenceString(), next, nextUTC, last)
}

func (a *app) scheduleRemove() *cobra.Command {
	var ifRevision uint64
	cmd := &cobra.Command{
		Use:     "rm ID [--if-revision N]",
		Aliases: []string{"remove", "delete"},
		Short:   "Remove a schedule for the whole fleet",
		Long: `Remove a schedule for the whole fleet. With --if-revision N only if it is
still at revision N (schedule get shows it); otherwise nothing is removed
and the exit status is 3 (conflict).`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := kvstore.ValidateID(args[0]); err != nil {
				return err
			}
			if err := a.call(cmd.Context(), "schedule.delete", admin.DeleteRequest{ID: args[0], IfRevision: ifRevision}, nil); err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.stdout, map[string]any{"id": args[0], "removed": true})
			}
			fmt.Fprintf(a.stdout, "schedule %s removed\n", args[0])
			return nil
		},
	}
	cmd.Flags().Uint64Var(&ifRevision, "if-revision", 0, "remove only if the schedule is at this revision (exit status 3 if not)")
	return cmd
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
