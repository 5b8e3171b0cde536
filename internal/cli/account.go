package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/internal/account"
	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// auditWorkers is how many schedules `audit slots` accounts at once: each
// account reads a schedule's whole ledger on a scheduler, so a few keep
// the API busy without crowding out the fleet's own work.
const auditWorkers = 4

// accountHelp says what the fates mean, for both commands' help.
const accountHelp = `Each occurrence the schedule owed (from its spec's write, or a one-shot's
time) has a fate: fired (its message is in SCHED_FIRES), not_fired (the
ledger says why: missed, skipped, failed), merged or skipped (by the
calendar), pending (the scheduler has not come to it yet) or unaccounted:
nothing says what became of it, a defect (docs/operations.md, "Every slot
accounted for"). The range is clipped to the ledger's retention
(--tick-retention of scheduler run, a day by default).`

func (a *app) scheduleAccount() *cobra.Command {
	var from, to string
	cmd := &cobra.Command{
		Use:   "account ID [--from T1] [--to T2] [--json]",
		Short: "List every slot a schedule owed and its fate; exit 1 if any is unaccounted",
		Long: `List every occurrence a schedule owed between --from (default: --to less
the ledger's retention) and --to (default: now), in order, with its fate
and the evidence, then the summary line:

  owed N, fired F, not fired with reason R, pending P, unaccounted U

` + accountHelp + `

Exit status 1 when a slot is unaccounted, 2 for invalid input. --json
prints {"items": [...], "summary": {...}}.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if err := kvstore.ValidateID(id); err != nil {
				return err
			}
			req, err := accountRange(id, from, to)
			if err != nil {
				return err
			}
			nc, err := a.connectAPI()
			if err != nil {
				return err
			}
			defer nc.Close()
			return a.printAccount(cmd.Context(), nc, req)
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "RFC 3339: list the slots after this time (default: --to less the ledger's retention)")
	cmd.Flags().StringVar(&to, "to", "", "RFC 3339: list the slots up to this time (default: now)")
	return cmd
}

// accountRange checks --from and --to into the request of schedule id's
// account.
func accountRange(id, from, to string) (admin.AccountRequest, error) {
	f, err := parseTimeFlag("from", from)
	if err != nil {
		return admin.AccountRequest{}, err
	}
	t, err := parseTimeFlag("to", to)
	if err != nil {
		return admin.AccountRequest{}, err
	}
	if !f.IsZero() && !t.IsZero() && t.Before(f) {
		return admin.AccountRequest{}, invalidf("--to %s: before --from %s", to, from)
	}
	return admin.AccountRequest{ID: id, From: stampOrEmpty(f), To: stampOrEmpty(t)}, nil
}

func stampOrEmpty(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

// printAccount prints every page of schedule req.ID's account (req.Limit
// entries a request, default admin.MaxLimit), as a table or as JSON, and
// then the summary; an unaccounted slot is an error (exit status 1). The
// pages keep the first page's end of the range, so that they list one
// range however long the paging takes; the summary printed is the last
// page's, the latest evidence.
func (a *app) printAccount(ctx context.Context, nc *nats.Conn, req admin.AccountRequest) error {
	req.Limit = cmp.Or(req.Limit, admin.MaxLimit)
	var (
		pg   admin.AccountPage // the last page
		seen int               // unaccounted entries listed
	)
	if a.jsonOut {
		fmt.Fprint(a.stdout, `{"items":[`)
	} else {
		fmt.Fprintln(a.stdout, fmt.Sprintf(entryFormat, "NOMINAL", "SLOT", "FATE", "STATUS", "EVIDENCE / REASON"))
	}
	for n := 0; ; {
		pg = admin.AccountPage{} // a page without next_cursor must not keep the last one's
		if err := a.apiJSON(ctx, nc, "schedule.account", req, &pg); err != nil {
			return err
		}
		for _, e := range pg.Items {
			if e.Fate == account.FateUnaccounted {
				seen++
			}
			if a.jsonOut {
				b, err := json.Marshal(e)
				if err != nil {
					return fmt.Errorf("encode the account of %q: %w", req.ID, err)
				}
				if n > 0 {
					fmt.Fprint(a.stdout, ",")
				}
				n++
				fmt.Fprintf(a.stdout, "\n%s", b)
				continue
			}
			fmt.Fprintln(a.stdout, entryRow(e))
		}
		if pg.NextCursor == "" {
			break
		}
		req.Cursor, req.To = pg.NextCursor, pg.Summary.To.Format(time.RFC3339Nano)
	}
	s := pg.Summary
	if a.jsonOut {
		b, err := json.Marshal(s)
		if err != nil {
			return fmt.Errorf("encode the account of %q: %w", req.ID, err)
		}
		fmt.Fprintf(a.stdout, "\n],\"summary\":%s", b)
		if pg.Invalid != "" {
			v, _ := json.Marshal(pg.Invalid)
			fmt.Fprintf(a.stdout, `,"invalid":%s`, v)
		}
		fmt.Fprintln(a.stdout, "}")
	} else {
		fmt.Fprintln(a.stdout, s.Line())
		if pg.Invalid != "" {
			fmt.Fprintf(a.stdout, "the spec is invalid, so the schedule owes no slot: %s\n", pg.Invalid)
		}
		if s.Clipped != "" {
			fmt.Fprintf(a.stdout, "checked from %s to %s: %s\n", stampUTC(s.From), stampUTC(s.To), s.Clipped)
		}
	}
	if u := max(s.Unaccounted, seen); u > 0 {
		return fmt.Errorf("schedule %q: %d unaccounted slot(s): no fire, no ledger entry, and the scheduler has passed them (docs/operations.md, \"Every slot accounted for\")", req.ID, u)
	}
	return nil
}

// entryFormat is a row of the account's table: fixed widths (the times',
// the longest fate and ledger status), so that rows streamed page by page
// line up.
const entryFormat = "%-24s  %-24s  %-11s  %-10s  %s"

// entryRow is one entry of an account as a table row.
func entryRow(e account.Entry) string {
	slot, status := "-", "-"
	if !e.Slot.IsZero() {
		slot = stampUTC(e.Slot)
	}
	if e.Status != "" {
		status = e.Status
	}
	why := e.Evidence
	if e.Reason != "" {
		why += ": " + e.Reason
	}
	return strings.TrimRight(fmt.Sprintf(entryFormat, stampUTC(e.Nominal), slot, e.Fate, status, why), " ")
}

func stampUTC(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// apiJSON encodes req and sends it as an admin API request on nc.
func (a *app) apiJSON(ctx context.Context, nc *nats.Conn, endpoint string, req, resp any) error {
	data, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode %s request: %w", endpoint, err)
	}
	return a.request(ctx, nc, endpoint, data, resp)
}

func (a *app) auditSlots() *cobra.Command {
	var (
		since, cursor string
		limit         int
		problems      bool
	)
	cmd := &cobra.Command{
		Use:   "slots [--since T] [--limit N] [--cursor C] [--problems] [--json]",
		Short: "Account for every schedule's owed slots; exit 1 if any is unaccounted",
		Long: `Account for every schedule as schedule account does, in id order, a
page of schedules at a time (memory does not grow with their number), and
print one line per schedule, its id and summary line (with --problems
only those with unaccounted slots, or that could not be accounted), then
the total:

  schedules S, owed N, fired F, not fired with reason R, pending P, unaccounted U

Every schedule is checked over the same range: from --since (default: the
ledger's retention) to when the command started. --limit stops after N
schedules and prints the cursor to go on from (--cursor).

` + accountHelp + `

Exit status 1 when a slot is unaccounted or a schedule could not be
accounted, 2 for invalid input. --json prints a JSON object per schedule
({"id", "summary"} or {"id", "invalid"} or {"id", "error"}) and a last
one with the totals and "next_cursor".`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			from, err := parseTimeFlag("since", since)
			if err != nil {
				return err
			}
			if limit < 0 {
				return invalidf("--limit %d: must be 0 (every schedule) or more", limit)
			}
			if cursor != "" && kvstore.ValidateID(cursor) != nil {
				return invalidf("--cursor %q: not a cursor from a previous run (a schedule id)", cursor)
			}
			nc, err := a.connectAPI()
			if err != nil {
				return err
			}
			defer nc.Close()
			au := slotAudit{a: a, nc: nc, problems: problems,
				req: admin.AccountRequest{From: stampOrEmpty(from), To: time.Now().Format(time.RFC3339Nano), Limit: 1, Fates: []string{account.FateUnaccounted}}}
			return au.run(cmd.Context(), cursor, limit)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&since, "since", "", "RFC 3339: account for the slots after this time (default: now less the ledger's retention)")
	fl.IntVar(&limit, "limit", 0, "stop after this many schedules and print the cursor to go on from (0: every schedule)")
	fl.StringVar(&cursor, "cursor", "", "start after this schedule id (the cursor a previous run printed)")
	fl.BoolVar(&problems, "problems", false, "print only the schedules with unaccounted slots (and those that could not be accounted)")
	fl.BoolVar(&a.jsonOut, "json", false, "print JSON lines: one object per schedule, then the totals")
	return cmd
}

// slotAudit is one run of `audit slots`.
type slotAudit struct {
	a        *app
	nc       *nats.Conn
	problems bool
	// req is the account request of every schedule (ID set for each):
	// one range, and only the summary (one unaccounted entry at most).
	req admin.AccountRequest
	// The totals.
	schedules, invalid, failed int
	total                      account.Summary
	withUnaccounted            int
}

// slotResult is one schedule's account in an audit.
type slotResult struct {
	id      string
	page    admin.AccountPage
	err     error
	removed bool // since it was listed
}

// run audits the schedules after cursor, at most limit (0: all), a page
// of schedule.list at a time, and prints the totals.
func (au *slotAudit) run(ctx context.Context, cursor string, limit int) error {
	next := ""
	for {
		n := admin.DefaultLimit
		if limit > 0 {
			n = min(n, limit-au.schedules)
		}
		var pg admin.Page[admin.ScheduleInfo]
		if err := au.a.apiJSON(ctx, au.nc, "schedule.list", admin.ListRequest{Cursor: cursor, Limit: n}, &pg); err != nil {
			return err
		}
		for _, r := range au.accountPage(ctx, pg.Items) {
			if err := au.print(r); err != nil {
				return err
			}
		}
		if pg.NextCursor == "" {
			break
		}
		cursor = pg.NextCursor
		if limit > 0 && au.schedules >= limit {
			next = cursor
			break
		}
	}
	if err := au.printTotal(next); err != nil {
		return err
	}
	var errs []error
	if au.total.Unaccounted > 0 {
		errs = append(errs, fmt.Errorf("%d unaccounted slot(s) in %d schedule(s) (docs/operations.md, \"Every slot accounted for\")", au.total.Unaccounted, au.withUnaccounted))
	}
	if au.failed > 0 {
		errs = append(errs, fmt.Errorf("%d schedule(s) could not be accounted", au.failed))
	}
	return errors.Join(errs...)
}

// accountPage accounts the schedules of one listing page, auditWorkers at
// a time, and returns their results in the page's order.
func (au *slotAudit) accountPage(ctx context.Context, items []admin.ScheduleInfo) []slotResult {
	out := make([]slotResult, len(items))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(auditWorkers, len(items)) {
		wg.Go(func() {
			for i := range next {
				req := au.req
				req.ID = items[i].ID
				r := slotResult{id: req.ID}
				r.err = au.a.apiJSON(ctx, au.nc, "schedule.account", req, &r.page)
				r.removed = errors.Is(r.err, kvstore.ErrNotFound)
				out[i] = r
			}
		})
	}
	for i := range items {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// print prints one schedule's line and adds it to the totals.
func (au *slotAudit) print(r slotResult) error {
	if r.removed {
		return nil
	}
	au.schedules++
	s := r.page.Summary
	line := map[string]any{"id": r.id}
	text := ""
	problem := false
	switch {
	case r.err != nil:
		au.failed++
		line["error"], text, problem = describe(r.err), "error: "+describe(r.err), true
	case r.page.Invalid != "":
		au.invalid++
		line["invalid"], text = r.page.Invalid, "invalid: "+r.page.Invalid
	default:
		t := &au.total
		t.Owed += s.Owed
		t.Fired += s.Fired
		t.NotFired += s.NotFired
		t.Pending += s.Pending
		t.Unaccounted += s.Unaccounted
		t.Truncated = t.Truncated || s.Truncated
		if s.Unaccounted > 0 {
			au.withUnaccounted++
			problem = true
			if len(r.page.Items) > 0 {
				line["first_unaccounted"] = r.page.Items[0].Nominal
			}
		}
		line["summary"], text = s, s.Line()
	}
	if au.problems && !problem {
		return nil
	}
	w := au.a.stdout
	if au.a.jsonOut {
		return json.NewEncoder(w).Encode(line)
	}
	if first, ok := line["first_unaccounted"].(time.Time); ok {
		text += " (first at " + stampUTC(first) + ")"
	}
	_, err := fmt.Fprintf(w, "%s: %s\n", r.id, text)
	return err
}

// printTotal prints the totals, and the cursor to go on from when a
// limit stopped the run.
func (au *slotAudit) printTotal(next string) error {
	w := au.a.stdout
	t := au.total
	if au.a.jsonOut {
		return json.NewEncoder(w).Encode(struct {
			Schedules   int    `json:"schedules"`
			Owed        int    `json:"owed"`
			Fired       int    `json:"fired"`
			NotFired    int    `json:"not_fired_with_reason"`
			Pending     int    `json:"pending"`
			Unaccounted int    `json:"unaccounted"`
			Truncated   bool   `json:"truncated,omitempty"`
			Invalid     int    `json:"invalid,omitempty"`
			Failed      int    `json:"failed,omitempty"`
			NextCursor  string `json:"next_cursor,omitempty"`
		}{au.schedules, t.Owed, t.Fired, t.NotFired, t.Pending, t.Unaccounted, t.Truncated, au.invalid, au.failed, next})
	}
	fmt.Fprintf(w, "schedules %d, %s\n", au.schedules, t.Line())
	var notes []string
	if au.invalid > 0 {
		notes = append(notes, fmt.Sprintf("%d invalid (they owe no slot)", au.invalid))
	}
	if au.failed > 0 {
		notes = append(notes, fmt.Sprintf("%d could not be accounted", au.failed))
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "of which %s\n", strings.Join(notes, ", "))
	}
	if next != "" {
		fmt.Fprintf(w, "next cursor: %s (go on with --cursor %s)\n", next, next)
	}
	return nil
}
