package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/labels"
	"github.com/jetsched/jetsched/internal/specwrite"
	"github.com/jetsched/jetsched/internal/strictjson"
	"github.com/jetsched/jetsched/internal/timearg"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func (a *app) scheduleCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "schedule",
		Aliases: []string{"schedules", "sched"},
		Short:   "Add, inspect and remove schedules",
	}
	cmd.PersistentFlags().BoolVar(&a.jsonOut, "json", false, "print JSON instead of a human table")
	cmd.AddCommand(a.scheduleAdd(), a.scheduleUpdate(), a.scheduleGet(), a.scheduleDescribe(), a.scheduleList(), a.scheduleRemove(),
		a.schedulePause(), a.scheduleResume(), a.scheduleSkip(), a.scheduleTrigger(), a.scheduleBackfill(), a.scheduleHistory(), a.scheduleAccount(), a.scheduleImport(), a.scheduleExport())
	return cmd
}

// addFlags are schedule add's flags: the recurrence flags it shares with
// preview, and what only a stored schedule has.
type addFlags struct {
	rec                                                     recurrenceFlags
	id, workflow, input, description                        string
	misfire, catchup, threshold, overlap, completionTimeout string
	replace, upsert, createOnly, dryRun                     bool
	ifRevision                                              uint64
	labels                                                  []string // --label KEY=VALUE, repeatable
}

func (a *app) scheduleAdd() *cobra.Command {
	var f addFlags
	cmd := &cobra.Command{
		Use:   "add [--id ID] --workflow WF (--cron EXPR | --every DUR [--anchor A] | --daily-at HH:MM | --at TIME | --business-day N --time HH:MM) [--tz ZONE] [--calendar NAME|FILE.json] [--input JSON|@FILE]",
		Short: "Create a schedule (or replace one, with --replace)",
		Long: `Create a schedule. Adding a schedule the same as the stored one writes
nothing and prints "unchanged" (exit status 0), a one-shot that has fired
included, so scripts and services may add their schedules at every start:
an --every interval counts from its first registration (or from --anchor),
and adding it again keeps that anchor. Without --id the id is the
schedule's content hash, <workflow>-<12 hex digits> of its workflow,
recurrence (with zone and policies) and input: the id the Go client's
Schedule gives the same schedule (docs/records.md).

An id that exists with other fields is not replaced silently: add prints
what it would change, field by field, and exits with status 3. --replace
replaces it whole (fields the flags do not give are dropped; the changes
are printed); scheduler schedule update changes some fields and keeps the
rest. --if-revision N (with --replace) replaces it only if it is still at
revision N (schedule get shows it); --create-only refuses an id that
exists even when it is the same. --dry-run prints what would be written.

A schedule with a --calendar and no --tz is read in the calendar's zone
(the output names it). The input is validated before anything is written:
a malformed cron, a cron that never fires, an unknown zone, invalid JSON,
an input over 256 KiB or an id that cannot be a KV key is refused with
exit status 2 and nothing is stored. scheduler preview takes the same
recurrence flags and prints the slots they fire.`,
		Example: `  scheduler schedule add --workflow cleanup --every 1h --input '{"olderThanDays":30}'
  scheduler schedule add --id nightly-report --workflow report --cron '0 2 * * *' --tz Europe/Paris
  scheduler schedule add --id heartbeat --workflow ping --every 30s --input '{"target":"db"}'
  scheduler schedule add --id cleanup --workflow cleanup --every '1 day' --tz Europe/Paris
  scheduler schedule add --id standup --workflow remind --daily-at 09:30 --tz Europe/Paris --calendar ./fr-holidays.json
  scheduler schedule add --id launch --workflow notify --at 2026-12-31T23:59:00Z --input @payload.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			replace, err := f.mode(cmd.Flags().Changed("upsert"))
			if err != nil {
				return err
			}
			now := time.Now()
			spec, err := f.spec(cmd.InOrStdin(), now)
			if err != nil {
				return err
			}
			id := f.id
			if id == "" {
				if err := kvstore.ValidateWorkflow(spec.Workflow); err != nil {
					return err
				}
				id = kvstore.DefaultKey(spec)
			}
			// The store fills in the anchor; check the spec as it will be.
			if err := compile.Validate(specwrite.WithAnchor(spec, nil, now), id, nil); err != nil {
				return err
			}
			raw, err := spec.Encode()
			if err != nil {
				return err
			}
			return a.add(cmd.Context(), id, raw, replace, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.id, "id", "", "schedule id: letters, digits, '-', '_', '=' (default: the content hash, <workflow>-<12 hex digits>)")
	f.registerSpecFlags(fl)
	fl.BoolVar(&f.replace, "replace", false, "replace the schedule with this id if it exists with other fields (the changes are printed)")
	fl.BoolVar(&f.upsert, "upsert", false, "the old name of --replace")
	_ = fl.MarkDeprecated("upsert", "use --replace (or schedule update to change some fields)")
	fl.BoolVar(&f.createOnly, "create-only", false, "refuse an id that exists, even with the same fields (exit status 3)")
	fl.Uint64Var(&f.ifRevision, "if-revision", 0, "with --replace: replace only if the schedule is at this revision (exit status 3 if not)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print what would be written and write nothing")
	// --workflow and exactly one recurrence are required; Validate says so
	// naming the flags, with exit status 2.
	return cmd
}

// mode reads --replace, --upsert (its old name), --create-only and
// --if-revision: whether the add may replace a schedule with other fields.
// upsertSet says whether --upsert was given.
func (f addFlags) mode(upsertSet bool) (replace bool, err error) {
	replace = f.replace || upsertSet && f.upsert
	switch {
	case f.createOnly && replace:
		return false, invalidf("--create-only and --replace are mutually exclusive")
	case f.ifRevision != 0 && !replace:
		return false, invalidf("--if-revision applies to --replace (or use schedule update ID --if-revision N to change some fields)")
	}
	return replace, nil
}

// registerSpecFlags adds the flags that make a spec, shared by add and
// update.
func (f *addFlags) registerSpecFlags(fl *pflag.FlagSet) {
	fl.StringVar(&f.workflow, "workflow", "", "workflow: fires go to sched.fire.<workflow>.<id> (required)")
	f.rec.register(fl)
	fl.StringVar(&f.input, "input", "", "fire message body: JSON, or @FILE to read it from a file")
	fl.StringVar(&f.description, "description", "", "free text for operators")
	fl.StringArrayVar(&f.labels, "label", nil, "a label KEY=VALUE, repeatable (--label team=billing --label tier=gold): what ls --selector filters on")
	fl.StringVar(&f.misfire, "misfire", "", "slots later than the misfire threshold: skip (default), fire_once, fire_all")
	fl.StringVar(&f.catchup, "catchup-window", "", "how far back fire_once/fire_all catch up (default 24h)")
	fl.StringVar(&f.threshold, "misfire-threshold", "", "how late a slot may be and still fire normally (default: the scheduler's, 1m)")
	fl.StringVar(&f.overlap, "overlap", "", "a slot due while the previous fire runs: allow (default), skip, buffer_one, buffer_all, cancel_other")
	fl.StringVar(&f.completionTimeout, "completion-timeout", "", "with an overlap policy: how long a fire may run without a completion report (default 1h)")
}

// spec builds the spec from the flags; errors name the flag's field.
func (f addFlags) spec(stdin io.Reader, now time.Time) (kvstore.Spec, error) {
	s := kvstore.Spec{
		Workflow: f.workflow, Description: f.description,
		Misfire: kvstore.MisfirePolicy(f.misfire), CatchupWindow: f.catchup, MisfireThreshold: f.threshold,
		Overlap: kvstore.OverlapPolicy(f.overlap), CompletionTimeout: f.completionTimeout,
	}
	if err := f.rec.apply(&s, stdin); err != nil {
		return s, err
	}
	var err error
	if s.Labels, err = labels.ParsePairs(f.labels); err != nil {
		return s, err
	}
	if f.input != "" {
		raw := []byte(f.input)
		if name, ok := strings.CutPrefix(f.input, "@"); ok {
			b, err := readInput(name, nil)
			if err != nil {
				return s, &kvstore.FieldError{Field: "input", Value: f.input, Reason: "cannot read file", Err: err}
			}
			raw = b
		}
		if err := fieldcheck.Size("input", len(raw), kvstore.MaxInputBytes); err != nil {
			return s, err
		}
		if !json.Valid(raw) {
			var v any
			err := json.Unmarshal(raw, &v)
			return s, &kvstore.FieldError{Field: "input", Reason: "not valid JSON", Err: err}
		}
		if err := strictjson.Check(raw); err != nil {
			return s, &kvstore.FieldError{Field: "input", Err: err}
		}
		s.Input = json.RawMessage(compactJSON(raw))
	}
	// A one-shot in the past: the API refuses it unless it is the stored one
	// (re-registering a one-shot that fired is "unchanged").
	return s, nil
}

func parseAt(v string, loc *time.Location) (time.Time, error) {
	if strings.HasPrefix(strings.TrimSpace(v), "now") {
		return timearg.ParseTime(v, time.Now())
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04:05", "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, v, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("want RFC 3339 (2026-12-31T23:59:00Z), now+DURATION (now+2h) or 'YYYY-MM-DD HH:MM[:SS]' in --tz")
}

func compactJSON(b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}
