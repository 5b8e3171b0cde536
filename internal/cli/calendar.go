package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/calendars"
	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func (a *app) calendarCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "calendar",
		Aliases: []string{"calendars", "cal"},
		Short:   "Store and inspect business calendars (holidays, working hours)",
		Long: `Business calendars live in the sched_calendars bucket. A schedule names one
(schedule add --calendar NAME) to skip or roll holidays and to keep fires in
working hours. The JSON form is in docs/calendar.md.`,
	}
	cmd.PersistentFlags().BoolVar(&a.jsonOut, "json", false, "print JSON instead of a human table")
	cmd.AddCommand(a.calendarPut(), a.calendarGet(), a.calendarList(), a.calendarRemove(), a.calendarCheck(), a.calendarCount())
	return cmd
}

// maxInputBytes is the most the CLI reads of an input file or standard
// input: far above any record's limit (kvstore.MaxInputBytes, the NATS
// payload), and a bound on /dev/zero or a pipe that never ends.
const maxInputBytes = 64 << 20

// maxImportBytes bounds an import file: a million schedules take about
// 200 MB of JSON lines.
const maxImportBytes = 2 << 30

// readInput reads a file, or standard input for "-", at most
// maxInputBytes. A pipe is fine (`--input @<(jq ...)`); one that is never
// written to waits, as cat would, until the user interrupts.
func readInput(name string, stdin io.Reader) ([]byte, error) {
	return readInputMax(name, stdin, maxInputBytes)
}

// readInputMax is readInput with another bound.
func readInputMax(name string, stdin io.Reader, max int64) ([]byte, error) {
	if name == "-" {
		return readCapped("standard input", stdin, max)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCapped(name, f, max)
}

// readCapped reads r to its end, refusing more than max bytes.
func readCapped(name string, r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: larger than %d MiB", name, max>>20)
	}
	return b, nil
}

func (a *app) calendarPut() *cobra.Command {
	return &cobra.Command{
		Use:   "put NAME FILE.json|-",
		Short: "Create or replace a calendar; schedules using it re-plan",
		Args:  exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := jsstore.CheckStoredCalendarName(name); err != nil {
				return err
			}
			data, err := readInput(args[1], cmd.InOrStdin())
			if err != nil {
				return usageError{fmt.Errorf("calendar file %q: %w", args[1], err)}
			}
			if _, err := calendar.Parse(data); err != nil {
				return usageError{fmt.Errorf("calendar %s: %w", name, err)}
			}
			cal, _ := calendar.Parse(data)
			var out struct {
				Revision    uint64 `json:"revision"`
				Fingerprint string `json:"fingerprint"`
			}
			if err := a.call(cmd.Context(), "calendar.put", admin.CalendarRequest{Name: name, Calendar: data}, &out); err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.stdout, map[string]any{"name": name, "revision": out.Revision, "fingerprint": out.Fingerprint})
			}
			fmt.Fprintf(a.stdout, "calendar %s saved (revision %d, zone %s)\n", name, out.Revision, cal.Location())
			return nil
		},
	}
}

func (a *app) calendarGet() *cobra.Command {
	return &cobra.Command{
		Use:   "get NAME",
		Short: "Print a calendar's JSON",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := jsstore.CheckCalendarRef(args[0]); err != nil {
				return err
			}
			var v any
			if err := a.call(cmd.Context(), "calendar.get", admin.CalendarRequest{Name: args[0]}, &v); err != nil {
				return err
			}
			return writeJSON(a.stdout, v)
		},
	}
}

func (a *app) calendarList() *cobra.Command {
	var p pageFlags
	cmd := &cobra.Command{
		Use:     "ls [--limit N] [--cursor C | --all]",
		Aliases: []string{"list"},
		Short:   "List calendars in name order, a page at a time, the shipped ones (builtin:NAME) with them",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listing[admin.CalendarRow]{a: a, flags: p, what: "calendars",
				fetch: func(ctx context.Context, cursor string, limit int) (admin.Page[admin.CalendarRow], error) {
					var pg admin.Page[admin.CalendarRow]
					return pg, a.call(ctx, "calendar.list", admin.CalendarListRequest{Cursor: cursor, Limit: limit}, &pg)
				},
				header: "NAME\tZONE\tREVISION\tSTATUS",
				row: func(r admin.CalendarRow) string {
					status := "ok"
					if r.Builtin {
						status = "shipped"
					}
					if r.Invalid != "" {
						status = "INVALID: " + r.Invalid
					}
					return fmt.Sprintf("%s\t%s\t%d\t%s", r.Name, r.Zone, r.Revision, status)
				},
			}.run(cmd.Context())
		},
	}
	p.register(cmd.Flags(), admin.DefaultLimit, "calendars")
	return cmd
}

func (a *app) calendarRemove() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:     "rm NAME",
		Aliases: []string{"remove", "delete"},
		Short:   "Remove a calendar (refused while schedules use it, unless --force)",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := jsstore.CheckStoredCalendarName(name); err != nil {
				return err
			}
			if err := a.call(cmd.Context(), "calendar.delete", admin.CalendarRequest{Name: name, Force: force}, nil); err != nil {
				if errors.Is(err, jsstore.ErrInUse) {
					return &fieldcheck.UserError{Kind: jsstore.ErrInUse, Err: err,
						Msg: usererr.Message(err) + " (--force removes it anyway; those schedules then stop with an invalid event)"}
				}
				return err
			}
			if a.jsonOut {
				return writeJSON(a.stdout, map[string]any{"name": name, "removed": true})
			}
			fmt.Fprintf(a.stdout, "calendar %s removed\n", name)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "remove even if schedules use it")
	return cmd
}

func (a *app) calendarCheck() *cobra.Command {
	var from string
	var days, year int
	cmd := &cobra.Command{
		Use:   "check NAME|builtin:NAME|FILE.json [--from DATE --days N | --year Y]",
		Short: "Print each non-working day (and half day) in a range with the rule that made it so",
		Example: `  scheduler calendar check us --from 2026-12-20 --days 20
  scheduler calendar check builtin:uk-england --year 2022
  scheduler calendar check ./us.json --from 2027-01-01 --days 365 --json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("year") {
				if cmd.Flags().Changed("from") || cmd.Flags().Changed("days") {
					return invalidf("--year %d: give --year, or --from and --days, not both", year)
				}
				if year < 1 || year > 9999 {
					return invalidf("--year %d: must be 1 to 9999", year)
				}
			}
			if days < 1 || days > 36600 {
				return invalidf("--days %d: must be 1 to 36600", days)
			}
			cal, err := a.loadCalendar(cmd, args[0])
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("year") {
				from = fmt.Sprintf("%04d-01-01", year)
				days = time.Date(year, 12, 31, 12, 0, 0, 0, time.UTC).YearDay()
			}
			start, err := time.ParseInLocation("2006-01-02", from, cal.Location())
			if err != nil {
				return invalidf("--from %q: want YYYY-MM-DD", from)
			}
			printNonWorkingDays(a, cal, start, days)
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", time.Now().Format("2006-01-02"), "first date (YYYY-MM-DD, in the calendar's zone)")
	cmd.Flags().IntVar(&days, "days", 31, "how many days")
	cmd.Flags().IntVar(&year, "year", 0, "the whole year Y instead of --from and --days")
	return cmd
}

func printNonWorkingDays(a *app, cal *calendar.Calendar, start time.Time, days int) {
	type row struct {
		Date   string `json:"date"`
		Day    string `json:"weekday"`
		Reason string `json:"reason"`
	}
	var rows []row
	for i := range days {
		d := start.AddDate(0, 0, i)
		reason := cal.NonWorkingReason(d)
		if h, ok := cal.HalfDay(d); ok && reason == "" {
			reason = fmt.Sprintf("half day %q (%s)", h.Name, h.Rule)
		}
		if reason != "" {
			rows = append(rows, row{Date: d.Format("2006-01-02"), Day: d.Weekday().String()[:3], Reason: reason})
		}
	}
	if a.jsonOut {
		_ = writeJSON(a.stdout, rows)
		return
	}
	for _, r := range rows {
		fmt.Fprintf(a.stdout, "%s %s  %s\n", r.Date, r.Day, r.Reason)
	}
}

// loadCalendar reads a calendar from a JSON file (a name ending in .json,
// or -), a shipped one (builtin:NAME, from the binary) or, by name, from
// the sched_calendars bucket.
func (a *app) loadCalendar(cmd *cobra.Command, ref string) (*calendar.Calendar, error) {
	if ref == "-" || strings.HasSuffix(ref, ".json") || strings.ContainsRune(ref, os.PathSeparator) {
		data, err := readInput(ref, cmd.InOrStdin())
		if err != nil {
			return nil, usageError{fmt.Errorf("calendar file %q: %w", ref, err)}
		}
		cal, err := calendar.Parse(data)
		if err != nil {
			return nil, usageError{fmt.Errorf("calendar %s: %w", ref, err)}
		}
		return cal, nil
	}
	if calendars.IsBuiltin(ref) {
		cal, err := calendars.Parse(ref, nil)
		if err != nil {
			return nil, usageError{fmt.Errorf("calendar %s: %w", ref, err)}
		}
		return cal, nil
	}
	if err := fieldcheck.Token("calendar", ref); err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if err := a.call(cmd.Context(), "calendar.get", admin.CalendarRequest{Name: ref}, &raw); err != nil {
		if errors.Is(err, kvstore.ErrNotFound) {
			// The user named a calendar that is not there: invalid input.
			return nil, usageError{fmt.Errorf("--calendar: %w", err)}
		}
		return nil, err
	}
	return calendar.Parse(raw)
}
