package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func (a *app) deadLetterCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "deadletter",
		Short: "List, inspect, retry and purge the fires and wakeups workers gave up on",
		Long: `Dead letters are the copies of fires and wakeups a worker gave up on (a
handler's permanent error, or its last allowed delivery failed), kept in
SCHED_EVENTS on sched.event.dead_letter.<workflow>.<id>. ls lists them
newest first, show prints one, retry publishes the original message again
for the workflow's workers (once per dead letter, however often asked),
purge deletes them. retry and purge are recorded in the audit trail;
with --all they ask for confirmation, or --yes.`,
		Args: noArgs,
	}
	cmd.AddCommand(a.deadLetterLs(), a.deadLetterShow(), a.deadLetterRetry(), a.deadLetterPurge())
	return cmd
}

func (a *app) deadLetterLs() *cobra.Command {
	var pf pageFlags
	var workflow string
	cmd := &cobra.Command{
		Use:   "ls [--workflow WF] [--limit N] [--cursor C | --all] [--json]",
		Short: "List dead letters, newest first",
		Example: `  scheduler deadletter ls
  scheduler deadletter ls --workflow billing --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if workflow != "" {
				if err := kvstore.ValidateWorkflow(workflow); err != nil {
					return usageError{fmt.Errorf("--workflow: %w", err)}
				}
			}
			return listing[admin.DeadLetter]{a: a, flags: pf, what: "dead letters", workflow: workflow,
				fetch: func(ctx context.Context, cursor string, limit int) (admin.Page[admin.DeadLetter], error) {
					var pg admin.Page[admin.DeadLetter]
					err := a.call(ctx, "deadletter.list", admin.DeadLetterListRequest{Workflow: workflow, Cursor: cursor, Limit: limit}, &pg)
					return pg, err
				},
				header: "SEQ\tTIME (UTC)\tWORKFLOW\tSCHEDULE/TIMER\tSLOT (UTC)\tDELIVERIES\tREASON",
				row:    deadLetterRow,
			}.run(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&workflow, "workflow", "", "only this workflow's dead letters")
	cmd.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON instead of a human table")
	pf.register(cmd.Flags(), 50, "dead letters")
	return cmd
}

// deadLetterRow is one line of deadletter ls.
func deadLetterRow(l admin.DeadLetter) string {
	what := l.Schedule
	if l.Kind == "wakeup" {
		what = "timer " + l.Run + "/" + l.Step
	}
	if l.RetryOf != 0 {
		what += fmt.Sprintf(" (retry of %d)", l.RetryOf)
	}
	slot := "-"
	if !l.Slot.IsZero() {
		slot = l.Slot.UTC().Format("2006-01-02 15:04:05")
	}
	reason := strings.Join(strings.Fields(l.Reason), " ")
	if len(reason) > 80 {
		reason = reason[:77] + "..."
	}
	return fmt.Sprintf("%d\t%s\t%s\t%s\t%s\t%d\t%s", l.Seq, l.At.UTC().Format("2006-01-02 15:04:05"), l.Workflow,
		orDash(what), slot, l.Deliveries, orDash(reason))
}

func (a *app) deadLetterShow() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "show SEQ [--json]",
		Short:   "Print one dead letter: its headers, its body and its slot's ledger entry",
		Example: `  scheduler deadletter show 4182`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			seq, err := parseSeq(args[0])
			if err != nil {
				return err
			}
			var d admin.DeadLetterDetail
			if err := a.call(cmd.Context(), "deadletter.get", admin.DeadLetterRequest{Seq: seq}, &d); err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.stdout, d)
			}
			printDeadLetter(a.stdout, d)
			return nil
		},
	}
	cmd.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON (the body base64-encoded)")
	return cmd
}

// printDeadLetter prints deadletter show's text form.
func printDeadLetter(w io.Writer, d admin.DeadLetterDetail) {
	fmt.Fprintf(w, "dead letter %d, stored %s\n", d.Seq, d.At.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "  %s of workflow %s: %s\n", d.Kind, d.Workflow, d.ID)
	fmt.Fprintf(w, "  subject:    %s\n  deliveries: %d\n  reason:     %s\n", d.Subject, d.Deliveries, orDash(d.Reason))
	if d.Ledger != nil {
		fmt.Fprintf(w, "  ledger:     %s", d.Ledger.Status)
		if d.Ledger.Outcome != "" {
			fmt.Fprintf(w, " (%s)", d.Ledger.Outcome)
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, "  ledger:     -")
	}
	fmt.Fprintln(w, "headers:")
	for _, k := range slices.Sorted(maps.Keys(d.Headers)) {
		for _, v := range d.Headers[k] {
			fmt.Fprintf(w, "  %s: %s\n", k, v)
		}
	}
	fmt.Fprintf(w, "body (%d bytes):\n%s\n", len(d.Body), d.Body)
}

func (a *app) deadLetterRetry() *cobra.Command {
	var f deadLetterFlags
	cmd := &cobra.Command{
		Use:   "retry SEQ | --all [--workflow WF] [--yes]",
		Short: "Publish dead letters' messages again for their workflow's workers (once per dead letter)",
		Long: `Publish the original fire or wakeup again, with the headers workers read and
Sched-Retry-Of (its original id, which workers see as the slot's id) and
Sched-Dead-Letter-Seq. Its own message id, "<original id>.retry-<SEQ>",
makes a second retry of the same dead letter a no-op ("already retried").
A fire's retry is not a new slot: the scheduler neither claims it nor waits
for it, and the worker's report updates the original slot's ledger entry.`,
		Example: `  scheduler deadletter retry 4182
  scheduler deadletter retry --workflow billing --all --yes`,
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := f.request(args, false)
			if err != nil {
				return err
			}
			if err := a.confirm(cmd, req, f.yes, "retry"); err != nil {
				return err
			}
			var out admin.DeadLetterRetryReply
			if err := a.call(cmd.Context(), "deadletter.retry", req, &out); err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.stdout, out)
			}
			for _, r := range out.Retried {
				if r.Duplicate {
					fmt.Fprintf(a.stdout, "dead letter %d already retried (%s on %s): nothing published\n", r.Seq, r.MsgID, r.Subject)
				} else {
					fmt.Fprintf(a.stdout, "dead letter %d retried: %s on %s\n", r.Seq, r.MsgID, r.Subject)
				}
			}
			if len(out.Retried) == 0 {
				fmt.Fprintln(a.stdout, "no dead letters to retry")
			}
			return nil
		},
	}
	f.register(cmd, false)
	return cmd
}

func (a *app) deadLetterPurge() *cobra.Command {
	var f deadLetterFlags
	cmd := &cobra.Command{
		Use:   "purge SEQ | --all [--workflow WF] [--older-than DUR] [--yes]",
		Short: "Delete dead letters from SCHED_EVENTS",
		Example: `  scheduler deadletter purge 4182
  scheduler deadletter purge --workflow billing --all --older-than 72h --yes`,
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := f.request(args, true)
			if err != nil {
				return err
			}
			if err := a.confirm(cmd, req, f.yes, "purge"); err != nil {
				return err
			}
			var purged []uint64
			for {
				var out admin.DeadLetterPurgeReply
				if err := a.call(cmd.Context(), "deadletter.purge", req, &out); err != nil {
					return err
				}
				purged = append(purged, out.Purged...)
				if !out.More || len(out.Purged) == 0 {
					break
				}
			}
			if a.jsonOut {
				return writeJSON(a.stdout, admin.DeadLetterPurgeReply{Purged: append([]uint64{}, purged...)})
			}
			fmt.Fprintf(a.stdout, "%d dead letters purged\n", len(purged))
			return nil
		},
	}
	f.register(cmd, true)
	return cmd
}

// deadLetterFlags are retry's and purge's flags.
type deadLetterFlags struct {
	workflow  string
	all, yes  bool
	olderThan time.Duration
}

func (f *deadLetterFlags) register(cmd *cobra.Command, purge bool) {
	fl := cmd.Flags()
	fl.StringVar(&f.workflow, "workflow", "", "with --all: only this workflow's dead letters")
	fl.BoolVar(&f.all, "all", false, "every dead letter (of --workflow when given) instead of one SEQ")
	fl.BoolVar(&f.yes, "yes", false, "do not ask for confirmation of --all")
	if purge {
		durationVar(fl, &f.olderThan, "older-than", 0, "only dead letters stored longer ago than this, such as 72h")
	}
}

// request checks the arguments: one SEQ, or --all.
func (f deadLetterFlags) request(args []string, purge bool) (admin.DeadLetterActionRequest, error) {
	var r admin.DeadLetterActionRequest
	switch {
	case len(args) > 1:
		return r, invalidf("want one SEQ, got %d arguments", len(args))
	case len(args) == 1 && (f.all || f.workflow != ""):
		return r, invalidf("give either SEQ or --all [--workflow WF], not both")
	case len(args) == 0 && !f.all:
		if f.workflow != "" {
			return r, invalidf("--workflow %s: add --all to act on every dead letter of the workflow", f.workflow)
		}
		return r, invalidf("give the SEQ of a dead letter (deadletter ls shows them), or --all")
	case f.olderThan < 0:
		return r, invalidf("--older-than %s: must not be negative", f.olderThan)
	}
	if f.workflow != "" {
		if err := kvstore.ValidateWorkflow(f.workflow); err != nil {
			return r, usageError{fmt.Errorf("--workflow: %w", err)}
		}
	}
	if len(args) == 1 {
		seq, err := parseSeq(args[0])
		if err != nil {
			return r, err
		}
		r.Seq = seq
	}
	r.Workflow, r.All = f.workflow, f.all
	if purge && f.olderThan > 0 {
		r.Before = time.Now().Add(-f.olderThan).UTC()
	}
	return r, nil
}

// confirm asks before a bulk action unless yes: on a terminal it reads an
// answer, elsewhere it refuses (exit 2) and names --yes.
func (a *app) confirm(cmd *cobra.Command, r admin.DeadLetterActionRequest, yes bool, verb string) error {
	if !r.All || yes {
		return nil
	}
	what := "every dead letter"
	if r.Workflow != "" {
		what += " of workflow " + r.Workflow
	}
	in := cmd.InOrStdin()
	if f, ok := in.(*os.File); !ok || !interactive(f) {
		return invalidf("--all: %s %s? add --yes to confirm (no terminal to ask on)", verb, what)
	}
	fmt.Fprintf(a.stderr, "%s %s? [y/N] ", verb, what)
	answer, _ := bufio.NewReader(in).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return fmt.Errorf("%s not confirmed: nothing done", verb)
	}
	return nil
}

// interactive reports whether f is a terminal to ask on: a character
// device other than the null device (what stdin is under a test runner,
// cron or systemd).
func interactive(f *os.File) bool {
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err == nil && !os.SameFile(st, null)
}

// parseSeq reads a dead letter's sequence.
func parseSeq(s string) (uint64, error) {
	seq, err := strconv.ParseUint(s, 10, 64)
	if err != nil || seq == 0 {
		return 0, invalidf("SEQ %q: want the dead letter's sequence, a whole number from deadletter ls", s)
	}
	return seq, nil
}
