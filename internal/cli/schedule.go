package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/labels"
	"github.com/jetsched/jetsched/internal/strictjson"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func (a *app) scheduleCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "schedule",
		Aliases: []string{"schedules", "sched"},
		Short:   "Add, inspect and remove schedules",
	}
	cmd.PersistentFlags().BoolVar(&a.jsonOut, "json", false, "print JSON instead of a human table")
	cmd.AddCommand(a.scheduleAdd(), a.scheduleGet(), a.scheduleList(), a.scheduleRemove(),
		a.schedulePause(), a.scheduleResume(), a.scheduleSkip(), a.scheduleTrigger(), a.scheduleBackfill(), a.scheduleHistory(), a.scheduleAccount(), a.scheduleImport(), a.scheduleExport())
	return cmd
}

// addFlags are schedule add's flags: the recurrence flags it shares with
// preview, and what only a stored schedule has.
type addFlags struct {
	rec                                                     recurrenceFlags
	id, workflow, input, description                        string
	misfire, catchup, threshold, overlap, completionTimeout string
	upsert, createOnly                                      bool
	ifRevision                                              uint64
	labels                                                  []string // --label KEY=VALUE, repeatable
}

func (a *app) scheduleAdd() *cobra.Command {
	var f addFlags
	cmd := &cobra.Command{
		Use:   "add [--id ID] --workflow WF (--cron EXPR | --every DUR [--anchor A] | --daily-at HH:MM | --at TIME | --business-day N --time HH:MM) [--tz ZONE] [--calendar NAME|FILE.json] [--input JSON|@FILE]",
		Short: "Create or update a schedule",
		Long: `Create a schedule, or update the schedule with that id (--upsert, the
default). Updating keeps the cadence when the recurrence is unchanged, so
services may register their schedules at every start: an --every interval
counts from its first registration (or from --anchor), and registering it
again keeps that anchor. Without --id the id is the schedule's content
hash, <workflow>-<12 hex digits> of its workflow, recurrence (with zone
and policies) and input: the id the Go client's Schedule gives the same
schedule (docs/records.md). Adding a schedule the same as the stored one
writes nothing and prints "unchanged" (exit status 0), a one-shot that has
fired included.

--create-only refuses an id that exists, and --if-revision N updates the
schedule only if it is still at revision N (schedule get shows it): both
exit with status 3 (conflict) when the schedule is not as expected, and
write nothing.

The input is validated before anything is written: a malformed cron, a cron
that never fires, an unknown zone, invalid JSON, an input over 256 KiB or
an id that cannot be a KV key is refused with exit status 2 and nothing is
stored. scheduler preview takes the same recurrence flags and prints the
slots they fire.`,
		Example: `  scheduler schedule add --workflow cleanup --every 1h --input '{"olderThanDays":30}'
  scheduler schedule add --id nightly-report --workflow report --cron '0 2 * * *' --tz Europe/Paris
  scheduler schedule add --id heartbeat --workflow ping --every 30s --input '{"target":"db"}'
  scheduler schedule add --id cleanup --workflow cleanup --every '1 day' --tz Europe/Paris
  scheduler schedule add --id standup --workflow remind --daily-at 09:30 --tz Europe/Paris --calendar ./fr-holidays.json
  scheduler schedule add --id launch --workflow notify --at 2026-12-31T23:59:00Z --input @payload.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			verb, upsert, err := f.mode(cmd.Flags().Changed("upsert"))
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
			if err := compile.Validate(spec.WithAnchor(nil, now), id, nil); err != nil {
				return err
			}
			raw, err := spec.Encode()
			if err != nil {
				return err
			}
			var out admin.PutResponse
			req := admin.PutRequest{ID: id, Spec: raw, Upsert: upsert, IfRevision: f.ifRevision}
			if err := a.call(cmd.Context(), verb, req, &out); err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.stdout, map[string]any{"id": out.ID, "revision": out.Revision, "created": out.Created,
					"unchanged": out.Unchanged, "spec": spec})
			}
			what := "saved"
			if out.Unchanged {
				what = "unchanged"
			}
			fmt.Fprintf(a.stdout, "schedule %s %s (revision %d): %s -> %s\n", out.ID, what, out.Revision,
				spec.RecurrenceString(), kvstore.NamedLayout(a.namePrefix).FireSubject(spec.Workflow, out.ID))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.id, "id", "", "schedule id: letters, digits, '-', '_', '=' (default: the content hash, <workflow>-<12 hex digits>)")
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
	fl.BoolVar(&f.upsert, "upsert", true, "create the schedule, or replace the one with this id")
	fl.BoolVar(&f.createOnly, "create-only", false, "refuse an id that exists (exit status 3)")
	fl.Uint64Var(&f.ifRevision, "if-revision", 0, "update the existing schedule only if it is at this revision (exit status 3 if not)")
	// --workflow and exactly one recurrence are required; Validate says so
	// naming the flags, with exit status 2.
	return cmd
}

// mode chooses the API verb from --upsert, --create-only and
// --if-revision; upsertSet says whether --upsert was given.
func (f addFlags) mode(upsertSet bool) (verb string, upsert bool, err error) {
	switch {
	case f.createOnly && upsertSet && f.upsert:
		return "", false, invalidf("--create-only and --upsert are mutually exclusive")
	case f.ifRevision != 0 && (f.createOnly || upsertSet && !f.upsert):
		return "", false, invalidf("--if-revision updates an existing schedule; it does not go with --create-only")
	case f.ifRevision != 0:
		return "schedule.update", false, nil
	case f.createOnly || !f.upsert:
		return "schedule.create", false, nil
	}
	return "schedule.create", true, nil
}

// spec builds the spec from the flags; errors name the flag's field.
func (f addFlags) spec(stdin io.Reader, now time.Time) (kvstore.Spec, error) {
	s := kvstore.Spec{
		Workflow: f.workflow, Description: f.description,
		Misfire: kvstore.MisfirePolicy(kvstore.MisfirePolicy(kvstore.MisfirePolicy(f.misfire))), CatchupWindow: f.catchup, MisfireThreshold: f.threshold,
		Overlap: kvstore.OverlapPolicy(kvstore.OverlapPolicy(f.overlap)), CompletionTimeout: f.completionTimeout,
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
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04:05", "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, v, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("want RFC 3339 (2026-12-31T23:59:00Z) or 'YYYY-MM-DD HH:MM[:SS]' in --tz")
}

func compactJSON(b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}
