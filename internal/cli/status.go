package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/internal/admin"
)

func (a *app) statusCommand() *cobra.Command {
	var f listFlags
	cmd := &cobra.Command{
		Use:   "status [--workflow WF] [--state STATE] [--prefix P] [-l SELECTOR] [--limit N] [--cursor C | --all | --watch]",
		Short: "A summary of every schedule, then per schedule: next fire, last slot and status, misfires, pause, backfill, owning instance",
		Long: `Print a summary of every schedule (counts by state, timers, shards held per
instance), then one row per schedule in id order, a page at a time like
schedule ls. --json prints {"summary", "items", "total", "next_cursor"};
with --all it prints JSON lines, one row per line (the summary is in
status --json).

--watch follows the page as schedule ls --watch does (the summary is
redrawn with the table on a terminal; otherwise printed once), with the
columns LEFT and PASSED.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkSelector(f.selector); err != nil {
				return err
			}
			var sum admin.Summary
			return listing[admin.StatusRow]{a: a, flags: f.pageFlags, what: "schedules", workflow: f.workflow,
				fetch: func(ctx context.Context, cursor string, limit int) (admin.Page[admin.StatusRow], error) {
					var sp admin.StatusPage
					if err := a.call(ctx, "status", f.request(cursor, limit), &sp); err != nil {
						return admin.Page[admin.StatusRow]{}, err
					}
					sum = sp.Summary
					return admin.Page[admin.StatusRow]{Items: sp.Items, Total: sp.Total, NextCursor: sp.NextCursor}, nil
				},
				pageJSON: func(pg admin.Page[admin.StatusRow]) any {
					return admin.StatusPage{Summary: sum, Items: pg.Items, Total: pg.Total, NextCursor: pg.NextCursor}
				},
				head:   func(w io.Writer) { printSummary(w, sum) },
				header: statusHeader,
				row:    statusLine,
				watch: &watchSpec[admin.StatusRow]{buckets: scheduleBuckets, key: func(r admin.StatusRow) string { return r.ID },
					header: statusHeader, row: statusLine, times: statusTimes, passed: true},
			}.run(cmd.Context())
		},
	}
	cmd.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON instead of a human table")
	f.register(cmd)
	f.registerWatch(cmd.Flags())
	return cmd
}

// statusHeader is status's table header.
const statusHeader = "ID\tSTATE\tNEXT (UTC)\tLAST SLOT\tLAST STATUS\tFIRES\tMISSED\tPAUSED\tBACKFILL\tOWNER"

// statusTimes are a status row's next fire and last slot (zero: none),
// for --watch's LEFT and PASSED.
func statusTimes(r admin.StatusRow) (next, last time.Time) {
	if r.Next != nil {
		next = *r.Next
	}
	if r.LastSlot != nil {
		last = *r.LastSlot
	}
	return next, last
}

func printSummary(w io.Writer, s admin.Summary) {
	fmt.Fprintf(w, "%d schedules: %d active, %d planned, %d paused, %d ended, %d invalid; %d timers pending\n",
		s.Schedules, s.Active, s.Planned, s.Paused, s.Ended, s.Invalid, s.Timers)
	var held []string
	for _, inst := range slices.Sorted(maps.Keys(s.Instances)) {
		held = append(held, fmt.Sprintf("%s %d", inst, s.Instances[inst]))
	}
	fmt.Fprintf(w, "%d shards; leases held: %s\n\n", s.Shards, orDash(strings.Join(held, ", ")))
}

func statusLine(r admin.StatusRow) string {
	next, last := "-", "-"
	if r.Next != nil {
		next = r.Next.UTC().Format("2006-01-02 15:04:05")
	}
	if r.LastSlot != nil {
		last = r.LastSlot.UTC().Format("2006-01-02 15:04:05")
	}
	status := r.LastStatus
	if r.Invalid != "" {
		status = "INVALID: " + r.Invalid
	}
	backfill := "-"
	if b := r.Backfill; b != nil {
		backfill = fmt.Sprintf("%d/%d @%v/s", b.Done, b.Total, b.Rate)
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s", r.ID, r.State, next, last, orDash(status), r.Fires, r.Missed, orDash(r.Paused), backfill, orDash(r.Owner))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
