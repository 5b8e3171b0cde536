// Package cli is the `scheduler` command: the daemon (run, demo) and the
// admin commands. cmd/scheduler is a thin main over Main, so every command
// is testable with injected output streams.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/lmittmann/tint"
	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/natsembed"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Exit statuses.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitInvalid = 2 // invalid input: flags, arguments, spec fields
	// ExitConflict: the record changed since the caller read it (a stale
	// --if-revision), or an id given to add --create-only exists. Re-read
	// and decide again.
	ExitConflict = 3
	// ExitLocked: another scheduler runs on --data-dir (it holds the
	// directory's lock); two on one store would corrupt it. Retrying does
	// not help until that one stops.
	ExitLocked = 4
	// ExitNotFound: the schedule, timer, calendar or slot named does not
	// exist (it exited 1 before issue 54).
	ExitNotFound = 5
)

// exitCodes is the table of exit statuses in `scheduler --help`, the
// README and docs/cli.md.
const exitCodes = `Exit status:
  0  done (a repeated pause or resume too, unless --strict)
  1  failed: NATS unreachable, a server error, schedule account found a slot unaccounted
  2  invalid input: a flag, argument, config value or spec field (named in the message)
  3  conflict: the record changed since --if-revision, or add --create-only found it
  4  locked: another scheduler runs on this --data-dir
  5  not found: the schedule, timer, calendar or slot named does not exist`

// usageError marks an error as the caller's input (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func invalidf(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// app holds what every command shares.
type app struct {
	stdout, stderr io.Writer
	logLevel       string
	logFormat      string
	conn           natsconn.Options
	jsonOut        bool
	auditKeyFile   string
	namePrefix     string
	// apiConn, when set, is the connection call uses (a --watch keeps
	// one open); otherwise each call connects.
	apiConn *nats.Conn
	// readableLogs makes --log-format auto write tint's text without
	// colour, not JSON, when stderr is not a terminal: the demo's log is
	// read by people even when piped (durations as 1.5s, not nanoseconds).
	readableLogs bool
	// environ is the process environment (os.Environ in Main): the
	// JETSCHED_ settings of run and the default of --nats-url.
	environ []string
}

// getenv is os.Getenv over a.environ.
func (a *app) getenv(key string) string {
	for _, kv := range slices.Backward(a.environ) {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// Main runs the scheduler command line and returns the exit status.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return mainEnv(ctx, args, os.Environ(), stdout, stderr)
}

// mainEnv is Main in the environment environ ("KEY=value" entries).
func mainEnv(ctx context.Context, args, environ []string, stdout, stderr io.Writer) int {
	a := &app{stdout: stdout, stderr: stderr, environ: environ}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, natsembed.ErrStoreLocked) {
		err = fmt.Errorf("--data-dir: %w; two schedulers on one data dir corrupt its store: stop the other, or give this one another --data-dir", err)
	}
	if errors.Is(err, natsembed.ErrAddrInUse) {
		err = fmt.Errorf("%w; another NATS server or scheduler is running there: pass --listen 127.0.0.1:0 for a free port", err)
	}
	fmt.Fprintf(stderr, "scheduler: %s\n", describe(err))
	var ue usageError
	switch {
	case errors.As(err, new(conflictError)):
		return ExitConflict
	case errors.Is(err, natsembed.ErrStoreLocked):
		return ExitLocked
	case errors.As(err, &ue) || errors.Is(err, kvstore.ErrInvalid) || errors.Is(err, kvstore.ErrStatic) || isFlagError(err):
		return ExitInvalid
	case errors.Is(err, kvstore.ErrNotFound):
		return ExitNotFound
	}
	return ExitFailure
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "scheduler",
		Short: "jetsched: durable, distributed time triggers on NATS JetStream",
		Long: `jetsched keeps schedules in JetStream key-value buckets, claims each due
occurrence by compare-and-swap, and publishes it on sched.fire.<workflow>.

Start here:
  scheduler demo                 embedded NATS, sample schedules, a demo worker
  scheduler run                  the scheduler daemon (embedded NATS by default)
  scheduler schedule add ...     register a schedule

` + exitCodes,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return usageError{flagError(cmd, err)} })
	pf := root.PersistentFlags()
	pf.StringVar(&a.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	pf.StringVar(&a.logFormat, "log-format", "auto", "log format: auto (colour on a terminal, JSON otherwise; the demo writes plain text when piped), text, json")
	a.conn.RegisterFlags(pf.StringVar, a.getenv("NATS_URL"))
	pf.StringVar(&a.namePrefix, "name-prefix", "sched", "names of the buckets, streams and subjects: <prefix>_specs, <PREFIX>_FIRES, <prefix>.fire.…, <prefix>.api.… (several jetsched systems on one NATS)")
	pf.StringVar(&a.auditKeyFile, "audit-key-file", "", "HMAC key for the audit trail (or env JETSCHED_AUDIT_KEY): mutations are recorded in SCHED_AUDIT")
	root.AddCommand(a.runCommand(), a.demoCommand(), a.scheduleCommand(), a.previewCommand(), a.calendarCommand(), a.statusCommand(), a.wakeupCommand(), a.auditCommand(), a.benchCommand(), a.natsconfCommand(), a.deadLetterCommand(), a.consoleCommand(), a.configCommand(), a.manCommand())
	a.addCompletions(root)
	guardGroups(root)
	return root
}

// logger builds the process logger: tint on a terminal, JSON otherwise.
func (a *app) logger() (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(a.logLevel)); err != nil {
		return nil, invalidf("--log-level %q: want debug, info, warn or error", a.logLevel)
	}
	format, colour := a.logFormat, false
	if format == "auto" {
		format = "json"
		if colour = isTerminal(a.stderr); colour || a.readableLogs {
			format = "tint"
		}
	}
	switch format {
	case "tint":
		return slog.New(tint.NewHandler(a.stderr, &tint.Options{Level: level, TimeFormat: "15:04:05.000", NoColor: !colour})), nil
	case "text":
		return slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level})), nil
	case "json":
		return slog.New(slog.NewJSONHandler(a.stderr, &slog.HandlerOptions{Level: level})), nil
	}
	return nil, invalidf("--log-format %q: want auto, text or json", a.logFormat)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// isFlagError recognises cobra's unknown-command error, which does not go
// through the flag error hook.
func isFlagError(err error) bool {
	return strings.HasPrefix(err.Error(), "unknown command")
}

// noArgs and exactArgs are cobra's argument checks, as usage errors.
func noArgs(cmd *cobra.Command, args []string) error {
	if err := cobra.NoArgs(cmd, args); err != nil {
		return usageError{err}
	}
	return nil
}

func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// describe renders an error for the terminal: kvstore.UserMessage's text
// (the admin API's), with the flag of a bad spec field named first
// ("--cron: invalid cron ...").
func describe(err error) string {
	msg := usererr.Message(err)
	var ue *fieldcheck.UserError
	if errors.As(err, &ue) {
		return msg // it says where, e.g. the entry of a --schedules file
	}
	var fe *kvstore.FieldError
	if !errors.As(err, &fe) {
		return msg
	}
	if fe.Field == kvstore.RecurrenceField {
		got := "none"
		if fe.Value != "" {
			var flags []string
			for f := range strings.SplitSeq(fe.Value, ",") {
				flags = append(flags, "--"+strings.ReplaceAll(f, "_", "-"))
			}
			got = strings.Join(flags, " and ")
		}
		return fmt.Sprintf("give exactly one of %s (got %s)", recurrenceFlagList, got)
	}
	return flagMessage(fe.Field, msg)
}

// recurrenceFlagList names the flags that each give a recurrence.
const recurrenceFlagList = "--cron, --every, --daily-at, --at and --business-day"

// flagMessage puts the flag of a spec or request field before msg, when
// the field has one.
func flagMessage(field, msg string) string {
	if field == "labels" || strings.HasPrefix(field, "labels.") {
		return "--label: " + msg
	}
	switch field {
	case kvstore.RecurrenceField:
		return recurrenceFlagList + ": " + msg
	case "align", "phase":
		return "--anchor: " + msg
	case "calendar_inline":
		return "--calendar: " + msg
	case "id", "workflow", "cron", "every", "at", "tz", "input", "anchor", "dialect", "dom_dow", "dst_gap", "dst_overlap",
		"start", "end", "limit", "calendar", "holiday_roll", "business_day", "time", "business_hours_only", "daily_at",
		"misfire", "catchup_window", "misfire_threshold", "overlap", "completion_timeout", "jitter",
		"description", "note", "payload", "condition", "expire_after", "count", "from", "to", "rate", "until",
		"run", "step", "when", "when_expr", "condition_key", "zone", "cursor", "prefix", "state", "selector":
		return "--" + strings.ReplaceAll(field, "_", "-") + ": " + msg
	}
	return msg
}
