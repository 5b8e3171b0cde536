package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jetsched/jetsched/internal/tracing"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/wakeup"
)

// deliver runs one message's handler and settles the message.
func (w *Worker) deliver(run *run, r *registration, m jetstream.Msg) {
	base := run.base
	d := Delivery{Kind: r.kind, Workflow: subjectWorkflow(m.Subject()), Subject: m.Subject(), Number: deliveryCount(m)}
	d.Last = d.Number >= w.cfg.MaxDeliver
	call, err := w.prepare(r, m, &d)
	if err != nil {
		w.malformed(base, d, m, err)
		return
	}
	log := w.log.With(d.attrs()...)
	if d.Kind == KindFire {
		if cause, ok := w.cancels.cancelled(d.ID); ok {
			// The cancel request came before the fire did.
			w.cancelled(base, d, m, cause, log)
			return
		}
	}
	ctx, cancel := context.WithCancelCause(base)
	defer cancel(nil)
	if r.cfg.timeout > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, r.cfg.timeout, ErrTimeout)
		defer stop()
	}
	if d.Kind == KindFire {
		defer w.cancels.running(d.ID, cancel)()
	}
	lv := w.labels(d)
	w.metrics.inFlight.With(lv).Inc()
	defer w.metrics.inFlight.With(lv).Dec()
	stopPings := w.keepAlive(ctx, d, m)
	start := time.Now()
	ctx = tracing.Extract(ctx, m.Headers())
	ctx, span := w.handlerSpan(ctx, d)
	err = call(ctx)
	endHandlerSpan(span, err)
	w.metrics.duration.With(lv).Observe(time.Since(start).Seconds())
	stopPings()
	w.settle(ctx, d, m, err, log, run.fetchStopped)
}

// prepare reads the message's headers into d and returns the handler's
// call.
func (w *Worker) prepare(r *registration, m jetstream.Msg, d *Delivery) (func(context.Context) error, error) {
	if r.kind == KindWakeup {
		meta, err := wakeup.ParseMeta(m.Headers())
		if err != nil {
			return nil, err
		}
		d.ID = meta.ID
		wk := Wakeup{Meta: meta, Payload: m.Data(), Delivery: d.Number}
		return func(ctx context.Context) error {
			return protect(ctx, func(ctx context.Context) error {
				if meta.Condition != "" && w.cfg.ConditionHolds != nil && !w.cfg.ConditionHolds(ctx, meta.Run, meta.Condition) {
					w.log.InfoContext(ctx, "stale wakeup dropped: its condition no longer holds",
						"wakeup", meta.ID, "run", meta.Run, "step", meta.Step, "condition", meta.Condition)
					return nil
				}
				return r.wakeup(ctx, wk)
			})
		}, nil
	}
	meta, err := kvstore.ParseFireMeta(m.Headers())
	if err != nil {
		return nil, err
	}
	d.ID, d.ScheduleID = meta.SlotID, meta.ScheduleID
	f := Fire{FireMeta: meta, Subject: m.Subject(), Input: m.Data(), Delivery: d.Number}
	return func(ctx context.Context) error {
		return protect(ctx, func(ctx context.Context) error { return r.fire(ctx, f) })
	}, nil
}

// protect calls fn, turning a panic into a *PanicError.
func protect(ctx context.Context, fn func(context.Context) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return fn(ctx)
}

// keepAlive pings in-progress every AckWait/3 until the returned stop is
// called; stop returns once the pings have stopped.
func (w *Worker) keepAlive(ctx context.Context, d Delivery, m jetstream.Msg) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(w.cfg.AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := m.InProgress(); err != nil {
					w.settleFailed(ctx, d, "in_progress", err)
				}
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

// settle acks, naks or terms by the handler's result and its context's
// end, and reports fires' completions (errors.go tells the rules).
// A delivery handed back because the worker stops is nak'ed once
// fetchStopped is closed.
func (w *Worker) settle(ctx context.Context, d Delivery, m jetstream.Msg, err error, log *slog.Logger, fetchStopped <-chan struct{}) {
	lv := w.labels(d)
	cause := context.Cause(ctx)
	var perm *PermanentError
	var retry *RetryError
	switch {
	case err == nil:
		w.metrics.handled.With(lv).Inc()
		if w.settleOp(ctx, d, "ack", m.Ack) {
			w.report(ctx, d, kvstore.OutcomeCompleted, "")
		}
	case ctx.Err() != nil && errors.Is(cause, ErrCancelRequested):
		w.cancelled(ctx, d, m, cause, log)
	case errors.As(err, &perm):
		w.failed(ctx, d, err, log, "terminated: permanent")
		if w.settleOp(ctx, d, "term", func() error { return m.TermWithReason(truncate(err.Error())) }) {
			w.report(ctx, d, kvstore.OutcomeFailed, err.Error())
		}
	case ctx.Err() != nil && !errors.Is(cause, ErrTimeout) && !d.Last:
		w.metrics.released.With(lv).Inc()
		log.InfoContext(ctx, "handler ended as the worker stops: handed back for redelivery", "cause", cause, "err", err)
		<-fetchStopped
		w.settleOp(ctx, d, "nak", func() error { return m.NakWithDelay(handBackDelay) })
	case d.Last:
		w.failed(ctx, d, err, log, "giving up after the last delivery: dead-lettered")
		w.metrics.deadLettered.With(lv).Inc()
		w.deadLetter(ctx, d, m, err)
		if w.settleOp(ctx, d, "term", func() error { return m.TermWithReason(truncate("dead-lettered: " + err.Error())) }) {
			w.report(ctx, d, kvstore.OutcomeFailed, fmt.Sprintf("dead-lettered after %d deliveries: %v", d.Number, err))
		}
	case errors.As(err, &retry):
		w.failed(ctx, d, err, log, "retry requested", "retry_in", retry.After)
		w.metrics.retried.With(lv).Inc()
		w.settleOp(ctx, d, "nak", func() error { return m.NakWithDelay(retry.After) })
	default:
		delay := w.cfg.BackOff[min(d.Number, len(w.cfg.BackOff))-1]
		w.failed(ctx, d, err, log, "handler failed: redelivery with backoff", "retry_in", delay)
		w.metrics.retried.With(lv).Inc()
		w.settleOp(ctx, d, "nak", func() error { return m.NakWithDelay(delay) })
	}
}

// cancelled terminates a fire a scheduler asked to cancel, and reports it
// "cancelled".
func (w *Worker) cancelled(ctx context.Context, d Delivery, m jetstream.Msg, cause error, log *slog.Logger) {
	w.metrics.cancelled.With(w.labels(d)).Inc()
	log.InfoContext(ctx, "fire cancelled by the scheduler (overlap cancel_other)", "cause", cause)
	if w.settleOp(ctx, d, "term", func() error { return m.TermWithReason(truncate(cause.Error())) }) {
		w.report(ctx, d, kvstore.OutcomeCancelled, cause.Error())
	}
}

// failed counts and logs a handler's failure and passes it to the
// ErrorHandler.
func (w *Worker) failed(ctx context.Context, d Delivery, err error, log *slog.Logger, msg string, attrs ...any) {
	w.metrics.failed.With(w.labels(d)).Inc()
	attrs = append(attrs, "err", err)
	if cause := context.Cause(ctx); cause != nil {
		attrs = append(attrs, "cause", cause)
	}
	var p *PanicError
	if errors.As(err, &p) {
		attrs = append(attrs, "stack", string(p.Stack))
	}
	log.WarnContext(ctx, msg, attrs...)
	w.onError(ctx, d, err)
}

// malformed terminates a message that is not a fire or a wakeup.
func (w *Worker) malformed(ctx context.Context, d Delivery, m jetstream.Msg, err error) {
	err = fmt.Errorf("worker: not a jetsched %s, terminated: %w", d.Kind, err)
	w.metrics.failed.With(w.labels(d)).Inc()
	w.log.WarnContext(ctx, "not a jetsched message; terminated", "subject", d.Subject, "err", err)
	w.onError(ctx, d, err)
	w.settleOp(ctx, d, "term", func() error { return m.TermWithReason("not a jetsched " + string(d.Kind)) })
}

// handBackDelay is how long a message a stopping worker hands back waits
// before it is redelivered. The stop flushes the connection once its
// fetches have ended, so that the server has seen their pull requests'
// inboxes go before the nak: a redelivery into a pull request going away
// waits out AckWait. But nats.go's Fetch unsubscribes its inbox just after
// it closes the channel the fetch loop reads, on its own goroutine, and a
// loaded machine ran that after the flush: the handed-back fire went to
// the dead request (TestStoppingCancelsHandlersAndHandsBack, once in CI).
// Half a second lets the unsubscribe reach the server first.
const handBackDelay = 500 * time.Millisecond

// handBack naks a message fetched while the worker stops, for another
// instance to take (after handBackDelay).
func (w *Worker) handBack(ctx context.Context, m jetstream.Msg, kind Kind) {
	d := Delivery{Kind: kind, Workflow: subjectWorkflow(m.Subject()), Subject: m.Subject(), Number: deliveryCount(m)}
	d.ID = m.Headers().Get(nats.MsgIdHdr)
	w.metrics.released.With(w.labels(d)).Inc()
	w.settleOp(ctx, d, "nak", func() error { return m.NakWithDelay(handBackDelay) })
}

// settleOp runs an ack, nak or term; a failure is counted, logged and
// passed to the ErrorHandler. It reports whether op succeeded.
func (w *Worker) settleOp(ctx context.Context, d Delivery, op string, fn func() error) bool {
	if err := fn(); err != nil {
		w.settleFailed(ctx, d, op, err)
		return false
	}
	return true
}

// settleFailed counts, logs and passes on a *SettleError.
func (w *Worker) settleFailed(ctx context.Context, d Delivery, op string, err error, attrs ...any) {
	w.metrics.settleErrors.With(w.labels(d, op)).Inc()
	w.log.WarnContext(ctx, op+" failed", append(append(d.attrs(), attrs...), "err", err)...)
	w.onError(ctx, d, &SettleError{Op: op, Err: err})
}

func (w *Worker) onError(ctx context.Context, d Delivery, err error) {
	if w.cfg.ErrorHandler != nil {
		w.cfg.ErrorHandler(context.WithoutCancel(ctx), d, err)
	}
}

// report publishes a fire's completion on
// sched.done.<workflow>.<schedule id>.
func (w *Worker) report(ctx context.Context, d Delivery, outcome, errText string) {
	if d.Kind != KindFire {
		return
	}
	data, err := json.Marshal(kvstore.DoneReport{SlotID: d.ID, Outcome: outcome, Error: errText, Worker: w.cfg.Name})
	if err == nil {
		err = w.cfg.JetStream.Conn().Publish(w.cfg.Layout.DoneSubject(d.Workflow, d.ScheduleID), data)
	}
	if err != nil {
		w.settleFailed(ctx, d, "report", err)
	}
}

// deadLetter keeps a copy of a message given up on, on
// sched.event.dead_letter.<workflow>.<schedule id> for a fire and
// sched.event.dead_letter.<workflow>.<wakeup id> for a wakeup (the id as
// one token; captured by SCHED_EVENTS), with its headers, the deliveries
// and the last error.
func (w *Worker) deadLetter(ctx context.Context, d Delivery, m jetstream.Msg, err error) {
	key := d.ScheduleID
	if key == "" {
		key = d.ID // a wakeup's id: "wakeup.<run>.<step>.<due ms>"
	}
	dl := nats.NewMsg(w.cfg.Layout.DeadLetterSubject(d.Workflow, key))
	for k, v := range m.Headers() {
		if k != nats.MsgIdHdr {
			dl.Header[k] = v
		}
	}
	dl.Header.Set("Sched-Original-Subject", m.Subject())
	dl.Header.Set("Sched-Original-Id", d.ID)
	dl.Header.Set("Sched-Deliveries", fmt.Sprint(d.Number))
	dl.Header.Set("Sched-Error", err.Error())
	dl.Data = m.Data()
	if perr := w.cfg.JetStream.Conn().PublishMsg(dl); perr != nil {
		w.settleFailed(ctx, d, "dead_letter", perr)
	}
}

func (w *Worker) labels(d Delivery, extra ...string) prometheus.Labels {
	l := prometheus.Labels{"worker": w.cfg.Name, "workflow": w.metrics.workflows.Value(durableToken(d.Workflow)), "kind": string(d.Kind)}
	if len(extra) > 0 {
		l["op"] = extra[0]
	}
	return l
}

// attrs are the log attributes of a delivery.
func (d Delivery) attrs() []any {
	a := []any{"kind", string(d.Kind), "workflow", d.Workflow}
	if d.ScheduleID != "" {
		a = append(a, "schedule", d.ScheduleID)
	}
	if d.ID != "" {
		a = append(a, "slot", d.ID)
	}
	if d.Number > 0 {
		a = append(a, "delivery", d.Number)
	}
	return a
}

// subjectWorkflow is the workflow a message was delivered for: the third
// token of sched.fire.<workflow>.<schedule id>, sched.fire.<workflow> (the
// form of schedulers before per-schedule subjects) or
// sched.wakeup.<workflow> (the prefix is one token). The subject, not a
// header, because the subject is what the consumer's filter and the
// worker's permissions are about.
func subjectWorkflow(subject string) string {
	for range 2 {
		i := strings.IndexByte(subject, '.')
		if i < 0 {
			return ""
		}
		subject = subject[i+1:]
	}
	if i := strings.IndexByte(subject, '.'); i >= 0 {
		return subject[:i]
	}
	return subject
}

func deliveryCount(m jetstream.Msg) int {
	if md, err := m.Metadata(); err == nil {
		return int(md.NumDelivered)
	}
	return 1
}

// truncate keeps a term reason short: the server puts it in an advisory.
func truncate(s string) string {
	const limit = 256
	if len(s) <= limit {
		return s
	}
	return s[:limit]
}
