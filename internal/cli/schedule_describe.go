package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func (a *app) scheduleDescribe() *cobra.Command {
	var req admin.DescribeRequest
	cmd := &cobra.Command{
		Use:   "describe ID [--actions N] [--next N] [--json]",
		Short: "One view of a schedule: spec and settings, state, owner, last actions with their reasons, next fires explained",
		Long: `Show a schedule in one view: its spec as registered and the settings it
runs with (defaults filled in, and the zone used), its state (active,
paused, ended, invalid or planned; the pause and its note, the counters),
its owner (the shard and the scheduler instance holding that shard's
lease), its last N actions newest first (the ledger's slots with their
reasons, and the operators' pause, resume, trigger, skip and spec writes
with who and when, from the audit trail when the schedulers keep one) and
its next N fires with what moves or skips them (a DST change, a holiday,
business hours: what scheduler preview --explain says; a pause or
skip-next that will skip them).

Without an audit trail (schedulers run without --audit-key-file) the
operators' actions are those the state record keeps: its pause, its last
resume and its pending triggers, without who; describe says so. The audit
trail is read back over its last 10,000 entries.

--json prints the admin API's reply (schedule.describe, docs/api.md; its
shape is in docs/cli.md).`,
		Example: `  scheduler schedule describe nightly
  scheduler schedule describe nightly --actions 30 --next 10
  scheduler schedule describe nightly --json | jq '.next[].at'`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := kvstore.ValidateID(args[0]); err != nil {
				return err
			}
			for _, c := range []struct {
				flag string
				n    int
			}{{"--actions", req.Actions}, {"--next", req.Next}} {
				if c.n < 1 || c.n > admin.MaxDescribe {
					return invalidf("%s %d: must be 1 to %d", c.flag, c.n, admin.MaxDescribe)
				}
			}
			req.ID = args[0]
			var d admin.Description
			if err := a.call(cmd.Context(), "schedule.describe", req, &d); err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.stdout, d)
			}
			printDescription(a.stdout, d)
			return nil
		},
	}
	cmd.Flags().IntVar(&req.Actions, "actions", admin.DefaultDescribeActions, fmt.Sprintf("how many of the last actions (1 to %d)", admin.MaxDescribe))
	cmd.Flags().IntVar(&req.Next, "next", admin.DefaultDescribeNext, fmt.Sprintf("how many of the next fires (1 to %d)", admin.MaxDescribe))
	return cmd
}

// describeLayout is how describe writes times: the schedule's zone, to
// the second, with the zone's abbreviation.
const describeLayout = "2006-01-02 15:04:05 MST"

// printDescription prints a schedule's description for people: the spec
// and state as schedule get prints them, then the settings, the owner,
// the last actions and the next fires.
func printDescription(w io.Writer, d admin.Description) {
	fmt.Fprintf(w, "status:  %s\n", d.Status)
	printView(w, d.ScheduleInfo)
	loc, err := time.LoadLocation(d.Zone)
	if err != nil {
		loc = time.UTC
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nSettings (default: not set in the spec):")
	for _, s := range d.Settings {
		v := s.Value
		if s.Default {
			v += "  (default)"
		}
		fmt.Fprintf(tw, "  %s\t%s\n", s.Field, v)
	}
	owner := "no instance holds its lease"
	if d.Owner.Instance != "" {
		owner = "held by " + d.Owner.Instance
	}
	fmt.Fprintf(tw, "\nOwner: shard %d of %d, %s\n", d.Owner.Shard, d.Owner.Shards, owner)
	fmt.Fprintf(tw, "\nLast actions, newest first (%d):\n", len(d.Actions))
	if d.ActionsNote != "" {
		fmt.Fprintf(tw, "  (%s)\n", d.ActionsNote)
	}
	for _, act := range d.Actions {
		fmt.Fprintln(tw, "  "+actionLine(act, loc))
	}
	fmt.Fprintf(tw, "\nNext fires (%s):\n", d.Zone)
	if d.NextNote != "" {
		fmt.Fprintf(tw, "  %s\n", d.NextNote)
	}
	for _, f := range d.Next {
		line := "  " + f.At.In(loc).Format(describeLayout) + "\t"
		var why []string
		if f.Skip != "" {
			why = append(why, "WILL BE SKIPPED ("+f.Skip+")")
		}
		why = append(why, f.Notes...)
		fmt.Fprintln(tw, line+strings.Join(why, "; "))
	}
	_ = tw.Flush()
}

// actionLine is one action's line: when, what, the slot, why, and who.
func actionLine(act admin.Action, loc *time.Location) string {
	what := act.Action
	if act.Source == admin.SourceLedger {
		what = act.Status
		slot := act.SlotID
		if slot == "" && act.Slot != nil {
			slot = act.Slot.In(loc).Format(describeLayout)
		}
		what += " slot " + slot
	}
	why := orDash(act.Reason)
	who := act.Actor
	switch {
	case who != "":
		who = "by " + who
	case act.Source == admin.SourceState:
		who = "(state record)"
	case act.Owner != "":
		who = "by " + act.Owner
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s", act.At.In(loc).Format(describeLayout), what, why, who)
}
