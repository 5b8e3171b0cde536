package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func (a *app) scheduleExport() *cobra.Command {
	var f listFlags
	cmd := &cobra.Command{
		Use:   "export [--workflow WF] [--prefix P] [-l SELECTOR] > FILE",
		Short: `Write schedules as JSON lines of {"id": ..., "spec": {...}}, the form schedule import reads`,
		Long: `Write every schedule (or those --workflow, --prefix and -l/--selector
keep) to standard output, one JSON object per line in id order:
{"id": ID, "spec": SPEC}, SPEC as docs/records.md has it. It is exactly
what schedule import reads: export, import into an empty system (or the
same one) and export again, and the two files are the same byte for byte
(labels, inputs, inline calendars and the anchors of intervals included,
so an interval keeps its cadence). A backup, a migration to another
system or --name-prefix, or a review in git.

Left out, each named on standard error: static schedules (their file or
code declares them; import refuses them) and schedules whose spec does
not validate (import would refuse the file). The spec's id (it repeats
the key) and trace (the writer's, not the schedule's) are not written.`,
		Example: `  scheduler schedule export > schedules.jsonl
  scheduler schedule export -l team=billing > billing.jsonl
  scheduler schedule import schedules.jsonl --nats-url nats://other:4222`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkSelector(f.selector); err != nil {
				return err
			}
			w := bufio.NewWriter(a.stdout)
			n, err := a.export(cmd.Context(), f, w)
			if ferr := w.Flush(); err == nil {
				err = ferr
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "%d schedule(s) exported\n", n)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.workflow, "workflow", "", "only the schedules of this workflow")
	fl.StringVar(&f.prefix, "prefix", "", "only the schedules whose id starts with this")
	registerSelector(fl, &f.selector, "schedules")
	return cmd
}

// export writes the schedules f selects to w as import items, a page at
// a time, and returns how many it wrote.
func (a *app) export(ctx context.Context, f listFlags, w *bufio.Writer) (int, error) {
	n, cursor := 0, ""
	for {
		var pg admin.Page[admin.ScheduleInfo]
		if err := a.call(ctx, "schedule.list", f.request(cursor, admin.MaxLimit), &pg); err != nil {
			return n, err
		}
		for _, v := range pg.Items {
			switch {
			case v.Invalid != "":
				fmt.Fprintf(a.stderr, "schedule %s left out: its spec does not validate: %s\n", v.ID, v.Invalid)
				continue
			case v.Spec.Static != "":
				fmt.Fprintf(a.stderr, "schedule %s left out: static, declared by %s\n", v.ID, v.Spec.Static)
				continue
			case len(v.Omitted) > 0: // a large input or calendar: read it whole
				id := v.ID
				v = admin.ScheduleInfo{}
				if err := a.call(ctx, "schedule.get", admin.IDRequest{ID: id}, &v); err != nil {
					return n, err
				}
			}
			line, err := exportLine(v.ID, v.Spec)
			if err != nil {
				return n, err
			}
			if _, err := w.Write(line); err != nil {
				return n, err
			}
			n++
		}
		if pg.NextCursor == "" {
			return n, nil
		}
		cursor = pg.NextCursor
	}
}

// exportLine is one line of an export: {"id":ID,"spec":SPEC} and a
// newline, the spec without its id and trace.
func exportLine(id string, s kvstore.Spec) ([]byte, error) {
	s.ID, s.Trace = "", nil
	spec, err := s.Encode()
	if err != nil {
		return nil, fmt.Errorf("schedule %s: %w", id, err)
	}
	line, err := json.Marshal(importItem{ID: id, Spec: spec})
	if err != nil {
		return nil, fmt.Errorf("schedule %s: %w", id, err)
	}
	return append(line, '\n'), nil
}
