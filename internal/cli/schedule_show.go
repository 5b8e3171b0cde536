package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/pkg/admin"
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
				return notFound(err, fmt.Sprintf("schedule %q", args[0]))
			}
			if a.jsonOut {
				return writeJSON(a.stdout, v)
			}
			printView(a.stdout, v)
			return nil
		},
	}
}

func printView(w io.Writer, v scheduleView) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, val string) { fmt.Fprintf(tw, "%s:\t%s\n", k, val) }
	row("id", v.ID)
	row("workflow", v.Spec.Workflow)
	row("recurrence", v.Spec.RecurrenceString())
	if len(v.Spec.Input) > 0 {
		row("input", string(v.Spec.Input))
	}
	if v.Spec.Description != "" {
		row("description", v.Spec.Description)
	}
	if v.Invalid != "" {
		row("INVALID", v.Invalid)
	}
	loc := v.Spec.Location()
	if st := v.State; st != nil {
		next := nextString(st, loc)
		if v.Planned {
			next += "  planned (no fire yet)"
		}
		row("next", next)
		row("fires", fmt.Sprint(st.Fires))
		if st.Missed > 0 {
			row("missed", fmt.Sprint(st.Missed))
		}
		if c := st.Claim; c != nil {
			row("last slot", c.Slot.In(loc).Format(time.RFC3339)+" ("+v.LastStatus+", by "+c.Owner+")")
		}
	} else if v.Invalid == "" {
		row("next", "none (the spec does not compile)")
	}
	row("spec revision", fmt.Sprint(v.Revision))
	_ = tw.Flush()
}

func nextString(st *kvstore.State, loc *time.Location) string {
	if st.Ended || st.Next.IsZero() {
		return "none (ended)"
	}
	return st.Next.In(loc).Format(time.RFC3339) + "  (" + st.Next.UTC().Format(time.RFC3339) + ")"
}

func (a *app) scheduleList() *cobra.Command {
	return &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List schedules with their next fire and last status",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var views []scheduleView
			if err := a.call(cmd.Context(), "schedule.list", nil, &views); err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.stdout, views)
			}
			printTable(a.stdout, views)
			return nil
		},
	}
}

func printTable(w io.Writer, views []scheduleView) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tWORKFLOW\tRECURRENCE\tNEXT (ZONE)\tNEXT (UTC)\tLAST")
	for _, v := range views {
		next, nextUTC, last := "-", "-", "-"
		if v.Invalid != "" {
			next = "INVALID"
			last = v.Invalid
		} else if st := v.State; st != nil {
			if st.Ended || st.Next.IsZero() {
				next, nextUTC = "ended", "ended"
			} else {
				next = st.Next.In(v.Spec.Location()).Format("2006-01-02 15:04:05 MST")
				nextUTC = st.Next.UTC().Format("2006-01-02 15:04:05Z")
			}
			if v.LastSlot != nil {
				last = v.LastStatus + " " + v.LastSlot.In(v.Spec.Location()).Format("15:04:05")
			}
		} else {
			next = "not planned"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", v.ID, v.Spec.Workflow, v.Spec.RecurrenceString(), next, nextUTC, last)
	}
	_ = tw.Flush()
}

func (a *app) scheduleRemove() *cobra.Command {
	return &cobra.Command{
		Use:     "rm ID",
		Aliases: []string{"remove", "delete"},
		Short:   "Remove a schedule for the whole fleet",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := kvstore.ValidateID(args[0]); err != nil {
				return err
			}
			if err := a.call(cmd.Context(), "schedule.delete", admin.IDRequest{ID: args[0]}, nil); err != nil {
				return notFound(err, fmt.Sprintf("schedule %q", args[0]))
			}
			if a.jsonOut {
				return writeJSON(a.stdout, map[string]any{"id": args[0], "removed": true})
			}
			fmt.Fprintf(a.stdout, "schedule %s removed\n", args[0])
			return nil
		},
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
