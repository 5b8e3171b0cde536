package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// patchFields maps each flag schedule update reads to the spec fields it
// sets. A flag given sets its fields to the values the flags make (a
// field they leave empty is removed); fields of flags not given are kept.
var patchFields = map[string][]string{
	"workflow": {"workflow"}, "input": {"input"}, "description": {"description"},
	"misfire": {"misfire"}, "catchup-window": {"catchup_window"}, "misfire-threshold": {"misfire_threshold"},
	"overlap": {"overlap"}, "completion-timeout": {"completion_timeout"},
	"cron": {"cron"}, "daily-at": {"cron"}, "every": {"every"}, "at": {"at"}, "business-day": {"business_day"},
	"anchor": {"align", "anchor", "phase"}, "tz": {"tz"}, "start": {"start"}, "end": {"end"}, "limit": {"limit"},
	"calendar": {"calendar", "calendar_inline"}, "holiday-roll": {"holiday_roll"}, "business-hours-only": {"business_hours_only"},
	"time": {"time"}, "dialect": {"dialect"}, "dom-dow": {"dom_dow"}, "dst-gap": {"dst_gap"}, "dst-overlap": {"dst_overlap"},
	"jitter": {"jitter"}, "label": {"labels"},
}

func (a *app) scheduleUpdate() *cobra.Command {
	var f addFlags
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "update ID [flags]",
		Short: "Change some fields of a schedule, keep the rest",
		Long: `Change only the fields given by flags and keep every other field of the
schedule as stored: its zone, input, calendar and policies stay unless a
flag names them. A flag given an empty value removes its field (--tz ''
reads the recurrence in UTC again). A new recurrence (--cron, --daily-at,
--every, --at, --business-day) replaces the old one and the options only
it read (a cron's --dialect and DST policies, an interval's --anchor).

The changes are printed field by field. --dry-run prints them and writes
nothing; --if-revision N writes only if the schedule is still at revision
N (exit status 3 if not). The update is applied to the schedule as stored
when it is made, by compare-and-swap on that revision, so a concurrent
change is not lost. Updating keeps the cadence when the recurrence is
unchanged.`,
		Example: `  scheduler schedule update nightly-report --cron '0 3 * * *'
  scheduler schedule update nightly-report --input '{"format":"csv"}' --dry-run
  scheduler schedule update heartbeat --every 1m --if-revision 7
  scheduler schedule update standup --tz ''`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			patch, err := f.patch(cmd.Flags(), cmd.InOrStdin(), time.Now())
			if err != nil {
				return err
			}
			raw, err := json.Marshal(patch)
			if err != nil {
				return err
			}
			var out admin.PutResponse
			req := admin.PutRequest{ID: args[0], Patch: raw, IfRevision: f.ifRevision, DryRun: dryRun}
			if err := a.call(cmd.Context(), "schedule.update", req, &out); err != nil {
				return err
			}
			return a.printPut(out)
		},
	}
	fl := cmd.Flags()
	f.registerSpecFlags(fl)
	fl.Uint64Var(&f.ifRevision, "if-revision", 0, "update only if the schedule is at this revision (exit status 3 if not)")
	fl.BoolVar(&dryRun, "dry-run", false, "print the changes and write nothing")
	return cmd
}

// patch is the spec fields the flags given in fl set: a JSON object for
// the admin API's schedule.update, null for a field a flag empties.
func (f addFlags) patch(fl *pflag.FlagSet, stdin io.Reader, now time.Time) (map[string]json.RawMessage, error) {
	anchor := f.rec.anchor
	f.rec.anchor = "" // read below, over a stored interval the flags may not name
	spec, err := f.spec(stdin, now)
	if err != nil {
		return nil, err
	}
	if anchor != "" {
		tmp := kvstore.Spec{Every: "placeholder"}
		if err := applyAnchor(&tmp, anchor); err != nil {
			return nil, err
		}
		spec.Align, spec.Anchor, spec.Phase = tmp.Align, tmp.Anchor, tmp.Phase
	}
	data, err := spec.Encode()
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	patch := map[string]json.RawMessage{}
	for flag, names := range patchFields {
		if !fl.Changed(flag) {
			continue
		}
		for _, name := range names {
			if v, ok := fields[name]; ok {
				patch[name] = v
			} else if _, set := patch[name]; !set {
				patch[name] = json.RawMessage("null")
			}
		}
	}
	if len(patch) == 0 {
		return nil, invalidf("nothing to update: give the flags of the fields to change (scheduler schedule update --help)")
	}
	return patch, nil
}

// printPut prints what a put did: the changes, field by field.
func (a *app) printPut(out admin.PutResponse) error {
	if a.jsonOut {
		return writeJSON(a.stdout, out)
	}
	var spec kvstore.Spec
	if len(out.Spec) > 0 {
		if err := json.Unmarshal(out.Spec, &spec); err != nil {
			return fmt.Errorf("the reply's spec: %w", err)
		}
	}
	line := func(what string) {
		fmt.Fprintf(a.stdout, "schedule %s %s (revision %d): %s -> %s\n", out.ID, what, out.Revision,
			spec.RecurrenceString(), kvstore.NamedLayout(a.namePrefix).FireSubject(spec.Workflow, out.ID))
	}
	switch {
	case out.Unchanged:
		line("unchanged")
		return nil
	case out.DryRun && out.Created:
		line("would be created (dry run: nothing written)")
	case out.DryRun:
		line("would change (dry run: nothing written)")
	default:
		line("saved")
	}
	if !out.Created {
		writeChanges(a.stdout, out.Changes)
	}
	return nil
}

// writeChanges prints changes one per line: `  field: old -> new`.
func writeChanges(w io.Writer, changes []admin.Change) {
	for _, c := range changes {
		fmt.Fprintf(w, "  %s: %s -> %s\n", c.Field, changeValue(c.From), changeValue(c.To))
	}
}

// changeValue is a changed value as the change lines show it.
func changeValue(v json.RawMessage) string {
	if len(v) == 0 {
		return "(none)"
	}
	s := string(v)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return strings.TrimSpace(s)
}

// add creates the schedule id of spec raw, or with replace replaces it.
// Without replace, an id stored with other fields is not replaced: the
// changes the add would make are listed, and it exits as a conflict.
func (a *app) add(ctx context.Context, id string, raw json.RawMessage, replace bool, f addFlags) error {
	var out admin.PutResponse
	switch {
	case replace && f.ifRevision != 0:
		err := a.call(ctx, "schedule.update", admin.PutRequest{ID: id, Spec: raw, IfRevision: f.ifRevision, DryRun: f.dryRun}, &out)
		if err != nil {
			return err
		}
	case replace:
		if err := a.call(ctx, "schedule.create", admin.PutRequest{ID: id, Spec: raw, Upsert: true, DryRun: f.dryRun}, &out); err != nil {
			return err
		}
	default:
		err := a.call(ctx, "schedule.create", admin.PutRequest{ID: id, Spec: raw, DryRun: f.dryRun}, &out)
		var ce conflictError
		if errors.As(err, &ce) && !f.createOnly {
			return a.addExisting(ctx, id, raw)
		}
		if err != nil {
			return err
		}
	}
	if err := a.printPut(out); err != nil {
		return err
	}
	if !a.jsonOut && f.rec.tz == "" && out.Created {
		a.noteCalendarZone(out.Spec)
	}
	return nil
}

// addExisting answers an add of id that exists: unchanged when the stored
// schedule is the same, else a conflict that lists what would change.
func (a *app) addExisting(ctx context.Context, id string, raw json.RawMessage) error {
	var out admin.PutResponse
	if err := a.call(ctx, "schedule.update", admin.PutRequest{ID: id, Spec: raw, DryRun: true}, &out); err != nil {
		return err
	}
	if out.Unchanged {
		out.DryRun = false
		return a.printPut(out)
	}
	changes := make([]string, len(out.Changes))
	for i, c := range out.Changes {
		changes[i] = fmt.Sprintf("%s %s -> %s", c.Field, changeValue(c.From), changeValue(c.To))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "schedule %s exists with other fields: this add would change %s; nothing was written: add --replace to replace it whole, or change only some fields with scheduler schedule update %s",
		id, strings.Join(changes, ", "), id)
	return conflictError{b.String()}
}

// noteCalendarZone says which zone a new schedule with a calendar and no
// --tz is read in: the calendar's.
func (a *app) noteCalendarZone(raw json.RawMessage) {
	var spec kvstore.Spec
	if json.Unmarshal(raw, &spec) != nil || spec.TZ == "" || (spec.Calendar == "" && len(spec.CalendarInline) == 0) {
		return
	}
	fmt.Fprintf(a.stdout, "  zone %s: the calendar's (--tz to choose another)\n", spec.TZ)
}
