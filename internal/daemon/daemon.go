// Package daemon assembles a scheduler process: an embedded nats-server or
// a connection to an existing NATS system, the preflight checks, bucket and
// stream setup, and the fire engine.
package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/jetsched/jetsched/internal/adminapi"
	"github.com/jetsched/jetsched/internal/auditlog"
	"github.com/jetsched/jetsched/internal/auditor"
	"github.com/jetsched/jetsched/internal/console"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/metrics"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/natsembed"
	"github.com/jetsched/jetsched/internal/skew"
	"github.com/jetsched/jetsched/internal/startwait"
	"github.com/jetsched/jetsched/internal/timers"
	"github.com/jetsched/jetsched/internal/tracing"
	"github.com/jetsched/jetsched/internal/undelivered"
	"github.com/jetsched/jetsched/pkg/audit"
)

// Config configures a Daemon.
type Config struct {
	// Embedded starts an in-process nats-server instead of connecting to
	// Conn.URL.
	Embedded bool
	// Listen is the embedded server's client address. Default: the
	// ServerConfig's listen address, else "127.0.0.1:4222"; port 0 picks a
	// free port.
	Listen string
	// DataDir is the embedded server's JetStream store. Default: the
	// ServerConfig's jetstream store_dir, else "./jetsched-data".
	DataDir string
	// ServerConfig is a nats-server configuration file for the embedded
	// server: its accounts and authorization (natsconf/single.conf), TLS,
	// monitoring port and limits apply, so the accounts of a separate
	// nats-server work without one. Listen and DataDir, when set, override
	// its listen address and store_dir (as nats-server's own flags override
	// its file). The scheduler's in-process connection then authenticates
	// with Conn's user and password, nkey or credentials.
	ServerConfig string
	// Conn is the connection to an existing NATS system (Embedded false).
	Conn natsconn.Options
	// Setup sizes the buckets and streams (replicas, retention).
	Setup jsstore.SetupConfig
	// Fire configures the engine; its Store is filled in.
	Fire fires.Config
	// TimerWorkers is the wakeup engine's concurrency (timers.Config.Workers).
	TimerWorkers int
	// ConditionBuckets are the KV buckets timers' condition keys may name
	// (timers.Config.ConditionBuckets and adminapi.Config.ConditionBuckets).
	// Default: none.
	ConditionBuckets []string
	// Logger receives everything. Default: discard.
	Logger *slog.Logger
	// AuditKey, when set, makes every mutation through the admin API append
	// to the audit trail (SCHED_AUDIT), signed with it, and runs the audit
	// duties (package auditor): head checks, and for the audit lease's
	// holder dispatch digests, external entries and anchored checkpoints.
	AuditKey []byte
	// Audit times the audit duties (Round, Settle, Grace, Monitor,
	// LeaseTTL); the rest is filled in.
	Audit auditor.Config
	// MetricsListen serves /metrics, /healthz and /readyz there ("":
	// off).
	MetricsListen string
	// MetricsWorkflowLimit caps the workflows with series of their own in
	// the workflow-labelled metrics; later ones count under "other".
	// Default 100.
	MetricsWorkflowLimit int
	// Profiling serves Go's profiles under /debug/pprof/ beside the
	// metrics (MetricsListen must be set).
	Profiling bool
	// ProfilingAllowRemote lets Profiling serve on a MetricsListen that is
	// not a loopback address (CheckProfiling).
	ProfilingAllowRemote bool
	// DeadManTolerance is how late a schedule's slot may be before
	// jetsched_schedule_overdue_seconds reports it. Default 1m.
	DeadManTolerance time.Duration
	// MaxBackfillSlots caps the slots one backfill request may replay.
	// Default control.DefaultMaxBackfillSlots.
	MaxBackfillSlots int
	// Console serves the web console on Console.Listen ("": off) over the
	// daemon's own NATS connection; its Conn, JetStream, Layout, Logger and
	// DeadManTolerance are filled in.
	Console console.Config
	// Static are the static schedule sets to apply at start (scheduler run
	// --schedules), before the engine starts: each set's schedules are
	// created or updated, and those of its source it no longer lists are
	// removed. A set that does not apply stops the start.
	Static []jsstore.StaticSet
	// TracerProvider, when it records, traces the engine's dispatches and
	// the admin API's requests (docs/tracing.md); Fire.TracerProvider, if
	// set, wins for the engine. Its owner (the caller) shuts it down after
	// Stop. Default: no tracing.
	TracerProvider trace.TracerProvider
	// StopTimeout bounds the stop at the end of Run, and after a Start that
	// failed half-way: the in-flight fires it waits for and the
	// connection's drain. Default DefaultStopTimeout. Keep it below the
	// time a supervisor waits before it kills the process (the Helm
	// chart's terminationGracePeriodSeconds is 60).
	StopTimeout time.Duration
}

// DefaultStopTimeout is Config.StopTimeout's default.
const DefaultStopTimeout = 30 * time.Second

// Daemon is a running scheduler.
type Daemon struct {
	log     *slog.Logger
	srv     *natsembed.Server
	nc      *nats.Conn
	js      jetstream.JetStream
	store   *jsstore.Store
	engine  *fires.Engine
	timers  *timers.Engine
	audit   *auditor.Auditor
	api     *adminapi.Service
	http    *metrics.Server
	console *console.Server
	skew    *skew.Watcher
	undeliv *undelivered.Watcher
}

// Start brings the scheduler up. On error, everything it started is stopped.
func Start(ctx context.Context, cfg Config) (*Daemon, error) {
	log := cmp.Or(cfg.Logger, slog.New(slog.NewTextHandler(io.Discard, nil)))
	d := &Daemon{log: log}
	if err := d.start(ctx, cfg); err != nil {
		stopCtx, cancel := StopContext(ctx, cfg.StopTimeout)
		defer cancel()
		if serr := d.Stop(stopCtx); serr != nil {
			log.Warn("stop after a failed start", "err", serr)
		}
		return nil, err
	}
	if off := cfg.Fire.Clock.Offset; off != 0 {
		log.Warn("clock offset in effect: this scheduler's time is shifted (--clock-offset, a test setting)", "offset", off)
	}
	log.Info("scheduler started", "instance", d.engine.Instance())
	return d, nil
}

func (d *Daemon) start(ctx context.Context, cfg Config) (err error) {
	log := d.log
	if cfg.Profiling {
		if err := CheckProfiling(cfg.MetricsListen, cfg.ProfilingAllowRemote); err != nil {
			return err
		}
	}

	if cfg.Embedded {
		if err := d.startEmbedded(ctx, cfg); err != nil {
			return err
		}
	} else {
		conn := cfg.Conn
		conn.Logger = log
		conn.Name = cmp.Or(conn.Name, "jetsched scheduler")
		if d.nc, err = natsconn.Connect(conn); err != nil {
			return err
		}
		log.Info("connected to NATS", "url", natsconn.ConnectedURL(d.nc), "server", d.nc.ConnectedServerName(), "version", d.nc.ConnectedServerVersion())
	}
	// Conn's --js-domain or --js-api-prefix place the buckets and streams
	// (a hub's JetStream, reached from a leaf node).
	if d.js, err = natsconn.JetStream(d.nc, cfg.Conn); err != nil {
		return err
	}
	// Every wait of the start is bounded and logged when slow, naming
	// what it waits for (startwait).
	if err := startwait.Step(ctx, log, "the JetStream account (preflight)", startStep, func(ctx context.Context) error {
		return jsstore.Preflight(ctx, d.nc, d.js)
	}); err != nil {
		return err
	}
	if err := startwait.Step(ctx, log, "the streams and buckets (setup)", startStep, func(ctx context.Context) error {
		return jsstore.Setup(ctx, d.js, cfg.Setup)
	}); err != nil {
		return err
	}
	if cfg.AuditKey != nil {
		// Only an audited scheduler needs the trail's stream.
		if err := startwait.Step(ctx, log, "the audit trail's stream", startStep, func(ctx context.Context) error {
			return auditlog.Setup(ctx, d.js, audit.Trail{}, cfg.Setup.Replicas)
		}); err != nil {
			return err
		}
	}
	if err := startwait.Step(ctx, log, "the buckets (open)", startStep, func(ctx context.Context) (err error) {
		d.store, err = jsstore.Open(ctx, d.js, cfg.Setup.Layout)
		return err
	}); err != nil {
		return err
	}
	// With tracing on, the API's spec writes keep the caller's trace
	// context (the dispatch spans link to it).
	d.store.RecordSpecTraces(tracing.Enabled(cfg.TracerProvider))
	fc := cfg.Fire
	fc.Store = d.store
	fc.FireKey = cfg.AuditKey // fires are signed for the audit's digests
	fc.Logger = cmp.Or(fc.Logger, log)
	if fc.TracerProvider == nil {
		fc.TracerProvider = cfg.TracerProvider
	}
	var m *metrics.Metrics
	if cfg.MetricsListen != "" {
		m = metrics.New(metrics.Config{WorkflowLimit: cfg.MetricsWorkflowLimit})
		fc.Observer = m
	}
	if d.engine, err = fires.New(fc); err != nil {
		return err
	}
	// The audit first, so that the static schedules' writes are recorded;
	// the static schedules before the engine, so that it never fires what
	// the files no longer say.
	if cfg.AuditKey != nil {
		if err := d.startAudit(ctx, cfg, m); err != nil {
			return err
		}
	}
	if err := startwait.Step(ctx, log, "the static schedules", 0, func(ctx context.Context) error {
		return d.applyStatic(ctx, cfg.Static)
	}); err != nil {
		return err
	}
	// The engine bounds its own steps (watches, the first lease round).
	if err := startwait.Step(ctx, log, "the fire engine (watches, first lease round)", 0, d.engine.Start); err != nil {
		return err
	}
	tc := timers.Config{
		Store: d.store, Owner: d.engine, Instance: d.engine.Instance(), Clock: fc.Clock,
		Logger: fc.Logger, ClaimTTL: fc.ClaimTTL, Workers: cfg.TimerWorkers, Events: fc.Events, ConditionBuckets: cfg.ConditionBuckets,
	}
	if m != nil {
		tc.Observer = m.Wakeups()
	}
	if d.timers, err = timers.New(tc); err != nil {
		return err
	}
	if err := startwait.Step(ctx, log, "the timers (wakeups watch)", startStep, d.timers.Start); err != nil {
		return err
	}
	// Fires and wakeups a consumer gave up on (max_deliver without an
	// ack): say so, once per message across the fleet.
	uc := undelivered.Config{JS: d.js, Layout: cfg.Setup.Layout, Instance: d.engine.Instance(), Events: fc.Events,
		Clock: fc.Clock, Logger: log}
	if m != nil {
		uc.Observer, uc.Event = m.Undeliverable, m.SourceEvent
	}
	if d.undeliv, err = undelivered.New(uc); err != nil {
		return err
	}
	if err := startwait.Step(ctx, log, "the undeliverable advisories' subscription", 0, d.undeliv.Start); err != nil {
		return err
	}
	// A clock off from the servers' fires slots early or late: say so.
	if d.skew, err = skew.New(skew.Config{Leases: d.store.Leases(), Instance: d.engine.Instance(), Run: d.engine.LeaseRun(), Logger: log}); err != nil {
		return err
	}
	if err := startwait.Step(ctx, log, "the clock check", 0, d.skew.Start); err != nil {
		return err
	}
	if err := startwait.Step(ctx, log, "the admin API", 0, func(ctx context.Context) (err error) {
		d.api, err = adminapi.Start(ctx, adminapi.Config{Conn: d.nc, Store: d.store, Logger: log, MaxBackfillSlots: cfg.MaxBackfillSlots, TracerProvider: cfg.TracerProvider, Interner: d.engine.Interner(), LoadAfter: d.engine.Ready(), ConditionBuckets: cfg.ConditionBuckets})
		return err
	}); err != nil {
		return err
	}
	if cfg.Console.Listen != "" {
		cc := cfg.Console
		cc.Conn, cc.JetStream, cc.Layout, cc.Logger = d.nc, d.js, cfg.Setup.Layout, log
		cc.DeadManTolerance = cmp.Or(cfg.DeadManTolerance, time.Minute)
		if d.console, err = console.Start(ctx, cc); err != nil {
			return err
		}
	}
	if m != nil {
		m.Watch(metrics.Sources{Health: d.engine.Health, Tolerance: cmp.Or(cfg.DeadManTolerance, time.Minute), Pending: d.timers.Pending})
		if d.http, err = m.Serve(cfg.MetricsListen, d.ready, cfg.Profiling); err != nil {
			return fmt.Errorf("metrics on %s: %w", cfg.MetricsListen, err)
		}
		log.Info("metrics and health", "url", "http://"+d.http.Addr()+"/metrics")
	}
	return nil
}

// startStep bounds each request-and-answer step of the start (the
// account, the streams and buckets, a watch's creation): several of the
// API's 5 s timeouts on a busy server, never minutes.
const startStep = 30 * time.Second

// applyStatic applies the static schedule sets, logging what each did.
func (d *Daemon) applyStatic(ctx context.Context, sets []jsstore.StaticSet) error {
	for _, set := range sets {
		res, err := d.store.ApplyStatic(ctx, set)
		if err != nil {
			return fmt.Errorf("daemon: static schedules of %s: %w", set.Source, err)
		}
		d.log.Info("static schedules applied", "source", set.Source, "created", len(res.Created), "updated", len(res.Updated),
			"unchanged", len(res.Unchanged), "removed", len(res.Removed))
		if len(res.Removed) > 0 {
			d.log.Info("static schedules removed: no longer declared", "source", set.Source, "ids", res.Removed)
		}
	}
	return nil
}

// startAudit starts the audit duties and makes the store record every
// mutation.
func (d *Daemon) startAudit(ctx context.Context, cfg Config, m *metrics.Metrics) error {
	trail := auditlog.New(d.js, cfg.AuditKey, "scheduler:"+d.engine.Instance())
	ac := cfg.Audit
	ac.Store, ac.Log, ac.Key, ac.Instance = d.store, trail, cfg.AuditKey, d.engine.Instance()
	ac.Logger = cmp.Or(ac.Logger, d.log)
	if m != nil {
		ac.Observer = m
	}
	var err error
	if d.audit, err = auditor.New(ac); err != nil {
		return err
	}
	d.store.SetAuditor(trail.WithRollback(d.audit.Report).WithFailure(d.audit.AppendFailed))
	return d.audit.Start(ctx)
}

// ErrNeedsCredentials: the embedded server's config makes clients
// authenticate, and the scheduler was given no credentials for its own
// in-process connection.
var ErrNeedsCredentials = errors.New("the server config requires authentication: give the scheduler's user with --user and --password, --nkey or --creds")

// Defaults of the embedded server.
const (
	DefaultListen  = "127.0.0.1:4222"
	DefaultDataDir = "./jetsched-data"
)

// startEmbedded starts the embedded server and connects to it in process.
func (d *Daemon) startEmbedded(ctx context.Context, cfg Config) error {
	var base *server.Options
	if cfg.ServerConfig != "" {
		var err error
		if base, err = natsembed.LoadConfigFile(cfg.ServerConfig); err != nil {
			return err
		}
		if natsembed.RequiresAuth(base) && !cfg.Conn.HasCredentials() {
			return fmt.Errorf("%w: %s", ErrNeedsCredentials, cfg.ServerConfig)
		}
	}
	listen, dataDir := embeddedPlace(cfg.Listen, cfg.DataDir, base)
	host, port, err := natsembed.Listen(listen)
	if err != nil {
		return err
	}
	d.srv, err = natsembed.Start(ctx, natsembed.Config{
		Base: base, Host: host, Port: port, StoreDir: dataDir, Logger: d.log.With("component", "nats-server"),
	})
	switch {
	case errors.Is(err, natsembed.ErrStoreLocked), errors.Is(err, natsembed.ErrAddrInUse):
		return err // it names the directory and its holder, or the address
	case err != nil:
		return fmt.Errorf("embedded nats-server on %s: %w", listen, err)
	}
	d.log.Info("embedded nats-server listening", "url", d.srv.ClientURL(), "data_dir", dataDir, "config", cfg.ServerConfig)
	auth, err := cfg.Conn.AuthOptions()
	if err != nil {
		return err
	}
	opts := append([]nats.Option{nats.InProcessServer(d.srv.Server()), nats.Name(cmp.Or(cfg.Conn.Name, "jetsched scheduler"))}, auth...)
	opts = append(opts, natsconn.LogOptions(d.log)...)
	if d.nc, err = nats.Connect("", opts...); err != nil {
		if cfg.Conn.HasCredentials() {
			return fmt.Errorf("connect to the embedded nats-server with the given credentials (are they a user of %s?): %w", cfg.ServerConfig, err)
		}
		return fmt.Errorf("connect to the embedded nats-server: %w", err)
	}
	return nil
}

// embeddedPlace decides where the embedded server listens and stores:
// a value given explicitly (listen, dataDir) wins, then what the server
// config file sets, then DefaultListen and DefaultDataDir. A file that sets
// only a port listens on 127.0.0.1, as the embedded server always does by
// default.
func embeddedPlace(listen, dataDir string, file *server.Options) (string, string) {
	if file != nil {
		if listen == "" && (file.Host != "" || file.Port != 0) {
			port := file.Port
			switch {
			case port == 0:
				port = server.DEFAULT_PORT
			case port < 0: // the file's "random port"
				port = 0
			}
			listen = net.JoinHostPort(cmp.Or(file.Host, "127.0.0.1"), strconv.Itoa(port))
		}
		dataDir = cmp.Or(dataDir, file.StoreDir)
	}
	return cmp.Or(listen, DefaultListen), cmp.Or(dataDir, DefaultDataDir)
}

// ready is /readyz: connected to NATS and the due indexes complete.
func (d *Daemon) ready() error {
	if !d.nc.IsConnected() {
		return errors.New("not connected to NATS")
	}
	select {
	case <-d.engine.Ready():
	default:
		return errors.New("schedule index not complete")
	}
	select {
	case <-d.timers.Ready():
	default:
		return errors.New("timer index not complete")
	}
	return nil
}

// MetricsAddr is the metrics server's address ("" when off).
func (d *Daemon) MetricsAddr() string {
	if d.http == nil {
		return ""
	}
	return d.http.Addr()
}

// ConsoleURL is the web console's URL ("" when off).
func (d *Daemon) ConsoleURL() string {
	if d.console == nil {
		return ""
	}
	return d.console.URL()
}

// ClientURL is the URL workers and the nats CLI use to reach the NATS
// system: the embedded server's listener, or the connected server (its
// password or token redacted: the URL is for printing).
func (d *Daemon) ClientURL() string {
	if d.srv != nil {
		return d.srv.ClientURL()
	}
	return natsconn.ConnectedURL(d.nc)
}

// JetStream is the daemon's JetStream context.
func (d *Daemon) JetStream() jetstream.JetStream { return d.js }

// Store is the daemon's record store.
func (d *Daemon) Store() *jsstore.Store { return d.store }

// Engine is the daemon's fire engine.
func (d *Daemon) Engine() *fires.Engine { return d.engine }

// Auditor is the daemon's audit duties (nil without an audit key).
func (d *Daemon) Auditor() *auditor.Auditor { return d.audit }

// Timers is the daemon's wakeup engine.
func (d *Daemon) Timers() *timers.Engine { return d.timers }

// Stop stops the daemon, the listeners first and the NATS connection last:
// the console and the metrics endpoint, the admin API, the audit duties and
// watchers, the timer and fire engines (in-flight fires finish and their
// records are written), then the connection drains and the embedded
// server, if any, shuts down. ctx bounds the wait: a part still stopping
// when ctx ends is left to finish on its own, the connection is closed
// rather than drained, and the error names each part that did not stop
// (errors.Is(err, context.DeadlineExceeded) then holds). Every part is
// asked to stop whatever the others did. Stop may be called more than once.
func (d *Daemon) Stop(ctx context.Context) error {
	err := stopAll(ctx, d.parts())
	if d.srv != nil {
		d.srv.Shutdown()
	}
	return err
}

// part is one thing Stop stops, named for its error.
type part struct {
	name string
	stop func(context.Context) error
}

// parts lists what the daemon runs in the order Stop stops it: what
// takes requests first, the engines after, the connection last.
func (d *Daemon) parts() []part {
	var ps []part
	add := func(running bool, name string, stop func(context.Context) error) {
		if running {
			ps = append(ps, part{name, stop})
		}
	}
	add(d.console != nil, "the console", func(ctx context.Context) error { return d.console.Stop(ctx) })
	add(d.http != nil, "the metrics endpoint", func(ctx context.Context) error { return d.http.Shutdown(ctx) })
	add(d.api != nil, "the admin API", func(context.Context) error { return d.api.Stop() })
	add(d.audit != nil, "the audit duties", func(ctx context.Context) error { return d.audit.Stop(ctx) })
	add(d.skew != nil, "the clock-skew watch", func(ctx context.Context) error { return d.skew.Stop(ctx) })
	add(d.undeliv != nil, "the undelivered watch", func(ctx context.Context) error { return d.undeliv.Stop(ctx) })
	add(d.timers != nil, "the timer engine", func(ctx context.Context) error { return d.timers.Stop(ctx) })
	add(d.engine != nil, "the fire engine", func(ctx context.Context) error { return d.engine.Stop(ctx) })
	add(d.nc != nil && !d.nc.IsClosed(), "the NATS connection", d.drain)
	return ps
}

// stopAll stops each part in turn, whatever the ones before it returned,
// and joins their errors, each named for its part.
func stopAll(ctx context.Context, ps []part) error {
	var errs []error
	for _, p := range ps {
		if err := p.stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", p.name, err))
		}
	}
	return errors.Join(errs...)
}

// drain drains the NATS connection: its subscriptions deliver what they
// hold and its pending publishes are flushed. When ctx ends first (or
// nats.go's own drain timeout does), the connection is closed.
func (d *Daemon) drain(ctx context.Context) error {
	closed := make(chan struct{})
	d.nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
	if err := d.nc.Drain(); err != nil {
		d.nc.Close()
		if errors.Is(err, nats.ErrConnectionClosed) {
			return nil
		}
		return fmt.Errorf("drain: %w", err)
	}
	select {
	case <-closed:
		return nil
	case <-ctx.Done():
		d.nc.Close()
		return fmt.Errorf("drain: %w", ctx.Err())
	}
}

// Run starts the daemon, waits for ctx to end (SIGINT/SIGTERM in the CLI),
// and stops it gracefully within cfg.StopTimeout. A clean stop returns
// nil; a stop that did not finish in time returns the parts still
// stopping.
func Run(ctx context.Context, cfg Config) error {
	d, err := Start(ctx, cfg)
	if err != nil {
		return err
	}
	<-ctx.Done()
	d.log.Info("stopping: no new claims; finishing in-flight fires")
	stopCtx, cancel := StopContext(ctx, cfg.StopTimeout)
	defer cancel()
	if err := d.Stop(stopCtx); err != nil {
		return fmt.Errorf("stop within %s: %w", cmp.Or(cfg.StopTimeout, DefaultStopTimeout), err)
	}
	d.log.Info("stopped")
	return nil
}

// stopContext is the context of a stop that follows ctx's end: ctx's
// values (trace, logger) without its cancellation, ended after timeout
// (DefaultStopTimeout when 0).
func StopContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cmp.Or(timeout, DefaultStopTimeout))
}
