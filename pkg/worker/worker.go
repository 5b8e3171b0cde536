// Package worker runs handlers for jetsched fires and wakeups: a durable
// pull consumer per workflow with AckWait, MaxDeliver and backoff
// settings; up to MaxWorkers handlers of a workflow at once, fetched only
// when they can start; in-progress pings for long handlers; contexts that
// Stop, StopAndCancel, a Timeout and the scheduler's cancel requests end;
// delivery steered by what the handler returns (see Retry and Permanent),
// panics recovered; completion reports on
// sched.done.<workflow>.<schedule id> for the ledger and the overlap
// policies; dead letters after the last delivery; and the stale-condition
// check for wakeups.
//
// # Protocol
//
// Start creates (or updates) one durable consumer per registered handler
// and, for fire handlers, subscribes to the scheduler's cancel requests
// (sched.cancel.<workflow>.>); then one fetch loop per handler reserves a
// free place among the handler's MaxWorkers and the worker's
// MaxWorkersTotal for every message it asks the server for, so that a
// message is never held by the worker without its handler running: none
// ages against AckWait in a buffer. A handler runs with a context derived
// from Start's; while it runs, the message gets an in-progress ping every
// AckWait/3, so a handler may outlive AckWait without being redelivered.
// When it returns, the message is acked, nak'ed or terminated (errors.go
// says which), and a fire's completion is reported. Delivery is
// at-least-once: handlers must be idempotent per slot id.
//
// # Permissions
//
// Every subject a worker uses carries its workflow, and each consumer is
// created with one filter subject (so nats.go asks for
// $JS.API.CONSUMER.CREATE.<stream>.<name>.<filter>), which lets the
// account's permissions pin a worker to its workflows: `scheduler
// natsconf --worker NAME --workflows a,b` prints such a permission block.
// Such an account reads replies only under its own inbox prefix, so the
// connection passed in needs nats.CustomInboxPrefix("_INBOX_<user>").
//
// Stability: the messages it consumes and the done reports, cancel
// requests and acks it sends follow docs/protocol.md and change only
// compatibly. The Go API (Config, New, Handle, HandleWakeup, Start,
// Stop, the delivery types and the errors) keeps its signatures within a
// major version; new Config fields and options may be added.
package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/jetsched/jetsched/internal/jsname"
	"github.com/jetsched/jetsched/internal/tracing"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/wakeup"
)

// flushTimeout bounds the round trip that makes sure the cancel
// subscriptions are in place.
const flushTimeout = 10 * time.Second

// Defaults of Config.
const (
	DefaultMaxWorkers      = 10
	DefaultMaxWorkersTotal = 256
)

// Config configures a Worker.
type Config struct {
	// JetStream is the connection. Required. Its JetStream domain or API
	// prefix is where the streams are: a JetStream made with
	// jetstream.NewWithDomain(nc, "hub") reaches a hub's streams from a
	// leaf node, with no Domain needed.
	JetStream jetstream.JetStream
	// Domain, if set, reaches the streams through that JetStream domain (a
	// hub's, from a leaf node with a JetStream of its own): New binds a
	// context with jetstream.NewWithDomain on JetStream's connection, as
	// pkg/client's WithDomain does. A JetStream bound to the same domain
	// already is used as it is; one bound to another domain, or made with
	// an API prefix, is an error. Completion reports and cancel requests
	// are core NATS and take no domain.
	Domain string
	// Name prefixes the durable consumers: "<name>-fire-<workflow>" and
	// "<name>-wakeup-<workflow>". Instances of one service share a name
	// (and so the work); different services use different names. A new
	// consumer starts with the messages published from then on; an
	// existing one resumes where it stopped. Default "worker".
	Name string
	// Layout names the streams and subjects. Zero value: defaults.
	Layout kvstore.Layout
	// AckWait is how long a delivery may go without an ack or an
	// in-progress ping. Default 30s; handlers running longer are kept alive
	// by pings every AckWait/3.
	AckWait time.Duration
	// MaxDeliver bounds deliveries per message. Default 5.
	MaxDeliver int
	// BackOff is the delay before redelivery after a failed delivery n
	// (BackOff[n-1], the last value repeating). Default 1s, 5s, 30s, 2m.
	BackOff []time.Duration
	// MaxWorkers bounds how many deliveries of one registered handler run
	// at once; WithMaxWorkers overrides it per handler. Default
	// DefaultMaxWorkers (10), or MaxWorkersTotal if that is lower.
	MaxWorkers int
	// MaxWorkersTotal bounds the handlers of all workflows of this Worker
	// running at once. Default DefaultMaxWorkersTotal (256). A handler
	// waiting for a message keeps at least one place reserved, so set it
	// above the number of handlers.
	MaxWorkersTotal int
	// Timeout bounds each handler call: its context ends with the cause
	// ErrTimeout, and the delivery fails as on any error (a handler that
	// ignores its context still runs to its end, kept alive by pings).
	// WithTimeout overrides it per handler. Default 0: no limit.
	Timeout time.Duration
	// ConditionHolds reports whether a wakeup's condition still holds for
	// its run (for example: the run is still in that activity). A wakeup
	// whose condition no longer holds is acked and dropped without calling
	// the handler. It gets the handler's context. Default: every condition
	// holds.
	ConditionHolds func(ctx context.Context, run, condition string) bool
	// ErrorHandler, if set, is called for every failure: a handler's
	// error (a *PanicError for a panic), a message that is not a fire or a
	// wakeup, and every *SettleError (ack, nak, term, in-progress ping,
	// completion report, dead letter, fetch). It gets the handler's context
	// without its cancellation; it must not block for long. A delivery
	// handed back because the worker stops, or ended by a cancel request,
	// is not a failure.
	ErrorHandler func(ctx context.Context, d Delivery, err error)
	// Registerer, if set, gets the worker's Prometheus collectors
	// (jetsched_worker_*: handled, failed, retried, dead-lettered,
	// cancelled and released deliveries, settle errors, handler duration,
	// handlers in flight; per worker, workflow and kind). Workers sharing a
	// registry share the collectors.
	Registerer prometheus.Registerer
	// MetricsWorkflowLimit caps the distinct values of the workflow label
	// of the worker's metrics: the first MetricsWorkflowLimit workflows
	// it handles keep series of their own, later ones are counted under
	// workflow="other", so that a worker of many workflows keeps a small
	// scrape. Default 100; negative: every workflow is "other".
	MetricsWorkflowLimit int
	// TracerProvider, when it records (not nil, not otel's noop), runs
	// each handler in a consumer span "handle <workflow>", the child of
	// the dispatch span whose context the message's traceparent header
	// carries (docs/tracing.md). Whatever it is, a handler's context
	// carries the message's trace context when it has one, so that the
	// handler's own spans join the trace. Default: no spans.
	TracerProvider trace.TracerProvider
	// Logger. Default: discard.
	Logger *slog.Logger
}

// Kind tells fires and wakeups apart.
type Kind string

// Kinds of delivery.
const (
	KindFire   Kind = "fire"
	KindWakeup Kind = "wakeup"
)

// Delivery describes one delivery of a message, for Config.ErrorHandler.
type Delivery struct {
	Kind Kind
	// Workflow is the message's workflow (its subject's last token).
	Workflow string
	Subject  string
	// ID is the message's Nats-Msg-Id: a fire's slot id, or a wakeup's
	// "wakeup.<run>.<step>.<due ms>". Empty for a message that is
	// neither.
	ID string
	// ScheduleID is a fire's schedule ("" for a wakeup).
	ScheduleID string
	// Number counts deliveries of this message, from 1.
	Number int
	// Last: no further delivery is allowed (Config.MaxDeliver).
	Last bool
}

// Fire is one delivery of a schedule's fire.
type Fire struct {
	kvstore.FireMeta
	Subject string
	// Input is the schedule's input JSON.
	Input []byte
	// Delivery counts deliveries of this message, from 1.
	Delivery int
}

// Wakeup is one delivery of a timer.
type Wakeup struct {
	wakeup.Meta
	Payload  []byte
	Delivery int
}

// Handler handles a fire; what it returns steers the delivery.
type Handler func(ctx context.Context, f Fire) error

// WakeupHandler handles a wakeup; what it returns steers the delivery.
type WakeupHandler func(ctx context.Context, w Wakeup) error

// HandlerOption refines one registered handler.
type HandlerOption func(*handlerConfig) error

type handlerConfig struct {
	maxWorkers int
	timeout    time.Duration
}

// WithMaxWorkers sets how many deliveries of this handler run at once
// (instead of Config.MaxWorkers); at least 1, at most
// Config.MaxWorkersTotal.
func WithMaxWorkers(n int) HandlerOption {
	return func(c *handlerConfig) error {
		if n < 1 {
			return fmt.Errorf("worker: WithMaxWorkers(%d): must be at least 1", n)
		}
		c.maxWorkers = n
		return nil
	}
}

// WithTimeout bounds each call of this handler (instead of
// Config.Timeout); 0 for no limit.
func WithTimeout(d time.Duration) HandlerOption {
	return func(c *handlerConfig) error {
		if d < 0 {
			return fmt.Errorf("worker: WithTimeout(%s): must not be negative", d)
		}
		c.timeout = d
		return nil
	}
}

// registration is a handler as registered, with its consumer's names.
type registration struct {
	kind     Kind
	workflow string // as registered: a workflow or AllWorkflows
	cfg      handlerConfig
	fire     Handler
	wakeup   WakeupHandler
}

// Worker consumes fires and wakeups.
type Worker struct {
	cfg     Config
	log     *slog.Logger
	metrics *metrics
	global  chan struct{} // a token per running handler, MaxWorkersTotal in all
	cancels *cancels
	// tracer makes the handlers' spans when traced (see
	// Config.TracerProvider).
	tracer trace.Tracer
	traced bool

	mu   sync.Mutex
	regs map[Kind]map[string]*registration
	run  *run
}

// run is one Start's goroutines and what stops them.
type run struct {
	fetchCtx       context.Context // ends when fetching stops
	base           context.Context // handlers' contexts derive from it
	cancelFetch    context.CancelFunc
	cancelHandlers context.CancelCauseFunc
	handlers       sync.WaitGroup
	// fetchStopped is closed once every fetch has ended and the server
	// has seen their subscriptions go: a message nak'ed before could be
	// redelivered into a pull request that is going away, and wait out
	// AckWait there.
	fetchStopped chan struct{}
	done         chan struct{} // closed once loops and handlers have ended
	stopping     bool          // a Stop was called; under Worker.mu

	heldMu sync.Mutex
	held   []heldMsg // fetched after the stop: nak'ed once fetchStopped
}

type heldMsg struct {
	m    jetstream.Msg
	kind Kind
}

// holdBack keeps a message a fetch brought in after the stop.
func (r *run) holdBack(m jetstream.Msg, kind Kind) {
	r.heldMu.Lock()
	defer r.heldMu.Unlock()
	r.held = append(r.held, heldMsg{m, kind})
}

// New validates cfg.
func New(cfg Config) (*Worker, error) {
	if cfg.JetStream == nil {
		return nil, errors.New("worker: Config.JetStream is required")
	}
	js, err := jsname.InDomain(cfg.JetStream, cfg.Domain)
	if err != nil {
		return nil, fmt.Errorf("worker: Config.Domain %q: %w", cfg.Domain, err)
	}
	cfg.JetStream = js
	cfg.Name = cmp.Or(cfg.Name, "worker")
	if err := kvstore.ValidateWorkflow(cfg.Name); err != nil {
		return nil, fmt.Errorf("worker: Config.Name: %w", err)
	}
	cfg.Layout = cfg.Layout.WithDefaults()
	cfg.AckWait = cmp.Or(cfg.AckWait, 30*time.Second)
	cfg.MaxDeliver = cmp.Or(cfg.MaxDeliver, 5)
	cfg.MaxWorkersTotal = cmp.Or(cfg.MaxWorkersTotal, DefaultMaxWorkersTotal)
	cfg.MaxWorkers = cmp.Or(cfg.MaxWorkers, min(DefaultMaxWorkers, cfg.MaxWorkersTotal))
	if len(cfg.BackOff) == 0 {
		cfg.BackOff = []time.Duration{time.Second, 5 * time.Second, 30 * time.Second, 2 * time.Minute}
	}
	switch {
	case cfg.AckWait < time.Second:
		return nil, fmt.Errorf("worker: Config.AckWait %s: must be at least 1s", cfg.AckWait)
	case cfg.MaxDeliver < 1:
		return nil, fmt.Errorf("worker: Config.MaxDeliver %d: must be at least 1", cfg.MaxDeliver)
	case cfg.MaxWorkers < 1:
		return nil, fmt.Errorf("worker: Config.MaxWorkers %d: must be at least 1", cfg.MaxWorkers)
	case cfg.MaxWorkersTotal < 1:
		return nil, fmt.Errorf("worker: Config.MaxWorkersTotal %d: must be at least 1", cfg.MaxWorkersTotal)
	case cfg.MaxWorkers > cfg.MaxWorkersTotal:
		return nil, fmt.Errorf("worker: Config.MaxWorkers %d: must not exceed MaxWorkersTotal %d", cfg.MaxWorkers, cfg.MaxWorkersTotal)
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("worker: Config.Timeout %s: must not be negative", cfg.Timeout)
	}
	for i, d := range cfg.BackOff {
		if d < 0 {
			return nil, fmt.Errorf("worker: Config.BackOff[%d] %s: must not be negative", i, d)
		}
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.NewTextHandler(io.Discard, nil)))
	m, err := newMetrics(cfg.Registerer, cfg.MetricsWorkflowLimit)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger.With("component", "worker", "name", cfg.Name)
	return &Worker{cfg: cfg, log: log, metrics: m, global: make(chan struct{}, cfg.MaxWorkersTotal),
		cancels: newCancels(), regs: map[Kind]map[string]*registration{KindFire: {}, KindWakeup: {}},
		tracer: tracing.Tracer(cfg.TracerProvider), traced: tracing.Enabled(cfg.TracerProvider)}, nil
}

// AllWorkflows, passed to Handle or HandleWakeup, handles every workflow
// with one consumer ("<name>-fire-all").
const AllWorkflows = ">"

// Handle registers the fire handler of a workflow. Call before Start (or
// after a Stop).
func (w *Worker) Handle(workflow string, h Handler, opts ...HandlerOption) error {
	return w.register(&registration{kind: KindFire, workflow: workflow, fire: h}, opts)
}

// HandleWakeup registers the wakeup handler of a workflow. Call before
// Start (or after a Stop).
func (w *Worker) HandleWakeup(workflow string, h WakeupHandler, opts ...HandlerOption) error {
	return w.register(&registration{kind: KindWakeup, workflow: workflow, wakeup: h}, opts)
}

func (w *Worker) register(r *registration, opts []HandlerOption) error {
	if err := validWorkflow(r.workflow); err != nil {
		return err
	}
	if r.fire == nil && r.wakeup == nil {
		return fmt.Errorf("worker: nil handler for workflow %q", r.workflow)
	}
	r.cfg = handlerConfig{maxWorkers: w.cfg.MaxWorkers, timeout: w.cfg.Timeout}
	for _, o := range opts {
		if err := o(&r.cfg); err != nil {
			return err
		}
	}
	if r.cfg.maxWorkers > w.cfg.MaxWorkersTotal {
		return fmt.Errorf("worker: WithMaxWorkers(%d) for %q: must not exceed MaxWorkersTotal %d", r.cfg.maxWorkers, r.workflow, w.cfg.MaxWorkersTotal)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.run != nil {
		return fmt.Errorf("%w: register %s handlers before Start", ErrStarted, r.kind)
	}
	w.regs[r.kind][r.workflow] = r
	return nil
}

// Start creates or updates one durable consumer per registered handler,
// subscribes to cancel requests for the fire handlers' workflows, and
// starts fetching. Handlers' contexts derive from ctx: when it ends, the
// worker stops fetching and running handlers see their contexts end (a
// hard stop, as StopAndCancel); call Stop or StopAndCancel for a graceful
// one. ErrStarted if it runs already.
func (w *Worker) Start(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r := w.run; r != nil {
		select {
		case <-r.done: // ended with Start's context: start anew
			w.run = nil
		default:
			if r.stopping {
				return ErrStopping
			}
			return ErrStarted
		}
	}
	base, cancelHandlers := context.WithCancelCause(ctx)
	fetchCtx, cancelFetch := context.WithCancel(base)
	var loops []*loop
	var subs []*nats.Subscription
	fail := func(err error) error {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
		cancelFetch()
		cancelHandlers(err)
		return err
	}
	for _, kind := range []Kind{KindFire, KindWakeup} {
		for _, r := range w.regs[kind] {
			ls, err := w.newLoops(ctx, r)
			if err != nil {
				return fail(err)
			}
			loops = append(loops, ls...)
			if kind == KindFire {
				sub, err := w.subscribeCancels(r.workflow)
				if err != nil {
					return fail(err)
				}
				subs = append(subs, sub)
			}
		}
	}
	if len(subs) > 0 {
		// The cancel subscriptions are in place before the first fire.
		if err := w.cfg.JetStream.Conn().FlushTimeout(flushTimeout); err != nil {
			return fail(fmt.Errorf("worker: subscribe to cancel requests: %w", err))
		}
	}
	r := &run{fetchCtx: fetchCtx, base: base, cancelFetch: cancelFetch, cancelHandlers: cancelHandlers,
		fetchStopped: make(chan struct{}), done: make(chan struct{})}
	var loopsWG sync.WaitGroup
	for _, l := range loops {
		loopsWG.Go(func() { l.run(r) })
	}
	go func() {
		loopsWG.Wait() // no handler starts after this
		if err := w.cfg.JetStream.Conn().FlushTimeout(flushTimeout); err != nil {
			w.log.Warn("flush after the last fetch", "err", err)
		}
		for _, h := range r.held {
			w.handBack(base, h.m, h.kind)
		}
		close(r.fetchStopped)
		r.handlers.Wait()
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
		cancelFetch()
		cancelHandlers(ErrStopped)
		close(r.done)
	}()
	w.run = r
	return nil
}

// Stop stops fetching and waits until the running handlers have returned
// and their messages are settled, or until ctx ends: then it returns
// ctx.Err(), the handlers go on, and a later Stop or StopAndCancel waits
// again. Messages a fetch brings in after Stop are nak'ed at once for
// other instances. Stop before Start, or again, is a no-op; a stopped
// worker can Start again.
func (w *Worker) Stop(ctx context.Context) error { return w.stop(ctx, false) }

// StopAndCancel is Stop that also ends the running handlers' contexts
// (cause ErrStopped): a handler that returns an error then has its message
// nak'ed at once for redelivery.
func (w *Worker) StopAndCancel(ctx context.Context) error { return w.stop(ctx, true) }

func (w *Worker) stop(ctx context.Context, cancelHandlers bool) error {
	w.mu.Lock()
	r := w.run
	if r != nil {
		r.stopping = true
	}
	w.mu.Unlock()
	if r == nil {
		return nil
	}
	r.cancelFetch()
	if cancelHandlers {
		r.cancelHandlers(ErrStopped)
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	w.mu.Lock()
	if w.run == r {
		w.run = nil
	}
	w.mu.Unlock()
	return nil
}

func validWorkflow(wf string) error {
	if wf == AllWorkflows {
		return nil
	}
	return kvstore.ValidateWorkflow(wf)
}

func durableToken(wf string) string {
	if wf == AllWorkflows {
		return "all"
	}
	return wf
}
