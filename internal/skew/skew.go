// Package skew measures how far a scheduler's clock is from its NATS
// servers' and says so in the log.
//
// A scheduler reads every due time, claim expiry and lease silence on its
// own clock. A clock that is ahead fires slots early by as much; one that
// is behind fires them late and lets other instances take its claims over
// early (the CAS and the stream's duplicate window keep each slot to one
// message either way: docs/protocol.md, docs/reliability.md). Nothing in
// the fire path can tell, so this watcher does: the fire engine rewrites
// member.<instance> in the sched_leases bucket every third of the lease
// TTL, with the time it wrote it by its own clock ("renewed"), and the
// stream stamps the record with the server's clock when it stores it. The
// difference is the skew (less the publish's latency, milliseconds).
package skew

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/lifecycle"
)

// DefaultTolerance is the skew above which the watcher warns.
const DefaultTolerance = time.Second

// Config configures a Watcher.
type Config struct {
	// Leases is the sched_leases bucket. Required.
	Leases jetstream.KeyValue
	// Instance is the scheduler's instance id: the watcher reads
	// member.<Instance>. Required.
	Instance string
	// Run, when set, is the "run" of this process's member records
	// (fires.Engine.LeaseRun): a record of a previous process under the
	// same instance name, not yet replaced, is not measured (it shows the
	// previous process's clock).
	Run string
	// Tolerance is the skew, either way, above which a warning is logged.
	// Default DefaultTolerance.
	Tolerance time.Duration
	// Interval is the time between two measurements once the member
	// record exists (it is looked for every second until then). Default
	// 30s.
	Interval time.Duration
	// Logger receives the warnings. Default: discard.
	Logger *slog.Logger
}

// Measure returns the skew a member record shows: the scheduler's clock
// minus the server's (positive: the scheduler is ahead).
func Measure(e jetstream.KeyValueEntry) (time.Duration, error) {
	var v struct {
		Renewed time.Time `json:"renewed"`
	}
	if err := json.Unmarshal(e.Value(), &v); err != nil {
		return 0, fmt.Errorf("skew: member record %s: %w", e.Key(), err)
	}
	if v.Renewed.IsZero() || e.Created().IsZero() {
		return 0, fmt.Errorf("skew: member record %s has no renewal time", e.Key())
	}
	return v.Renewed.Sub(e.Created()), nil
}

// recordRun is the "run" of a member record ("" when it has none).
func recordRun(e jetstream.KeyValueEntry) string {
	var v struct {
		Run string `json:"run"`
	}
	_ = json.Unmarshal(e.Value(), &v)
	return v.Run
}

// Watcher measures the skew periodically and logs a warning while it is
// beyond the tolerance, and a note when it is back within.
type Watcher struct {
	cfg Config
	log *slog.Logger

	svc    lifecycle.Service
	mu     sync.Mutex
	last   time.Duration // the latest measurement
	warned bool
}

// New validates cfg and returns a stopped Watcher.
func New(cfg Config) (*Watcher, error) {
	if cfg.Leases == nil {
		return nil, errors.New("skew: Config.Leases is required")
	}
	if cfg.Instance == "" {
		return nil, errors.New("skew: Config.Instance is required")
	}
	cfg.Tolerance = cmp.Or(cfg.Tolerance, DefaultTolerance)
	cfg.Interval = cmp.Or(cfg.Interval, 30*time.Second)
	log := cmp.Or(cfg.Logger, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return &Watcher{cfg: cfg, log: log.With("component", "clock-skew")}, nil
}

// Start begins measuring in a goroutine that Stop ends. Starting a
// running watcher is a no-op.
func (w *Watcher) Start(ctx context.Context) error {
	return w.svc.Start(ctx, func(_, life context.Context) (func(), error) {
		return func() { w.run(life) }, nil
	})
}

// Stop ends the measurements and waits for the goroutine, or returns
// ctx's error when ctx ends first. Safe to call more than once, and before
// Start.
func (w *Watcher) Stop(ctx context.Context) error { return w.svc.Stop(ctx) }

// Last is the latest measurement (0 before the first).
func (w *Watcher) Last() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

func (w *Watcher) run(ctx context.Context) {
	timer := time.NewTimer(time.Second)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		next := w.cfg.Interval
		if !w.check(ctx) {
			next = time.Second // no record yet (or NATS is away): soon again
		}
		timer.Reset(next)
	}
}

// check measures once and logs what changed; false when nothing could be
// measured.
func (w *Watcher) check(ctx context.Context) bool {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	e, err := w.cfg.Leases.Get(rctx, "member."+w.cfg.Instance)
	if err != nil {
		return false
	}
	if w.cfg.Run != "" && recordRun(e) != w.cfg.Run {
		w.log.Debug("member record of a previous process: not measured, looking again in a second")
		return false
	}
	d, err := Measure(e)
	if err != nil {
		w.log.Warn("cannot measure the clock skew", "err", err)
		return false
	}
	w.mu.Lock()
	w.last = d
	over := d > w.cfg.Tolerance || d < -w.cfg.Tolerance
	wasWarned := w.warned
	w.warned = over
	w.mu.Unlock()
	switch {
	case over:
		effect := "slots fire early by as much"
		if d < 0 {
			effect = "slots fire late by as much, and other instances take its claims over early"
		}
		w.log.Warn("this scheduler's clock differs from the NATS server's: fix its time sync (NTP)",
			"skew", d.Round(time.Millisecond), "tolerance", w.cfg.Tolerance, "effect", effect)
	case wasWarned:
		w.log.Info("this scheduler's clock agrees with the NATS server's again", "skew", d.Round(time.Millisecond))
	}
	return true
}
