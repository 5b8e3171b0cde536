// Package auditor runs a scheduler's audit duties next to its engines,
// off the fire path:
//
//   - every instance watches the trail's head and reports a trail that
//     goes backwards, is recreated or loses its start (rollback);
//   - the instance holding the audit lease (key "audit" in sched_leases)
//     writes, every round, dispatch digests of the fire and wakeup streams
//     (read with ordered consumers, each message checked against the
//     ledger), external entries for specs, calendars and timers written
//     straight into their buckets, and a checkpoint whose head it anchors.
//
// docs/operations.md ("Audit trail") says what an operator gets from it.
package auditor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/auditlog"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/lifecycle"
	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Observer counts what the auditor reports (internal/metrics implements
// it).
type Observer interface {
	// AuditRollback is called once per rollback reported.
	AuditRollback()
	// AuditAppendFailure is called once per append the trail did not
	// take (AppendFailed).
	AuditAppendFailure()
}

type noObserver struct{}

func (noObserver) AuditRollback()      {}
func (noObserver) AuditAppendFailure() {}

// Config configures an Auditor.
type Config struct {
	// Store is the scheduler's store: its layout names the fire and wakeup
	// streams, the buckets watched and the ledger. Required.
	Store *jsstore.Store
	// Log writes the trail (its key signs; its trail is the one watched).
	// Required.
	Log *auditlog.Log
	// Key is the trail's key, to check anchored heads and earlier entries.
	// Required.
	Key []byte
	// Instance names this scheduler. Required.
	Instance string
	// Round is how often the lease holder digests, records external
	// changes and anchors the head. Default 1m.
	Round time.Duration
	// Settle is how old a fire or wakeup message must be before it is
	// digested, so that its ledger entry has been written. Default 10s.
	Settle time.Duration
	// Grace is how long a change in a bucket waits for the API's audit
	// entry naming its revision before it is recorded as external. Default
	// 10s.
	Grace time.Duration
	// Monitor is how often every instance checks the trail's head. Default
	// 10s.
	Monitor time.Duration
	// LeaseTTL is the audit lease's TTL. Default 30s.
	LeaseTTL time.Duration
	// Logger receives the reports. Default: discard.
	Logger *slog.Logger
	// Observer counts rollbacks. Default: none.
	Observer Observer
}

func (c Config) withDefaults() Config {
	c.Round = cmp.Or(c.Round, time.Minute)
	c.Settle = cmp.Or(c.Settle, 10*time.Second)
	c.Grace = cmp.Or(c.Grace, 10*time.Second)
	c.Monitor = cmp.Or(c.Monitor, 10*time.Second)
	c.LeaseTTL = cmp.Or(c.LeaseTTL, 30*time.Second)
	c.Logger = cmp.Or(c.Logger, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if c.Observer == nil {
		c.Observer = noObserver{}
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Store == nil:
		return errors.New("auditor: Store is required")
	case c.Log == nil:
		return errors.New("auditor: Log is required")
	case len(c.Key) == 0:
		return errors.New("auditor: Key is required")
	case c.Instance == "":
		return errors.New("auditor: Instance is required")
	}
	for name, d := range map[string]time.Duration{"Round": c.Round, "Settle": c.Settle, "Grace": c.Grace, "Monitor": c.Monitor} {
		if d < 0 {
			return fmt.Errorf("auditor: Config.%s %s: must not be negative", name, d)
		}
	}
	if c.LeaseTTL < time.Second {
		return fmt.Errorf("auditor: Config.LeaseTTL %s: must be at least 1s (per-key TTLs are whole seconds)", c.LeaseTTL)
	}
	return nil
}

// Auditor is a scheduler's audit duties. Start runs them; Stop ends them.
type Auditor struct {
	cfg     Config
	log     *slog.Logger
	js      jetstream.JetStream
	layout  kvstore.Layout
	trail   audit.Trail
	lease   *lease
	monitor *monitor

	// roundMu serialises rounds (the loop's and Round's) and guards what
	// they share: the watcher and the digest cursors.
	roundMu sync.Mutex
	watch   *watcher
	// watching mirrors watch != nil for the lease keeper, which must not
	// wait for a round to learn that nothing changes.
	watching atomic.Bool
	cursors  map[string]uint64 // per stream, the next sequence to digest

	svc lifecycle.Service
}

// New validates cfg and returns a stopped Auditor.
func New(cfg Config) (*Auditor, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	a := &Auditor{
		cfg: cfg, log: cfg.Logger.With("component", "auditor", "instance", cfg.Instance),
		js: cfg.Store.JetStream(), layout: cfg.Store.Layout(), trail: cfg.Log.Trail(), cursors: map[string]uint64{},
	}
	a.lease = &lease{kv: cfg.Store.Leases(), js: a.js, instance: cfg.Instance, ttl: cfg.LeaseTTL, log: a.log, event: a.publishEvent}
	a.monitor = newMonitor(a)
	return a, nil
}

// Report is the Log's rollback handler: a checkpoint that found the trail
// not extending its anchored head reports it as the monitor does.
func (a *Auditor) Report(err error) { a.monitor.report(err) }

// Start checks the trail's head once and starts the loop. A second Start
// without Stop is an error.
func (a *Auditor) Start(ctx context.Context) error {
	return a.svc.Start(ctx, func(ctx, life context.Context) (func(), error) {
		a.monitor.check(ctx)
		return func() { a.run(life) }, nil
	})
}

// Stop ends the loop, stops the watch and hands the lease back, or returns
// ctx's error when ctx ends first. Stop before Start, and a second Stop,
// are no-ops; a stopped auditor starts again.
func (a *Auditor) Stop(ctx context.Context) error { return a.svc.Stop(ctx) }

// run keeps (or seeks) the lease in its own goroutine, so that a long
// round does not let it lapse, runs the rounds while it is held and checks
// the head, until ctx ends.
func (a *Auditor) run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(max(a.cfg.LeaseTTL/3, time.Millisecond))
		defer tick.Stop()
		for {
			a.keepLease(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	roundTick := time.NewTicker(a.cfg.Round)
	monitorTick := time.NewTicker(a.cfg.Monitor)
	defer roundTick.Stop()
	defer monitorTick.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			a.roundMu.Lock()
			a.stopWatch()
			a.roundMu.Unlock()
			rctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			a.lease.release(rctx)
			cancel()
			return
		case <-roundTick.C:
			if err := a.Round(ctx); err != nil && !errors.Is(err, errNotHolder) && ctx.Err() == nil {
				a.log.Warn("audit round", "err", err)
			}
		case <-monitorTick.C:
			a.monitor.check(ctx)
		}
	}
}

// keepLease renews or seeks the lease and starts or stops the watch for
// external changes with it.
func (a *Auditor) keepLease(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, a.cfg.LeaseTTL/2)
	held := a.lease.hold(rctx)
	cancel()
	if ctx.Err() != nil || held == a.watching.Load() {
		return // nothing changes: do not wait for a running round
	}
	a.roundMu.Lock()
	defer a.roundMu.Unlock()
	switch {
	case held && a.watch == nil:
		a.log.Info("audit lease gained: writing digests and external entries")
		w, err := startWatcher(ctx, a)
		if err != nil {
			a.log.Warn("watch for external changes", "err", err)
			return
		}
		a.watch = w
		a.watching.Store(true)
	case !held && a.watch != nil:
		a.log.Info("audit lease lost")
		a.stopWatch()
	}
}

func (a *Auditor) stopWatch() {
	if a.watch != nil {
		a.watch.stop()
		a.watch = nil
		a.watching.Store(false)
	}
}

// Round writes, when this instance holds the audit lease, the dispatch
// digests of the fire and wakeup streams, an external entry for the
// changes its watch decided since the last round, and a checkpoint whose
// head it anchors. Without the lease it does nothing and says so.
func (a *Auditor) Round(ctx context.Context) error {
	a.roundMu.Lock()
	defer a.roundMu.Unlock()
	if a.watch == nil {
		return errNotHolder
	}
	var errs []error
	for _, s := range []string{a.layout.FiresStream, a.layout.WakeupsStream} {
		if err := a.digestStream(ctx, s); err != nil {
			errs = append(errs, fmt.Errorf("digest %s: %w", s, err))
		}
	}
	wrote, err := a.watch.flush(ctx)
	if err != nil {
		errs = append(errs, fmt.Errorf("external entries: %w", err))
	}
	if err := a.checkpoint(ctx, wrote); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// checkpoint anchors the head when the trail moved since the last
// checkpoint.
func (a *Auditor) checkpoint(ctx context.Context, force bool) error {
	s, err := a.js.Stream(ctx, a.trail.Stream)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	m, err := s.GetLastMsgForSubject(ctx, a.trail.Subject+"."+audit.KindCheckpoint)
	if !force && err == nil && m.Sequence == s.CachedInfo().State.LastSeq {
		return nil // nothing since the last checkpoint
	}
	_, err = a.cfg.Log.Checkpoint(ctx)
	if errors.Is(err, audit.ErrRollback) {
		a.monitor.report(err) // not anchored: the anchor keeps the head it had
		return nil
	}
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}
