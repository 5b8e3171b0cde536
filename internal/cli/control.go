package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/control"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/timearg"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// control runs an operator action on schedule id through the admin API and
// prints human or JSON output.
func (a *app) control(ctx context.Context, id, endpoint string, req any, human func(json.RawMessage) string) error {
	if err := kvstore.ValidateID(id); err != nil {
		return err
	}
	var out json.RawMessage
	if err := a.call(ctx, endpoint, req, &out); err != nil {
		return err
	}
	if a.jsonOut {
		_, err := a.stdout.Write(append(out, '\n'))
		return err
	}
	fmt.Fprintln(a.stdout, human(out))
	return nil
}

func parseTimeFlag(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := timearg.ParseTime(v, time.Now())
	if err != nil {
		return time.Time{}, invalidf("invalid --%s %q: %w", name, v, err)
	}
	if !kvstore.InTimeRange(t) {
		// (The zero time among them: taken as "not given", a pause until
		// 0001-01-01 paused for ever.)
		return time.Time{}, invalidf("--%s %q: outside the supported time range %s", name, v, fieldcheck.TimeRange)
	}
	return t, nil
}

func (a *app) schedulePause() *cobra.Command {
	var note, until string
	var forDur time.Duration
	var strict bool
	cmd := &cobra.Command{
		Use:   "pause ID [--note TEXT] [--until TIME | --for DURATION] [--strict]",
		Short: "Pause a schedule's regular fires (slots due meanwhile are skipped and recorded)",
		Long: `Pause a schedule's regular fires: slots due meanwhile are skipped and
recorded. Pausing a paused schedule succeeds (exit 0) and says so; its note
and end are replaced by the ones given. --strict refuses it instead (exit 2),
for scripts that must know they changed something.

--until takes an RFC 3339 time or now+DURATION; --for a duration such as 90m,
2 hours or 1d 3h.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := fieldcheck.Note("note", note); err != nil {
				return err
			}
			u, err := parseTimeFlag("until", until)
			if err != nil {
				return err
			}
			if forDur > 0 {
				if !u.IsZero() {
					return invalidf("--until and --for are mutually exclusive")
				}
				u = time.Now().Add(forDur)
				if !kvstore.InTimeRange(u) {
					return invalidf("--for %s: ends past the supported time range %s", cronx.FormatDuration(forDur), fieldcheck.TimeRange)
				}
			}
			if err := kvstore.ValidateID(args[0]); err != nil {
				return err
			}
			var v scheduleView
			if err := a.call(cmd.Context(), "schedule.get", admin.IDRequest{ID: args[0]}, &v); err != nil {
				return err
			}
			already := v.State != nil && v.State.Paused != nil
			if already && strict {
				return invalidf("schedule %s is already paused (--strict)", args[0])
			}
			return a.control(cmd.Context(), args[0], "schedule.pause", admin.PauseRequest{ID: args[0], Note: note, Until: u}, func(json.RawMessage) string {
				msg := "schedule " + args[0] + " paused"
				if already {
					msg = "schedule " + args[0] + " already paused; note and end updated"
				}
				if !u.IsZero() {
					msg += " until " + u.Format(time.RFC3339)
				}
				return msg
			})
		},
	}
	cmd.Flags().StringVar(&note, "note", "", "why (shown by status)")
	cmd.Flags().StringVar(&until, "until", "", "resume by itself at this time: RFC 3339 or now+DURATION")
	durationVar(cmd.Flags(), &forDur, "for", 0, "resume by itself after this long (90m, 2 hours, 1d 3h)")
	cmd.Flags().BoolVar(&strict, "strict", false, "exit 2 if the schedule is already paused, changing nothing")
	return cmd
}

func (a *app) scheduleResume() *cobra.Command {
	var strict bool
	cmd := &cobra.Command{
		Use:   "resume ID [--strict]",
		Short: "Resume a paused schedule from its next slot",
		Long: `Resume a paused schedule from its next slot. Resuming a schedule that is
not paused succeeds (exit 0) and says "not paused", so a script may repeat
it; --strict makes it an error (exit 2), as before.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			err := a.control(cmd.Context(), args[0], "schedule.resume", admin.IDRequest{ID: args[0]}, func(json.RawMessage) string {
				return "schedule " + args[0] + " resumed"
			})
			if err == nil || strict || !errors.As(err, new(usageError)) || !strings.HasSuffix(err.Error(), control.NotPaused) {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.stdout, map[string]any{"id": args[0], "resumed": false, "reason": "not paused"})
			}
			fmt.Fprintf(a.stdout, "schedule %s not paused\n", args[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&strict, "strict", false, "exit 2 if the schedule is not paused")
	return cmd
}

func (a *app) scheduleSkip() *cobra.Command {
	var n int
	cmd := &cobra.Command{
		Use:   "skip ID [-n COUNT]",
		Short: "Skip the next COUNT regular slots (default 1)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if n < 1 || n > control.MaxSkip {
				return invalidf("--count %d: must be 1 to %d", n, control.MaxSkip)
			}
			return a.control(cmd.Context(), args[0], "schedule.skip", admin.SkipRequest{ID: args[0], Count: &n}, func(out json.RawMessage) string {
				var st kvstore.State
				_ = json.Unmarshal(out, &st)
				return fmt.Sprintf("schedule %s: the next %d slot(s) will be skipped", args[0], st.SkipNext)
			})
		},
	}
	cmd.Flags().IntVarP(&n, "count", "n", 1, "how many slots")
	return cmd
}

func (a *app) scheduleTrigger() *cobra.Command {
	var note string
	cmd := &cobra.Command{
		Use:   "trigger ID [--note TEXT]",
		Short: "Fire once now, as an extra slot with its own id",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := fieldcheck.Note("note", note); err != nil {
				return err
			}
			return a.control(cmd.Context(), args[0], "schedule.trigger", admin.TriggerRequest{ID: args[0], Note: note}, func(out json.RawMessage) string {
				var r struct {
					SlotID string `json:"slot_id"`
				}
				_ = json.Unmarshal(out, &r)
				return "schedule " + args[0] + " triggered: slot " + r.SlotID
			})
		},
	}
	cmd.Flags().StringVar(&note, "note", "", "why (in the fire's Sched-Note header)")
	return cmd
}

func (a *app) scheduleBackfill() *cobra.Command {
	var from, to, note string
	var rate float64
	var wait, cancel bool
	cmd := &cobra.Command{
		Use:   "backfill ID (--from RFC3339 --to RFC3339 [--rate N] [--wait] | --cancel)",
		Short: "Replay the schedule's slots of a past range, at most --rate per second; --cancel stops one",
		Long: `Replay the schedule's slots of a past range, at most --rate per second
across all schedulers, each with Sched-Reason: backfill. A range of more
slots than the scheduler's --max-backfill-slots (default 10000) is refused
with the count it would make. Progress (done/total, rate, cursor) shows in
schedule get and status; --wait follows it. --cancel ends the backfill in
progress (a slot already claimed still completes).`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := kvstore.ValidateID(args[0]); err != nil {
				return err
			}
			if cancel {
				if from != "" || to != "" || wait {
					return invalidf("--cancel takes no --from, --to or --wait")
				}
				return a.cancelBackfill(cmd.Context(), args[0])
			}
			if err := fieldcheck.Note("note", note); err != nil {
				return err
			}
			f, err := parseTimeFlag("from", from)
			if err != nil {
				return err
			}
			t, err := parseTimeFlag("to", to)
			if err != nil {
				return err
			}
			if f.IsZero() || t.IsZero() {
				return invalidf("--from and --to are required")
			}
			var st kvstore.State
			if err := a.call(cmd.Context(), "schedule.backfill", admin.BackfillRequest{ID: args[0], From: f, To: t, Rate: rate, Note: note}, &st); err != nil {
				return err
			}
			total := 0
			if st.Backfill != nil {
				total = st.Backfill.Total
			}
			if !wait {
				if a.jsonOut {
					return writeJSON(a.stdout, map[string]any{"id": args[0], "from": f, "to": t, "rate": rate, "total": total})
				}
				fmt.Fprintf(a.stdout, "schedule %s: backfill of %d slots from %s to %s started at %v/s\n", args[0], total, f.Format(time.RFC3339), t.Format(time.RFC3339), rate)
				return nil
			}
			return a.followBackfill(cmd.Context(), args[0])
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "first time of the range (RFC 3339)")
	cmd.Flags().StringVar(&to, "to", "", "last time of the range (RFC 3339, in the past)")
	cmd.Flags().Float64Var(&rate, "rate", 10, "fires per second at most")
	cmd.Flags().StringVar(&note, "note", "", "why (in each fire's Sched-Note header)")
	cmd.Flags().BoolVar(&wait, "wait", false, "show progress until the backfill is done")
	cmd.Flags().BoolVar(&cancel, "cancel", false, "end the backfill in progress")
	return cmd
}

func (a *app) cancelBackfill(ctx context.Context, id string) error {
	var out struct {
		Done  int `json:"done"`
		Total int `json:"total"`
	}
	if err := a.call(ctx, "schedule.backfill.cancel", admin.IDRequest{ID: id}, &out); err != nil {
		return err
	}
	if a.jsonOut {
		return writeJSON(a.stdout, map[string]any{"id": id, "cancelled": true, "done": out.Done, "total": out.Total})
	}
	fmt.Fprintf(a.stdout, "schedule %s: backfill cancelled after %d of %d slots\n", id, out.Done, out.Total)
	return nil
}

// followBackfill prints a progress line until the backfill is done.
func (a *app) followBackfill(ctx context.Context, id string) error {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		var v scheduleView
		if err := a.call(ctx, "schedule.get", admin.IDRequest{ID: id}, &v); err != nil {
			return err
		}
		if v.State == nil {
			return fmt.Errorf("schedule %s has no state", id)
		}
		b := v.State.Backfill
		if b == nil {
			fmt.Fprintf(a.stderr, "\rbackfill of %s: done%s\n", id, strings.Repeat(" ", 40))
			return nil
		}
		fmt.Fprintf(a.stderr, "\rbackfill of %s: %s", id, backfillProgress(b))
		select {
		case <-ctx.Done():
			fmt.Fprintln(a.stderr)
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func (a *app) scheduleHistory() *cobra.Command {
	var p pageFlags
	var oldest bool
	cmd := &cobra.Command{
		Use:   "history ID [--limit N] [--cursor C | --all] [--oldest-first]",
		Short: "List a schedule's ledger, newest slot first: each slot's status and why",
		Long: `List a schedule's ledger (kept for the scheduler's --tick-retention),
newest slot first (--oldest-first for the other way), a page at a time
like schedule ls. Worker outcomes and reasons longer than 1 KiB are cut
(named in the item's "clipped" field).`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if err := kvstore.ValidateID(id); err != nil {
				return err
			}
			order := "newest"
			if oldest {
				order = "oldest"
			}
			return listing[admin.HistoryItem]{a: a, flags: p, what: "slots",
				fetch: func(ctx context.Context, cursor string, limit int) (admin.Page[admin.HistoryItem], error) {
					var pg admin.Page[admin.HistoryItem]
					return pg, a.call(ctx, "schedule.history", admin.HistoryRequest{ID: id, Cursor: cursor, Limit: limit, Order: order}, &pg)
				},
				header: "SLOT\tSTATUS\tBY\tSEQ\tREASON",
				row: func(t admin.HistoryItem) string {
					seq := "-"
					if t.Seq > 0 {
						seq = fmt.Sprint(t.Seq)
					}
					slot := t.Slot.UTC().Format("2006-01-02T15:04:05.000Z")
					if t.SlotID != "" {
						slot += " (" + strings.TrimPrefix(t.SlotID, id+".") + ")"
					}
					return fmt.Sprintf("%s\t%s\t%s\t%s\t%s", slot, t.Status, t.Owner, seq, strings.TrimSpace(t.Reason+" "+t.Outcome))
				},
			}.run(cmd.Context())
		},
	}
	p.register(cmd.Flags(), 50, "slots")
	cmd.Flags().BoolVar(&oldest, "oldest-first", false, "list the oldest slot first")
	return cmd
}
