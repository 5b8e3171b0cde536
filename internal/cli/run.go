package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jetsched/jetsched/internal/claimttl"
	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/console"
	"github.com/jetsched/jetsched/internal/control"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/demoworker"
	"github.com/jetsched/jetsched/internal/eventfilter"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/labelcap"
	"github.com/jetsched/jetsched/internal/memlimit"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/natsembed"
	"github.com/jetsched/jetsched/internal/redact"
	"github.com/jetsched/jetsched/internal/regfile"
	"github.com/jetsched/jetsched/internal/staticfile"
	"github.com/jetsched/jetsched/internal/timers"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// daemonFlags are the flags of run and demo.
type daemonFlags struct {
	flags   *pflag.FlagSet // to tell an explicit --listen or --data-dir from its default
	listen  string
	dataDir string
	// tempDataDir: the demo's temporary store, explicit like --data-dir.
	tempDataDir  bool
	serverConfig string
	replicas     int
	instance     string
	claimTTL     time.Duration
	misfire      time.Duration
	workers      int
	windowSlots  int
	gcPercent    int
	windowBusy   int
	recordLag    time.Duration
	fireQuantum  time.Duration
	stateEvery   time.Duration
	endedLists   bool
	tworkers     int
	tickTTL      time.Duration
	fireTTL      time.Duration
	fireHistory  int64
	dupWindow    time.Duration
	leaseTTL     time.Duration
	pingInterval time.Duration
	shards       int
	metrics      string
	wfLimit      int
	stopTimeout  time.Duration
	pprof        bool
	pprofRemote  bool
	deadMan      time.Duration
	logFires     bool
	memoryLimit  string
	gcHeadroom   string
	backfill     int
	console      consoleFlags
	// clockOffset shifts the scheduler's clock (hidden: a test setting,
	// see docs/reliability.md).
	clockOffset time.Duration
	schedules   []string
	events      string
	// condBuckets is --condition-buckets.
	condBuckets []string
	// configFile is --config: a YAML file of settings
	// (docs/configuration.md).
	configFile string
}

func (f *daemonFlags) register(cmd *cobra.Command, defaultDataDir, defaultConsole string) {
	fl := cmd.Flags()
	f.console.register(fl, "console-", defaultConsole, "serve the web console on this HTTP address, e.g. 127.0.0.1:8090 (\"\": off; a non-loopback one needs --console-auth); see docs/console.md")
	f.flags = fl
	fl.StringVar(&f.configFile, "config", "", "YAML (or JSON) file of settings, keyed by flag name (lease-ttl: 10s); flags given win over it, it wins over JETSCHED_<FLAG> variables (env "+configEnv+"; docs/configuration.md)")
	fl.StringVar(&f.listen, "listen", daemon.DefaultListen, "embedded nats-server client address (port 0 picks a free port); given explicitly, it overrides --server-config's")
	fl.StringVar(&f.dataDir, "data-dir", defaultDataDir, "embedded nats-server JetStream store directory; given explicitly, it overrides --server-config's store_dir")
	fl.StringVar(&f.serverConfig, "server-config", "", "nats-server config file for the embedded server (accounts, authorization, TLS, monitoring), e.g. natsconf/single.conf; the scheduler then connects as --user/--password, --nkey or --creds")
	fl.IntVar(&f.replicas, "replicas", 1, "replicas of every bucket and stream (3 on a cluster)")
	fl.StringVar(&f.instance, "instance", "", "instance id in claims and ticks (default: random per process)")
	durationVar(fl, &f.claimTTL, "claim-ttl", 30*time.Second, "how long a claim is exclusive before others may take its slot over")
	durationVar(fl, &f.misfire, "misfire-threshold", time.Minute, "how late a slot may be and still fire; later slots are recorded as missed")
	fl.IntVar(&f.workers, "workers", fires.DefaultWorkers, "schedules processed concurrently")
	fl.IntVar(&f.windowSlots, "window-slots", fires.DefaultWindowSlots, "most due slots of one shard claimed by one window CAS (0: claim every slot on its own record; docs/protocol.md)")
	fl.IntVar(&f.windowBusy, "window-busy", fires.DefaultWorkers/2, "busy workers from which due slots go onto window claims (0: always; below it each slot is claimed on its own, with less latency)")
	durationVar(fl, &f.stateEvery, "state-interval", defaultStateInterval, "how long the state record of a recurring schedule fired in windows may stay behind its fires: recorded within each interval (each shard at its own share of it, from half to all), at a stop, and at once beside an instance that cannot read such records; whoever takes its shard reads the fire stream first (0: each fire recorded; at most half of --duplicate-window; docs/protocol.md)")
	fl.BoolVar(&f.endedLists, "ended-lists", true, "write the records of a window's one-shots as one ended list per batch (a key in the leases bucket) instead of a state record each, while every instance reads such lists; false: turn this instance's shards' lists into state records (docs/records.md)")
	durationVar(fl, &f.fireQuantum, "fire-quantum", fires.DefaultFireQuantum, "due slots are dispatched at the first multiple of this at or after their time (never before), so that the slots due within one quantum take one wake-up and go onto window claims together: at most this much lateness for less CPU per fire (0: each slot at its time; at most 100ms; docs/performance.md)")
	durationVar(fl, &f.recordLag, "record-lag", fires.DefaultRecordLag, "how long the state record of a one-shot fired in a window may wait behind due work: a herd is published first, recorded after (0: each record with its window; docs/protocol.md)")
	fl.IntVar(&f.tworkers, "timer-workers", timers.DefaultWorkers, "timers fired concurrently")
	fl.StringSliceVar(&f.condBuckets, "condition-buckets", nil, "the KV buckets timers' condition keys may name (comma list; default none: a timer with a condition key is refused, and one written straight into the bucket is reported invalid, never fired); the scheduler's own buckets are never allowed. Give its user read rights on them (scheduler natsconf --condition-buckets)")
	durationVar(fl, &f.tickTTL, "tick-retention", 24*time.Hour, "how long slot ledger entries are kept (TTL of sched_ticks)")
	durationVar(fl, &f.fireTTL, "fire-retention", 7*24*time.Hour, "how long fires and wakeups stay in SCHED_FIRES and SCHED_WAKEUPS (the fire stream is the ledger of dispatched slots)")
	fl.Int64Var(&f.fireHistory, "fire-history", jsstore.DefaultFireHistory, "most fires kept per schedule in SCHED_FIRES (-1: no limit); keep it above what a schedule fires while its workers may be down")
	durationVar(fl, &f.dupWindow, "duplicate-window", jsstore.DefaultDuplicateWindow, "Nats-Msg-Id dedupe window of SCHED_FIRES (must exceed 2 x claim TTL)")
	durationVar(fl, &f.leaseTTL, "lease-ttl", fires.DefaultLeaseTTL, "shard lease TTL: a dead instance's shards move after this long")
	durationVar(fl, &f.pingInterval, "nats-ping-interval", natsconn.DefaultPingInterval, "how often the scheduler pings its NATS server: after two pings without an answer the connection is stale and reconnects, so a half-open link is noticed within 2-3 intervals (nats.go's own default, 2m, takes 4-6 minutes)")
	fl.IntVar(&f.shards, "shards", jsstore.DefaultShards, "shard count, fixed when the leases bucket is created")
	fl.StringVar(&f.metrics, "metrics-listen", "", "serve Prometheus /metrics, /healthz and /readyz on this address, e.g. 127.0.0.1:9464 (default: off)")
	fl.IntVar(&f.wfLimit, "metrics-workflow-limit", labelcap.DefaultMax, "the most workflows with series of their own in the workflow-labelled metrics (jetsched_fires_total, jetsched_fire_lateness_seconds): later ones are counted under workflow=\"other\"")
	durationVar(fl, &f.stopTimeout, "stop-timeout", daemon.DefaultStopTimeout, "how long a stop (SIGINT, SIGTERM) may take to finish in-flight fires and write their records before the process exits with an error; keep it below the supervisor's kill delay (Kubernetes' terminationGracePeriodSeconds)")
	fl.BoolVar(&f.pprof, "pprof", false, "also serve Go's profiles under /debug/pprof/ on --metrics-listen, which must then be a loopback address (CPU, heap, goroutines; no cmdline; seconds= at most 60)")
	fl.BoolVar(&f.pprofRemote, "pprof-allow-remote", false, "with --pprof: allow a --metrics-listen that is not loopback (anyone who reaches it can profile the process and read its memory's shape)")
	durationVar(fl, &f.deadMan, "dead-man-tolerance", time.Minute, "report a schedule on jetsched_schedule_overdue_seconds when its slot is this late")
	fl.BoolVar(&f.logFires, "log-fires", false, "log one info line per fire: schedule, workflow, slot, lateness and reason (off: no work on the fire path)")
	fl.IntVar(&f.gcPercent, "gc-percent", memlimit.DefaultGCPercent, "the Go collector's GOGC (negative: off); a GOGC environment variable wins. 200 keeps collections from stalling fires on small machines; a memory limit still caps the heap")
	fl.StringVar(&f.gcHeadroom, "gc-headroom", memlimit.DefaultHeadroomFlag, "the most the Go heap may grow past the live heap between collections (GOGC is lowered for a large heap, never below 25): keeps a million schedules from taking three times their memory; off: GOGC alone. Not with a GOGC environment variable")
	fl.StringVar(&f.memoryLimit, "memory-limit", memlimit.Auto, "the Go runtime's soft memory limit: a size (1.5GiB, 800MB), off, or auto (90% of the cgroup's memory limit when there is one); a GOMEMLIMIT environment variable wins")
	fl.IntVar(&f.backfill, "max-backfill-slots", control.DefaultMaxBackfillSlots, "the most slots one backfill request may replay (larger ranges are refused)")
	signedDurationVar(fl, &f.clockOffset, "clock-offset", 0, "for tests: add this to the system clock, e.g. 30s or -30s, to simulate a wrong clock")
	_ = fl.MarkHidden("clock-offset")
	fl.StringArrayVar(&f.schedules, "schedules", nil, "static schedules file (JSON or YAML, docs/operations.md), repeatable: its schedules are created or updated at start, removed when they leave it, and refused to put or rm")
	fl.StringVar(&f.events, "events", "default", "observer events to publish on sched.event.>: a comma list of default (all but fired), all, none, or kinds: "+eventfilter.Set(nil).String()+",fired")
}

// maxStopTimeout bounds --stop-timeout: a stop longer than an hour is a
// hung process, not a graceful one.
const maxStopTimeout = time.Hour

// maxWorkflowLimit bounds --metrics-workflow-limit: beyond it a scrape is
// megabytes again.
const maxWorkflowLimit = 10_000

// maxClockOffset bounds --clock-offset: a test setting that simulates a
// wrong clock, not a way to run a day off.
const maxClockOffset = 24 * time.Hour

// maxPingInterval bounds --nats-ping-interval at nats.go's own default: a
// longer one only delays noticing a dead link.
const maxPingInterval = 2 * time.Minute

// defaultStateInterval is --state-interval's default (scheduler run and
// bench): a steady schedule's record is written once per 10 s instead of
// at every fire, well within half of the default --duplicate-window.
const defaultStateInterval = 10 * time.Second

func (a *app) daemonConfig(f *daemonFlags) (daemon.Config, error) {
	log, err := a.logger()
	if err != nil {
		return daemon.Config{}, err
	}
	if err := a.conn.Validate(); err != nil {
		return daemon.Config{}, usageError{err}
	}
	if err := kvstore.ValidatePrefix(a.namePrefix); err != nil {
		return daemon.Config{}, usageError{err}
	}
	if f.replicas < 1 || f.replicas > 5 {
		return daemon.Config{}, invalidf("--replicas %d: must be 1 to 5", f.replicas)
	}
	if f.backfill < 1 {
		return daemon.Config{}, invalidf("--max-backfill-slots %d: must be at least 1", f.backfill)
	}
	if err := f.checkEngine(); err != nil {
		return daemon.Config{}, err
	}
	if f.instance != "" {
		if err := kvstore.ValidateID(f.instance); err != nil {
			return daemon.Config{}, invalidf("--instance: %v", err)
		}
	}
	if f.clockOffset < -maxClockOffset || f.clockOffset > maxClockOffset {
		return daemon.Config{}, invalidf("--clock-offset %s: must be within ±%s", f.clockOffset, maxClockOffset)
	}
	if f.wfLimit < 1 || f.wfLimit > maxWorkflowLimit {
		return daemon.Config{}, invalidf("--metrics-workflow-limit %d: must be 1 to %d", f.wfLimit, maxWorkflowLimit)
	}
	if f.stopTimeout < time.Second || f.stopTimeout > maxStopTimeout {
		return daemon.Config{}, invalidf("--stop-timeout %s: must be 1s to %s", f.stopTimeout, maxStopTimeout)
	}
	if f.pprof && f.metrics == "" {
		return daemon.Config{}, invalidf("--pprof: needs --metrics-listen (the profiles are served on its address)")
	}
	if err := fieldcheck.ConditionBuckets(f.condBuckets, kvstore.NamedLayout(a.namePrefix).WithDefaults().Prefix); err != nil {
		if fe := (*kvstore.FieldError)(nil); errors.As(err, &fe) {
			return daemon.Config{}, invalidf("--condition-buckets %q: %s", fe.Value, fe.Reason)
		}
		return daemon.Config{}, invalidf("--condition-buckets: %v", err)
	}
	if f.pprofRemote && !f.pprof {
		return daemon.Config{}, invalidf("--pprof-allow-remote: goes with --pprof")
	}
	if f.pprof {
		if err := daemon.CheckProfiling(f.metrics, f.pprofRemote); err != nil {
			return daemon.Config{}, invalidf("--pprof on --metrics-listen %s: a loopback address only (127.0.0.1, ::1, localhost), unless --pprof-allow-remote is given: whoever reaches it can profile the process", f.metrics)
		}
	}
	events, err := eventfilter.Parse(f.events)
	if err != nil {
		return daemon.Config{}, usageError{fmt.Errorf("--events: %s", usererr.Message(err))}
	}
	for _, path := range f.schedules {
		if err := regfile.Check(path); err != nil {
			return daemon.Config{}, invalidf("--schedules: %w", err)
		}
	}
	static, err := staticfile.LoadAll(f.schedules)
	if err != nil {
		return daemon.Config{}, usageError{err}
	}
	key, err := a.auditKey()
	if err != nil {
		return daemon.Config{}, err
	}
	listen, dataDir, err := f.embeddedPlace(a.conn)
	if err != nil {
		return daemon.Config{}, err
	}
	var cons console.Config
	if f.console.listen != "" {
		if cons, err = f.console.config(); err != nil {
			return daemon.Config{}, err
		}
	}
	cfg := daemon.Config{
		AuditKey:     key,
		Embedded:     a.conn.URL == "",
		Listen:       listen,
		DataDir:      dataDir,
		ServerConfig: f.serverConfig,
		Conn:         a.conn,
		Logger:       log,

		MetricsListen:        f.metrics,
		MetricsWorkflowLimit: f.wfLimit,
		StopTimeout:          f.stopTimeout,
		Profiling:            f.pprof,
		ProfilingAllowRemote: f.pprofRemote,
		DeadManTolerance:     f.deadMan,
		MaxBackfillSlots:     f.backfill,
		Console:              cons,
		Static:               static,
		Setup: jsstore.SetupConfig{
			Layout:   kvstore.NamedLayout(a.namePrefix),
			Replicas: f.replicas, TickRetention: f.tickTTL, FireRetention: f.fireTTL, FireHistory: f.fireHistory, DuplicateWindow: f.dupWindow, Shards: f.shards,
		},
	}
	cfg.Conn.PingInterval = f.pingInterval
	cfg.Fire.Instance = f.instance
	cfg.Fire.Clock = clock.Clock{Offset: f.clockOffset}
	cfg.Fire.ClaimTTL = f.claimTTL
	cfg.Fire.MisfireThreshold = f.misfire
	cfg.Fire.Workers = f.workers
	cfg.Fire.WindowSlots, cfg.Fire.WindowBusy = fires.WindowFlags(f.windowSlots, f.windowBusy)
	cfg.Fire.RecordLag = fires.RecordLagFlag(f.recordLag)
	cfg.Fire.FireQuantum = f.fireQuantum
	cfg.Fire.StateInterval = f.stateEvery
	cfg.Fire.EndedLists = f.endedLists
	cfg.TimerWorkers = f.tworkers
	cfg.ConditionBuckets = f.condBuckets
	cfg.Fire.LeaseTTL = f.leaseTTL
	cfg.Fire.Events = events
	cfg.Fire.LogFires = f.logFires
	cfg.Fire.StepHook = crashHook(os.Getenv("JETSCHED_CRASH_AT"), os.Exit)
	return cfg, nil
}

// maxDurationFlag bounds every duration setting of run: ten years is
// more than any of them needs, and far enough from time.Duration's 292
// years that what the engine computes from them (9/10 of a lease TTL, a
// threshold added to now) cannot overflow into a negative duration.
const maxDurationFlag = 10 * 365 * 24 * time.Hour

// checkEngine refuses engine settings out of range before anything
// starts, naming the flag (the engines' own checks name Config fields).
func (f *daemonFlags) checkEngine() error {
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{
		{"--lease-ttl", f.leaseTTL}, {"--misfire-threshold", f.misfire}, {"--tick-retention", f.tickTTL},
		{"--fire-retention", f.fireTTL}, {"--duplicate-window", f.dupWindow}, {"--dead-man-tolerance", f.deadMan},
	} {
		if d.v > maxDurationFlag {
			return invalidf("%s %s: must be at most %s (10 years)", d.flag, d.v, maxDurationFlag)
		}
	}
	switch {
	case f.fireQuantum < 0 || f.fireQuantum > fires.MaxFireQuantum:
		return invalidf("--fire-quantum %s: must be between 0 and %s (it is lateness added to a slot)", f.fireQuantum, fires.MaxFireQuantum)
	case f.windowBusy < 0:
		return invalidf("--window-busy %d: must not be negative (0: windows always)", f.windowBusy)
	case f.windowSlots < 0:
		return invalidf("--window-slots %d: must not be negative (0 turns window claims off)", f.windowSlots)
	case f.workers < 1:
		return invalidf("--workers %d: must be at least 1", f.workers)
	case f.tworkers < 1:
		return invalidf("--timer-workers %d: must be at least 1", f.tworkers)
	case f.claimTTL < time.Second || f.claimTTL > claimttl.Max:
		return invalidf("--claim-ttl %s: must be 1s to %s", f.claimTTL, claimttl.Max)
	case f.leaseTTL < time.Second:
		return invalidf("--lease-ttl %s: must be at least 1s (per-key TTLs are whole seconds)", f.leaseTTL)
	case f.pingInterval < time.Second || f.pingInterval > maxPingInterval:
		return invalidf("--nats-ping-interval %s: must be 1s to %s", f.pingInterval, maxPingInterval)
	case f.misfire < 0:
		return invalidf("--misfire-threshold %s: must not be negative", f.misfire)
	case f.fireTTL <= 0:
		return invalidf("--fire-retention %s: must be positive", f.fireTTL)
	case f.fireHistory == 0 || f.fireHistory < -1:
		return invalidf("--fire-history %d: must be at least 1, or -1 for no limit", f.fireHistory)
	case f.dupWindow > f.fireTTL:
		return invalidf("--fire-retention %s: must be at least --duplicate-window (%s)", f.fireTTL, f.dupWindow)
	case f.recordLag < 0 || f.recordLag > f.fireTTL/2:
		return invalidf("--record-lag %s: must be between 0 and half of --fire-retention (%s): until its record is written, the fire stream is what shows a one-shot fired", f.recordLag, f.fireTTL)
	case f.stateEvery < 0 || f.stateEvery > min(fires.MaxStateInterval, f.dupWindow/2):
		return invalidf("--state-interval %s: must be between 0 and half of --duplicate-window (%s): an instance of the previous release that takes a shard over before its records are written republishes their slots, which the stream drops only within the duplicate window", f.stateEvery, f.dupWindow)
	case f.tickTTL <= 0:
		return invalidf("--tick-retention %s: must be positive", f.tickTTL)
	case f.dupWindow <= 2*f.claimTTL:
		return invalidf("--duplicate-window %s: must exceed 2 x --claim-ttl (%s)", f.dupWindow, 2*f.claimTTL)
	case f.shards < 1:
		return invalidf("--shards %d: must be at least 1", f.shards)
	case f.deadMan <= 0:
		return invalidf("--dead-man-tolerance %s: must be positive", f.deadMan)
	}
	return nil
}

// embeddedPlace checks --server-config and returns --listen and
// --data-dir for daemon.Config: with a server config, only when given
// explicitly (else the file's values apply, then the defaults).
func (f *daemonFlags) embeddedPlace(conn natsconn.Options) (listen, dataDir string, err error) {
	if f.serverConfig == "" {
		return f.listen, f.dataDir, nil
	}
	if conn.URL != "" {
		return "", "", invalidf("--server-config configures the embedded nats-server; it does not go with --nats-url (or NATS_URL) %s", redact.URL(conn.URL))
	}
	opts, err := natsembed.LoadConfigFile(f.serverConfig)
	if err != nil {
		return "", "", invalidf("--server-config: %w", err)
	}
	if natsembed.RequiresAuth(opts) && !conn.HasCredentials() {
		return "", "", usageError{fmt.Errorf("--server-config %s: %w", f.serverConfig, daemon.ErrNeedsCredentials)}
	}
	if f.flags.Changed("listen") {
		listen = f.listen
	}
	if f.flags.Changed("data-dir") || f.tempDataDir {
		dataDir = f.dataDir
	}
	return listen, dataDir, nil
}

func (a *app) runCommand() *cobra.Command {
	var f daemonFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the scheduler (embedded NATS unless --nats-url or NATS_URL is given)",
		Long: `Run the scheduler daemon.

Without --nats-url (or NATS_URL) it starts an embedded nats-server with
JetStream, storing its files in --data-dir and listening on --listen, so
that workers and the nats CLI can connect. --server-config FILE loads a
nats-server config into it (the accounts of natsconf/single.conf, say):
the scheduler then connects as one of its users (--user and --password,
--nkey or --creds); --listen and --data-dir given explicitly override the
file, whose values override their defaults. With --nats-url it joins an
existing NATS system. Either way it creates or updates its buckets and
streams, then fires due schedules until SIGINT or SIGTERM, when it stops
claiming, finishes in-flight publishes and exits 0.

--schedules FILE (repeatable) declares static schedules: a JSON or YAML
file {"source": LABEL, "schedules": [SPEC, ...]} whose schedules are
created or updated at start, marked static with the file's base name (or
LABEL), removed when they leave the file, and refused to schedule add and
rm (pause, resume, trigger, skip and backfill work). The files are checked
before anything is written: a bad one exits with status 2 naming the
file, the entry and the field.

--events chooses the observer events published on sched.event.>; fired
(off by default) carries each fire's slot, scheduled and dispatched times
and stream sequence (docs/fire-messages.md).`,
		Example: `  scheduler run --schedules schedules.yaml
  scheduler run --nats-url nats://nats:4222 --events default,fired`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, cfg, err := a.configured(cmd, &f)
			if err != nil {
				return err
			}
			st.warn(cfg.Logger)
			mem, err := memlimit.Apply(f.memoryLimit, os.Getenv, os.DirFS("/"))
			if err != nil {
				return st.annotate(usageError{fmt.Errorf("--memory-limit: %w", err)})
			}
			headroom, err := memlimit.ParseHeadroom(f.gcHeadroom)
			if err != nil {
				return st.annotate(usageError{fmt.Errorf("--gc-headroom: %w", err)})
			}
			gc, gcSource := memlimit.SetGCPercent(f.gcPercent, os.Getenv)
			if gcSource == "GOGC" {
				headroom = 0 // the operator set the collector by hand
			}
			cfg.Logger.Info("memory limit", "bytes", mem.Limit, "source", mem.Source, "gc_percent", gc, "gc_percent_source", gcSource, "gc_headroom_bytes", headroom)
			ctx, cancel := context.WithCancel(cmd.Context())
			var wg sync.WaitGroup
			wg.Go(func() { memlimit.Headroom{Max: gc, Headroom: headroom, Log: cfg.Logger}.Run(ctx) })
			defer wg.Wait()
			defer cancel()
			return withTracing(ctx, &cfg, cmd.ErrOrStderr(), daemon.Run)
		},
	}
	f.register(cmd, "./jetsched-data", "")
	return cmd
}

func (a *app) demoCommand() *cobra.Command {
	var f daemonFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the scheduler on an embedded NATS server with sample schedules and a demo worker",
		Long: `Run the scheduler on an embedded nats-server, register sample schedules
(one every 5 seconds, one cron every minute in America/New_York, a one-shot
in 3 seconds), and run an in-process demo worker that logs every fire with
its lateness. It also plays an approval flow with escalation timers: order
42 is never approved, so its 8-second escalation wakes up; order 43 is
approved after 3 seconds, which cancels its timer. Stop with Ctrl-C.

While it runs, look at what it wrote with the nats CLI:
  nats kv ls sched_specs
  nats kv get sched_state demo-every-5s
  nats sub 'sched.fire.>'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := a.configure(cmd, f.configFile)
			if err != nil {
				return err
			}
			if f.dataDir == "" {
				dir, err := os.MkdirTemp("", "jetsched-demo-")
				if err != nil {
					return fmt.Errorf("demo data dir: %w", err)
				}
				defer os.RemoveAll(dir)
				f.dataDir, f.tempDataDir = dir, true
			}
			a.conn.URL = "" // the demo always embeds its server
			a.readableLogs = true
			f.console.listen = demoConsole(f.console.listen, cmd.Flags().Changed("console-listen"), f.serverConfig)
			cfg, err := a.daemonConfig(&f)
			if err != nil {
				return st.annotate(err)
			}
			st.warn(cfg.Logger)
			return runDemo(cmd.Context(), cfg)
		},
	}
	f.register(cmd, "", console.DefaultListen)
	cmd.Flags().Lookup("data-dir").Usage = "JetStream store directory (default: a temporary directory removed on exit)"
	return cmd
}

// demoConsole is where the demo serves its console: listen when given
// explicitly; otherwise the default address, or a free port when that one
// is taken; and no console under --server-config, whose scheduler user may
// not call the admin API (run `scheduler console` as an operator there).
func demoConsole(listen string, explicit bool, serverConfig string) string {
	switch {
	case explicit:
		return listen
	case serverConfig != "":
		return ""
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return "127.0.0.1:0"
	}
	_ = ln.Close()
	return listen
}

// runDemo runs the daemon, registers the sample schedules and a worker.
func runDemo(ctx context.Context, cfg daemon.Config) error {
	if cfg.ServerConfig == "" && !slices.Contains(cfg.ConditionBuckets, demoworker.RunsBucket) {
		// The approval demo's conditions: the scheduler checks them.
		cfg.ConditionBuckets = append(slices.Clone(cfg.ConditionBuckets), demoworker.RunsBucket)
	}
	d, err := daemon.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		stopCtx, cancel := daemon.StopContext(ctx, cfg.StopTimeout)
		defer cancel()
		if err := d.Stop(stopCtx); err != nil {
			cfg.Logger.Warn("stop the demo's scheduler", "err", err)
		}
	}()
	log := cfg.Logger
	if err := demoSchedules(ctx, d.Store(), time.Now()); err != nil {
		return err
	}
	w, err := startDemoWorker(ctx, d.JetStream(), d.Store().Layout(), log)
	if err != nil {
		return err
	}
	defer stopDemoWorker(log, w.StopAndCancel)
	// An account config may leave the scheduler user no rights on the
	// demo's own bucket: the worker checks the conditions then.
	approvals, err := startApprovalDemo(ctx, d, cfg.ServerConfig == "", log)
	if err != nil {
		return err
	}
	defer stopDemoWorker(log, approvals.Stop)
	log.Info("demo running: fires appear below; Ctrl-C stops", "nats_url", d.ClientURL(),
		"try", "nats --server "+d.ClientURL()+" sub 'sched.fire.>'")
	if u := d.ConsoleURL(); u != "" {
		log.Info("web console: open "+u, "console", u)
	}
	<-ctx.Done()
	log.Info("stopping demo")
	return nil
}
