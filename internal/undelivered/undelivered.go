// Package undelivered reports the fires and wakeups no worker acked: a
// consumer that delivered a message max_deliver times without an ack
// stops delivering it, and the server says so in an advisory,
// $JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.<stream>.<consumer>. The Go
// worker dead-letters what its handlers give up on and terminates it (no
// advisory then); a foreign worker (another language, a bug) that never
// acks leaves the advisory as the only trace. The Watcher turns each into
// an undeliverable event naming the schedule, the slot and the consumer,
// a counter, and a warning, at most one per consumer a minute.
//
// The scheduler never publishes such a fire again: the stream has it
// (the slot fired once), and only its consumer gave up on it. Every
// scheduler of a fleet subscribes in one queue group, so that the server
// hands each advisory to one of them: one event per message.
package undelivered

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

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/eventfilter"
	"github.com/jetsched/jetsched/internal/lifecycle"
	"github.com/jetsched/jetsched/internal/natsperm"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Queue is the queue group the schedulers' advisory subscriptions share.
const Queue = "jetsched-undelivered"

// warnEvery is how often, at most, a consumer's undeliverable messages
// give a warning; those in between are counted into the next.
const warnEvery = time.Minute

// Config configures a Watcher.
type Config struct {
	// JS reads the messages the advisories name; its connection
	// subscribes. Required.
	JS jetstream.JetStream
	// Layout names the fire and wakeup streams and the event subjects.
	Layout kvstore.Layout
	// Instance is the scheduler's instance id (the events' owner).
	// Required.
	Instance string
	// Events chooses whether undeliverable events are published (nil:
	// they are).
	Events eventfilter.Set
	// Observer, when set, is called for every undeliverable message, with
	// "fires" or "wakeups" and the consumer's name: the metric. It must
	// not block.
	Observer func(stream, consumer string)
	// Event, when set, is called for every event raised, published or
	// not (the events metric), with "schedules" or "timers".
	Event func(source string, kind kvstore.EventKind)
	// Clock tells the time. Default: the system clock.
	Clock clock.Clock
	// Logger receives the warnings. Default: discard.
	Logger *slog.Logger
}

// Watcher subscribes to the advisories and reports them.
type Watcher struct {
	cfg Config
	log *slog.Logger
	svc lifecycle.Service

	mu     sync.Mutex
	warned map[string]time.Time // consumer → last warning
	held   map[string]int       // consumer → messages since
}

// advisory is the server's JSConsumerDeliveryExceededAdvisory.
type advisory struct {
	Stream     string `json:"stream"`
	Consumer   string `json:"consumer"`
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
}

// New validates cfg and returns a stopped Watcher.
func New(cfg Config) (*Watcher, error) {
	switch {
	case cfg.JS == nil:
		return nil, errors.New("undelivered: Config.JS is required")
	case cfg.Instance == "":
		return nil, errors.New("undelivered: Config.Instance is required")
	}
	cfg.Layout = cfg.Layout.WithDefaults()
	log := cmp.Or(cfg.Logger, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return &Watcher{cfg: cfg, log: log.With("component", "undelivered"), warned: map[string]time.Time{}, held: map[string]int{}}, nil
}

// Start subscribes to the fire and wakeup streams' advisories and handles
// them in a goroutine that Stop ends. Starting a running watcher is a
// no-op.
func (w *Watcher) Start(ctx context.Context) error {
	return w.svc.Start(ctx, func(_, life context.Context) (func(), error) {
		ch := make(chan *nats.Msg, 256)
		var subs []*nats.Subscription
		unsubscribe := func() {
			for _, sub := range subs {
				_ = sub.Unsubscribe()
			}
		}
		for _, stream := range []string{w.cfg.Layout.FiresStream, w.cfg.Layout.WakeupsStream} {
			sub, err := w.cfg.JS.Conn().ChanQueueSubscribe(natsperm.MaxDeliveriesAdvisory(stream), Queue, ch)
			if err != nil {
				unsubscribe()
				return nil, fmt.Errorf("undelivered: subscribe to %s's advisories: %w", stream, err)
			}
			subs = append(subs, sub)
		}
		return func() {
			defer unsubscribe()
			for {
				select {
				case <-life.Done():
					return
				case m := <-ch:
					w.handle(life, m)
				}
			}
		}, nil
	})
}

// Stop unsubscribes and waits for the advisory being handled, or returns
// ctx's error when ctx ends first. Safe to call more than once, and
// before Start.
func (w *Watcher) Stop(ctx context.Context) error { return w.svc.Stop(ctx) }

func (w *Watcher) handle(life context.Context, m *nats.Msg) {
	var a advisory
	if err := json.Unmarshal(m.Data, &a); err != nil || a.Stream == "" {
		w.log.Debug("advisory not understood", "subject", m.Subject, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(life, 5*time.Second)
	defer cancel()
	ev, source, subject := w.describe(ctx, a)
	if w.cfg.Observer != nil {
		w.cfg.Observer(map[string]string{"schedules": "fires", "timers": "wakeups"}[source], a.Consumer)
	}
	if w.cfg.Event != nil {
		w.cfg.Event(source, ev.Kind)
	}
	w.warn(a, ev)
	if !w.cfg.Events.Has(ev.Kind) {
		return
	}
	if data, err := json.Marshal(ev); err == nil {
		if err := w.cfg.JS.Conn().Publish(subject, data); err != nil {
			w.log.Debug("publish event", "subject", subject, "err", err)
		}
	}
}

// describe reads the message an advisory names and makes its event, its
// source (schedules, timers) and subject. A message gone from the stream
// (retention) still gives the event, with its sequence only.
func (w *Watcher) describe(ctx context.Context, a advisory) (kvstore.Event, string, string) {
	ev := kvstore.Event{Kind: kvstore.EventUndeliverable, Stream: a.Stream, Seq: a.StreamSeq, Count: a.Deliveries,
		Owner: w.cfg.Instance, At: w.cfg.Clock.Now().UTC(),
		Reason: fmt.Sprintf("consumer %s of %s delivered it %d times (its max_deliver) without an ack; it is not delivered again",
			a.Consumer, a.Stream, a.Deliveries)}
	source := "schedules"
	if a.Stream == w.cfg.Layout.WakeupsStream {
		source = "timers"
	}
	var h nats.Header
	if s, err := w.cfg.JS.Stream(ctx, a.Stream); err == nil {
		if msg, err := s.GetMsg(ctx, a.StreamSeq); err == nil {
			h = msg.Header
		} else {
			w.log.Debug("read the undelivered message", "stream", a.Stream, "seq", a.StreamSeq, "err", err)
		}
	}
	ev.SlotID, ev.Workflow = h.Get(kvstore.HeaderMsgID), h.Get(kvstore.HeaderWorkflow)
	if source == "timers" {
		if run := h.Get(kvstore.HeaderRun); run != "" {
			ev.Schedule = kvstore.TimerKey(run, h.Get(kvstore.HeaderStep))
			ev.Slot, _ = time.Parse(time.RFC3339Nano, h.Get(kvstore.HeaderDueAt))
			ev.Slot = ev.Slot.UTC()
			return ev, source, w.cfg.Layout.TimerEventSubject(ev.Kind, ev.Schedule)
		}
		return ev, source, w.cfg.Layout.EventSubject(ev.Kind, fmt.Sprintf("%s-%d", a.Stream, a.StreamSeq))
	}
	if meta, err := kvstore.ParseFireMeta(h); err == nil {
		ev.Schedule, ev.Slot = meta.ScheduleID, meta.ScheduledAt.UTC()
		return ev, source, w.cfg.Layout.EventSubject(ev.Kind, ev.Schedule)
	}
	return ev, source, w.cfg.Layout.EventSubject(ev.Kind, fmt.Sprintf("%s-%d", a.Stream, a.StreamSeq))
}

// warn logs the first undeliverable message of a consumer, then at most
// one a minute with how many came since.
func (w *Watcher) warn(a advisory, ev kvstore.Event) {
	now := w.cfg.Clock.Now()
	w.mu.Lock()
	last, ok := w.warned[a.Consumer]
	if ok && now.Sub(last) < warnEvery {
		w.held[a.Consumer]++
		w.mu.Unlock()
		w.log.Debug("message not acked within max_deliver", "consumer", a.Consumer, "schedule", ev.Schedule, "slot_id", ev.SlotID)
		return
	}
	since := w.held[a.Consumer]
	w.warned[a.Consumer], w.held[a.Consumer] = now, 0
	w.mu.Unlock()
	w.log.Warn("a consumer gave up on a fire: delivered max_deliver times, never acked; it is not published again (see its worker)",
		"stream", a.Stream, "consumer", a.Consumer, "deliveries", a.Deliveries, "schedule", ev.Schedule,
		"slot", ev.Slot, "slot_id", ev.SlotID, "seq", a.StreamSeq, "more_since_last_warning", since)
}
