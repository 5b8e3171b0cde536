package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/pkg/admin"
)

func (a *app) statusCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Per schedule: next fire, last slot and status, misfires, pause, owning instance",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var rows []admin.StatusRow
			if err := a.call(cmd.Context(), "status", nil, &rows); err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.stdout, rows)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNEXT (UTC)\tLAST SLOT\tLAST STATUS\tFIRES\tMISSED\tPAUSED\tOWNER")
			for _, r := range rows {
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
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", r.ID, next, last, orDash(status), r.Fires, r.Missed, orDash(r.Paused), orDash(r.Owner))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON instead of a human table")
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
