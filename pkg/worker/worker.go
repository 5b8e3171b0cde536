// Package worker runs handlers for jetsched fires and wakeups: a durable
// pull consumer per workflow with AckWait, MaxDeliver and backoff
// settings, in-progress pings for long handlers, delivery steered by what
// the handler returns (see Retry and Permanent), completion reports on
// sched.done.<workflow>.<schedule id> for the ledger and the overlap
// policies, dead letters after the last delivery, and the stale-condition
// check for wakeups.
//
// Every subject a worker uses carries its workflow, and each consumer is
// created with one filter subject (so nats.go asks for
// $JS.API.CONSUMER.CREATE.<stream>.<name>.<filter>), which lets the
// account's permissions pin a worker to its workflows: `scheduler
// natsconf --worker NAME --workflows a,b` prints such a permission block.
// Such an account reads replies only under its own inbox prefix, so the
// connection passed in needs nats.CustomInboxPrefix("_INBOX_<user>").
package worker

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/pkg/fire"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/wakeup"
)

// Config configures a Worker.
type Config struct {
	// JetStream is the connection. Required.
	JetStream jetstream.JetStream
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
	// ConditionHolds reports whether a wakeup's condition still holds for
	// its run (for example: the run is still in that activity). A wakeup
	// whose condition no longer holds is acked and dropped without calling
	// the handler. Default: every condition holds.
	ConditionHolds func(ctx context.Context, run, condition string) bool
	// Logger. Default: discard.
	Logger *slog.Logger
}

// Fire is one delivery of a schedule's fire.
type Fire struct {
	fire.Meta
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

// Worker consumes fires and wakeups.
type Worker struct {
	cfg Config
	log *slog.Logger

	mu       sync.Mutex
	fires    map[string]Handler
	wakeups  map[string]WakeupHandler
	running  []jetstream.ConsumeContext
	started  bool
	inflight sync.WaitGroup
}

// New validates cfg.
func New(cfg Config) (*Worker, error) {
	if cfg.JetStream == nil {
		return nil, errors.New("worker: Config.JetStream is required")
	}
	cfg.Name = cmp.Or(cfg.Name, "worker")
	if err := kvstore.ValidateWorkflow(cfg.Name); err != nil {
		return nil, fmt.Errorf("worker: Config.Name: %w", err)
	}
	cfg.Layout = cfg.Layout.WithDefaults()
	cfg.AckWait = cmp.Or(cfg.AckWait, 30*time.Second)
	cfg.MaxDeliver = cmp.Or(cfg.MaxDeliver, 5)
	if len(cfg.BackOff) == 0 {
		cfg.BackOff = []time.Duration{time.Second, 5 * time.Second, 30 * time.Second, 2 * time.Minute}
	}
	if cfg.AckWait < time.Second || cfg.MaxDeliver < 1 {
		return nil, fmt.Errorf("worker: AckWait %s must be at least 1s and MaxDeliver %d at least 1", cfg.AckWait, cfg.MaxDeliver)
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return &Worker{cfg: cfg, log: cfg.Logger.With("component", "worker", "name", cfg.Name),
		fires: map[string]Handler{}, wakeups: map[string]WakeupHandler{}}, nil
}

// Handle registers the fire handler of a workflow. Call before Start.
func (w *Worker) Handle(workflow string, h Handler) error {
	if err := validWorkflow(workflow); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started {
		return errors.New("worker: Handle after Start")
	}
	w.fires[workflow] = h
	return nil
}

// AllWorkflows, passed to Handle or HandleWakeup, handles every workflow
// with one consumer ("<name>-fire-all").
const AllWorkflows = ">"

// HandleWakeup registers the wakeup handler of a workflow. Call before
// Start.
func (w *Worker) HandleWakeup(workflow string, h WakeupHandler) error {
	if err := validWorkflow(workflow); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started {
		return errors.New("worker: HandleWakeup after Start")
	}
	w.wakeups[workflow] = h
	return nil
}

// Start creates or updates one durable consumer per handled workflow and
// starts consuming.
func (w *Worker) Start(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started {
		return errors.New("worker: already started")
	}
	l := w.cfg.Layout
	for wf, h := range w.fires {
		if err := w.consume(ctx, l.FiresStream, w.cfg.Name+"-fire-"+durableToken(wf), l.FireSubject(wf), func(m jetstream.Msg) { w.onFire(m, h) }); err != nil {
			w.stopLocked()
			return err
		}
	}
	for wf, h := range w.wakeups {
		if err := w.consume(ctx, l.WakeupsStream, w.cfg.Name+"-wakeup-"+durableToken(wf), l.WakeupSubject(wf), func(m jetstream.Msg) { w.onWakeup(m, h) }); err != nil {
			w.stopLocked()
			return err
		}
	}
	w.started = true
	return nil
}

func (w *Worker) consume(ctx context.Context, stream, durable, subject string, h jetstream.MessageHandler) error {
	cons, err := w.cfg.JetStream.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{
		Durable: durable, Description: "jetsched worker " + w.cfg.Name, FilterSubject: subject,
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: w.cfg.AckWait, MaxDeliver: w.cfg.MaxDeliver,
		DeliverPolicy: jetstream.DeliverNewPolicy,
	})
	if err != nil {
		return fmt.Errorf("worker: consumer %s on %s: %w", durable, stream, err)
	}
	cc, err := cons.Consume(h)
	if err != nil {
		return fmt.Errorf("worker: consume %s: %w", durable, err)
	}
	w.running = append(w.running, cc)
	w.log.Info("consuming", "stream", stream, "consumer", durable, "subject", subject)
	return nil
}

// Stop stops fetching, lets in-flight handlers finish (their messages are
// acked or naked as they return), and returns. Safe to call more than once.
func (w *Worker) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopLocked()
}

func (w *Worker) stopLocked() {
	for _, cc := range w.running {
		cc.Drain()
	}
	for _, cc := range w.running {
		<-cc.Closed()
	}
	w.inflight.Wait()
	w.running = nil
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

func delivery(m jetstream.Msg) int {
	if md, err := m.Metadata(); err == nil {
		return int(md.NumDelivered)
	}
	return 1
}

// keepAlive pings in-progress every AckWait/3 until done is closed.
func (w *Worker) keepAlive(m jetstream.Msg, done <-chan struct{}) {
	t := time.NewTicker(w.cfg.AckWait / 3)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			_ = m.InProgress()
		}
	}
}

// run calls fn with in-progress pings.
func (w *Worker) run(m jetstream.Msg, fn func(context.Context) error) error {
	w.inflight.Add(1)
	defer w.inflight.Done()
	done := make(chan struct{})
	go w.keepAlive(m, done)
	defer close(done)
	return fn(context.Background())
}

func (w *Worker) onFire(m jetstream.Msg, h Handler) {
	meta, err := fire.ParseMeta(m.Headers())
	if err != nil {
		w.log.Warn("not a fire message; terminated", "subject", m.Subject(), "err", err)
		_ = m.TermWithReason("not a jetsched fire")
		return
	}
	f := Fire{Meta: meta, Subject: m.Subject(), Input: m.Data(), Delivery: delivery(m)}
	err = w.run(m, func(ctx context.Context) error { return h(ctx, f) })
	w.settle(m, f.Delivery, err, meta.ScheduleID, meta.SlotID)
}

func (w *Worker) onWakeup(m jetstream.Msg, h WakeupHandler) {
	meta, err := wakeup.ParseMeta(m.Headers())
	if err != nil {
		w.log.Warn("not a wakeup message; terminated", "subject", m.Subject(), "err", err)
		_ = m.TermWithReason("not a jetsched wakeup")
		return
	}
	if meta.Condition != "" && w.cfg.ConditionHolds != nil && !w.cfg.ConditionHolds(context.Background(), meta.Run, meta.Condition) {
		w.log.Info("stale wakeup dropped: its condition no longer holds", "run", meta.Run, "step", meta.Step, "condition", meta.Condition)
		_ = m.Ack()
		return
	}
	wk := Wakeup{Meta: meta, Payload: m.Data(), Delivery: delivery(m)}
	err = w.run(m, func(ctx context.Context) error { return h(ctx, wk) })
	w.settle(m, wk.Delivery, err, "", meta.ID)
}

// settle acks, naks or terms by the handler's result, and reports fires'
// completions. schedule is "" for wakeups.
func (w *Worker) settle(m jetstream.Msg, n int, err error, schedule, id string) {
	workflow := subjectWorkflow(m.Subject())
	var perm *permanentError
	var retry *retryError
	switch {
	case err == nil:
		if aerr := m.Ack(); aerr != nil {
			w.log.Warn("ack", "id", id, "err", aerr)
			return
		}
		w.report(workflow, schedule, id, fire.OutcomeCompleted, "")
	case errors.As(err, &perm):
		_ = m.TermWithReason(err.Error())
		w.report(workflow, schedule, id, fire.OutcomeFailed, err.Error())
	case n >= w.cfg.MaxDeliver:
		w.log.Error("giving up after the last delivery: dead-lettered", "id", id, "deliveries", n, "err", err)
		w.deadLetter(m, workflow, schedule, id, n, err)
		_ = m.TermWithReason("dead-lettered: " + err.Error())
		w.report(workflow, schedule, id, fire.OutcomeFailed, fmt.Sprintf("dead-lettered after %d deliveries: %v", n, err))
	case errors.As(err, &retry):
		_ = m.NakWithDelay(retry.after)
	default:
		delay := w.cfg.BackOff[min(n, len(w.cfg.BackOff))-1]
		w.log.Warn("handler failed; redelivery with backoff", "id", id, "delivery", n, "retry_in", delay, "err", err)
		_ = m.NakWithDelay(delay)
	}
}

// subjectWorkflow is the workflow a message was delivered for: the last
// token of sched.fire.<workflow> or sched.wakeup.<workflow>. The subject,
// not a header, because the subject is what the consumer's filter and the
// worker's permissions are about.
func subjectWorkflow(subject string) string {
	return subject[strings.LastIndexByte(subject, '.')+1:]
}

// report publishes a completion on sched.done.<workflow>.<schedule id>.
func (w *Worker) report(workflow, schedule, id, outcome, errText string) {
	if schedule == "" {
		return
	}
	data, _ := json.Marshal(fire.DoneReport{SlotID: id, Outcome: outcome, Error: errText, Worker: w.cfg.Name})
	if err := w.cfg.JetStream.Conn().Publish(w.cfg.Layout.DoneSubject(workflow, schedule), data); err != nil {
		w.log.Warn("report completion", "id", id, "err", err)
	}
}

// deadLetter keeps a copy of a message given up on, on
// sched.event.dead_letter.<workflow>.<schedule id> for a fire and
// sched.event.dead_letter.<workflow>.<wakeup id> for a wakeup (the id as
// one token; captured by SCHED_EVENTS), with its headers, the deliveries
// and the last error.
func (w *Worker) deadLetter(m jetstream.Msg, workflow, schedule, id string, n int, err error) {
	key := schedule
	if key == "" {
		key = id // a wakeup's id: "wakeup.<run>.<step>.<due ms>"
	}
	dl := nats.NewMsg(w.cfg.Layout.DeadLetterSubject(workflow, key))
	for k, v := range m.Headers() {
		if k != nats.MsgIdHdr {
			dl.Header[k] = v
		}
	}
	dl.Header.Set("Sched-Original-Subject", m.Subject())
	dl.Header.Set("Sched-Original-Id", id)
	dl.Header.Set("Sched-Deliveries", fmt.Sprint(n))
	dl.Header.Set("Sched-Error", err.Error())
	dl.Data = m.Data()
	if perr := w.cfg.JetStream.Conn().PublishMsg(dl); perr != nil {
		w.log.Warn("dead letter", "id", id, "err", perr)
	}
}
