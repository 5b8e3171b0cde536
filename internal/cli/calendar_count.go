package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/timearg"
)

// calendarCount is `calendar count`: working days or working hours in
// [--from, --to), negative when --to is before --from.
func (a *app) calendarCount() *cobra.Command {
	var from, to, unit string
	cmd := &cobra.Command{
		Use:   "count NAME|FILE.json --from T --to T [--unit wdays|whours]",
		Short: "Count the working days or working hours between two instants",
		Long: `Counts what working-time arithmetic counts, in the half-open range [--from, --to):
wdays, the working days (working hours, no holiday) among the dates from
--from's up to, not including, --to's in the calendar's zone; whours, the
elapsed time inside working intervals. The count is negative when --to is
before --from. T is RFC 3339, now, or now plus or minus a duration.`,
		Example: `  scheduler calendar count us --from 2026-12-01T00:00:00-05:00 --to 2027-01-01T00:00:00-05:00
  scheduler calendar count ./us.json --from now --to now+30d --unit whours --json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case from == "":
				return invalidf("--from: required: the first instant counted %s", timearg.TimeExample)
			case to == "":
				return invalidf("--to: required: the end instant, not counted %s", timearg.TimeExample)
			}
			now := time.Now()
			f, err := timearg.ParseTime(from, now)
			if err != nil {
				return invalidf("--from %q: %v", from, err)
			}
			t, err := timearg.ParseTime(to, now)
			if err != nil {
				return invalidf("--to %q: %v", to, err)
			}
			if unit != "wdays" && unit != "whours" {
				return invalidf("--unit %q: want wdays (working days) or whours (working hours)", unit)
			}
			cal, err := a.loadCalendar(cmd, args[0])
			if err != nil {
				return err
			}
			res, err := admin.CountCalendar(cmd.Context(), "", cal, f, t)
			if err != nil {
				if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
					return err
				}
				return invalidf("--from %s --to %s: %v", from, to, err)
			}
			res.Name = calendarName(args[0])
			return printCount(a, res, unit)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&from, "from", "", "first instant, counted (RFC 3339, now, now+DURATION, now-DURATION)")
	fl.StringVar(&to, "to", "", "end instant, not counted; before --from counts negative")
	fl.StringVar(&unit, "unit", "wdays", "wdays (working days) or whours (working hours)")
	return cmd
}

// calendarName is the name of a stored calendar, "" for a file.
func calendarName(ref string) string {
	if isCalendarFile(ref) {
		return ""
	}
	return ref
}

// printCount prints a count in unit: a line, or with --json the whole
// count with the unit's value as count.
func printCount(a *app, res admin.CalendarCountResponse, unit string) error {
	var count any = res.WorkingDays
	text := fmt.Sprintf("%d working days", res.WorkingDays)
	if res.WorkingDays == 1 || res.WorkingDays == -1 {
		text = fmt.Sprintf("%d working day", res.WorkingDays)
	}
	if unit == "whours" {
		count = res.WorkingHours
		text = fmt.Sprintf("%s working hours (%s)", strconv.FormatFloat(res.WorkingHours, 'f', -1, 64), res.WorkingTime)
	}
	if a.jsonOut {
		return writeJSON(a.stdout, struct {
			admin.CalendarCountResponse
			Unit  string `json:"unit"`
			Count any    `json:"count"`
		}{res, unit, count})
	}
	lo, hi := res.From, res.To
	if hi.Before(lo) {
		lo, hi = hi, lo
		text += ", counted back"
	}
	fmt.Fprintf(a.stdout, "%s in [%s, %s)\n", text, lo.Format(time.RFC3339Nano), hi.Format(time.RFC3339Nano))
	return nil
}
