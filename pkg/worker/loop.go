package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
)

// fetchWait is how long one pull request waits for messages. A waiting
// pull keeps a place reserved (see loop.reserve), so it is short enough
// for a place that another handler waits for under MaxWorkersTotal to
// come free soon, and long enough to cost little when idle.
const fetchWait = 5 * time.Second

// loop fetches the messages of one registered handler, no more than it
// has places to start them in, and starts each at once.
type loop struct {
	w     *Worker
	reg   *registration
	cons  jetstream.Consumer
	local chan struct{} // a token per running delivery, reg.cfg.maxWorkers in all
	name  string
	// poll, when set, makes the loop ask without waiting and, when nothing
	// came, pause this long: its places are held only for the round trip
	// (the legacy consumer, which shares the handler's places and is idle
	// but during an upgrade).
	poll time.Duration
}

// legacyPoll is how often the legacy consumer of a fire handler asks for
// fires published on the workflow-only subject.
const legacyPoll = time.Second

// legacyFetchWait is how long a pull of the legacy consumer waits when
// fewer fires are there than it asks for. It asks for a byte limit as
// well as a count, which a no-wait pull cannot (nats.go's FetchNoWait
// takes a count alone: a handler with hundreds of places asked for
// hundreds of fires of up to 256 KiB at once), so it waits this long at
// most, its places held about as briefly as a no-wait pull's.
const legacyFetchWait = 100 * time.Millisecond

// newLoops creates or updates the handler's durable consumers and a loop
// for each; the loops share the handler's places. A wakeup handler, and a
// fire handler of AllWorkflows, have one consumer. A fire handler of one
// workflow has two for one release: "<name>-fire-<workflow>" on the
// per-schedule subjects sched.fire.<workflow>.>, and
// "<name>-fire-<workflow>-legacy" on sched.fire.<workflow>, where
// schedulers from before the per-schedule subjects publish, so that no
// fire is missed while a fleet is upgraded (docs/fire-messages.md).
func (w *Worker) newLoops(ctx context.Context, r *registration) ([]*loop, error) {
	l := w.cfg.Layout
	durable := w.cfg.Name + "-" + string(r.kind) + "-" + durableToken(r.workflow)
	local := make(chan struct{}, r.cfg.maxWorkers)
	switch {
	case r.kind == KindWakeup:
		c, err := w.consumer(ctx, r, l.WakeupsStream, durable, l.WakeupSubject(r.workflow), 0)
		if err != nil {
			return nil, err
		}
		return []*loop{{w: w, reg: r, cons: c, local: local, name: durable}}, nil
	case r.workflow == AllWorkflows:
		c, err := w.consumer(ctx, r, l.FiresStream, durable, l.FireSubjects(), 0)
		if err != nil {
			return nil, err
		}
		return []*loop{{w: w, reg: r, cons: c, local: local, name: durable}}, nil
	}
	// A consumer of a version before per-schedule subjects filters the
	// legacy subject: the legacy consumer starts where it stopped acking,
	// so that fires it had not handled yet are delivered.
	var from uint64
	legacy := l.LegacyFireSubject(r.workflow)
	if c, err := w.cfg.JetStream.Consumer(ctx, l.FiresStream, durable); err == nil {
		if info := c.CachedInfo(); info.Config.FilterSubject == legacy {
			from = info.AckFloor.Stream + 1
		}
	}
	old, err := w.consumer(ctx, r, l.FiresStream, durable+"-legacy", legacy, from)
	if err != nil {
		return nil, err
	}
	cur, err := w.consumer(ctx, r, l.FiresStream, durable, l.WorkflowFires(r.workflow), 0)
	if err != nil {
		return nil, err
	}
	return []*loop{{w: w, reg: r, cons: cur, local: local, name: durable}, {w: w, reg: r, cons: old, local: local, name: durable + "-legacy", poll: legacyPoll}}, nil
}

// consumer creates or updates durable on stream with one filter subject
// (so that nats.go asks on the create subject that carries the filter,
// which workers' permissions allow). A new consumer delivers new messages,
// or from stream sequence from when it is not 0.
func (w *Worker) consumer(ctx context.Context, r *registration, stream, durable, filter string, from uint64) (jetstream.Consumer, error) {
	cfg := jetstream.ConsumerConfig{
		Durable: durable, Description: "jetsched worker " + w.cfg.Name, FilterSubject: filter,
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: w.cfg.AckWait, MaxDeliver: w.cfg.MaxDeliver,
		DeliverPolicy: jetstream.DeliverNewPolicy,
	}
	if existing, err := w.cfg.JetStream.Consumer(ctx, stream, durable); err == nil {
		// The deliver policy of a consumer cannot change: keep its own.
		cfg.DeliverPolicy, cfg.OptStartSeq = existing.CachedInfo().Config.DeliverPolicy, existing.CachedInfo().Config.OptStartSeq
	} else if from > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, from
	}
	cons, err := w.cfg.JetStream.CreateOrUpdateConsumer(ctx, stream, cfg)
	if err != nil {
		return nil, fmt.Errorf("worker: consumer %s on %s: %w", durable, stream, err)
	}
	w.log.Info("consuming", "stream", stream, "consumer", durable, "subject", filter, "max_workers", r.cfg.maxWorkers)
	return cons, nil
}

// run fetches until r.fetchCtx ends, starting every message in a handler
// goroutine counted by r.handlers, whose contexts derive from r.base.
func (l *loop) run(r *run) {
	want := 1 // what to ask for: doubles while batches come back full
	pause := time.Duration(0)
	for {
		n := l.reserve(r.fetchCtx, want)
		if n == 0 {
			return
		}
		got, err := l.fetch(r, n)
		l.release(n - got)
		want = max(1, 2*got)
		if err == nil {
			pause = 0
			if got == 0 && l.poll > 0 && !l.sleep(r, l.poll) {
				return
			}
			continue
		}
		// A failed pull (no connection, consumer gone, no permission):
		// try again after a pause that doubles up to 30s.
		pause = min(max(2*pause, 250*time.Millisecond), 30*time.Second)
		l.w.settleFailed(r.base, Delivery{Kind: l.reg.kind, Workflow: l.reg.workflow}, "fetch", err,
			"consumer", l.name, "retry_in", pause)
		if !l.sleep(r, pause) {
			return
		}
	}
}

// sleep waits d; false when fetching stopped first.
func (l *loop) sleep(r *run, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.fetchCtx.Done():
		return false
	case <-t.C:
		return true
	}
}

// fetch pulls up to n messages (n places are reserved) and starts each as
// it arrives; it returns how many arrived. Messages that arrive once
// fetching stopped are held back, to be nak'ed for other instances.
func (l *loop) fetch(r *run, n int) (int, error) {
	ctx, cancel := context.WithTimeout(r.fetchCtx, fetchWait)
	defer cancel()
	// A byte limit as well as the count: fires carry inputs of up to
	// 256 KiB, and a handler with hundreds of places would otherwise ask
	// for more at once than the server holds for the connection.
	limit := jetstream.FetchMaxBytes(jsstore.PullBytes(l.w.cfg.JetStream.Conn()))
	wait := jetstream.FetchContext(ctx)
	if l.poll > 0 {
		// (The server's expiry, not a context's: what it sent before it
		// is read to the end, however slow the link.)
		wait = jetstream.FetchMaxWait(legacyFetchWait)
	}
	batch, err := l.cons.Fetch(n, wait, limit)
	if err != nil {
		return 0, err
	}
	got := 0
	for m := range batch.Messages() {
		got++
		if r.fetchCtx.Err() != nil {
			r.holdBack(m, l.reg.kind)
			l.release(1)
			continue
		}
		r.handlers.Go(func() {
			defer l.release(1)
			l.w.deliver(r, l.reg, m)
		})
	}
	if err := batch.Error(); err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && !errors.Is(err, jetstream.ErrNoMessages) {
		return got, err
	}
	return got, nil
}

// reserve takes places for up to want deliveries: it waits for one of the
// handler's and one of the worker's, then takes what else is free without
// waiting. 0 once ctx ends. Blocked senders on a channel are served in
// order, so handlers waiting for the worker's places take turns.
func (l *loop) reserve(ctx context.Context, want int) int {
	select {
	case l.local <- struct{}{}:
	case <-ctx.Done():
		return 0
	}
	select {
	case l.w.global <- struct{}{}:
	case <-ctx.Done():
		<-l.local
		return 0
	}
	n := 1
	for n < want {
		select {
		case l.local <- struct{}{}:
		default:
			return n
		}
		select {
		case l.w.global <- struct{}{}:
			n++
		default:
			<-l.local
			return n
		}
	}
	return n
}

// release gives n places back.
func (l *loop) release(n int) {
	for range n {
		<-l.w.global
		<-l.local
	}
}
