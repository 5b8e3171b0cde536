package jsstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// WatchBytes is what one of the store's watches aims to have in flight
// from the server: the bytes of the values sent to it and not yet taken by
// its reader. nats.go's KeyValue watches are push consumers with flow
// control, which the server lets run up to 32 MiB ahead of their reader
// each; two of them loading a million records at once on one connection,
// behind a reader on a busy machine, went past the server's default limit
// of 64 MiB of pending bytes per connection, and the server closed the
// connection as a slow consumer. The store's watches pull their values
// instead, so many at a time that they come to about this many bytes (see
// watchBatch): the watches on one connection (the fire engine's, the
// listings', the timers') stay far below that limit, and a request sent on
// the same connection waits behind a few MiB of them at most.
const WatchBytes = 4 << 20

// watchOpts are what a store watch watches.
type watchOpts struct {
	// filter is the keys' pattern ("" for all).
	filter string
	// ignoreDeletes leaves deletes and purges out.
	ignoreDeletes bool
	// keysOnly delivers keys, revisions and operations without values
	// (headers only, as kv.ListKeys reads them).
	keysOnly bool
}

// watch watches the keys of bucket kv that match o.filter, as kv.Watch
// does (the current values, then a nil entry, then the changes), over an
// ordered pull consumer (see WatchBytes). The values come on Updates in
// stream order; Stop ends the watch and closes Updates.
//
// The current values are pulled a count at a time (watchBatch: a byte
// limit loses values there), sized by the stream's average message; the
// changes after them on a consumer of their own, a byte limit at a time
// (goLive): a burst of large values written after a load of small ones
// would otherwise have been pulled thousands at a time, past the
// connection's pending limit.
func (s *Store) watch(ctx context.Context, kv jetstream.KeyValue, o watchOpts) (jetstream.KeyWatcher, error) {
	bucket := kv.Bucket()
	stream, prefix, filter := "KV_"+bucket, "$KV."+bucket+".", cmp.Or(o.filter, ">")
	batch := maxWatchBatch // headers only: a few hundred bytes each
	if !o.keysOnly {
		var err error
		if batch, err = s.watchBatch(ctx, stream); err != nil {
			return nil, fmt.Errorf("kvstore: watch %s %s: %w", bucket, filter, err)
		}
	}
	w := &pullWatch{
		js:            s.js,
		stream:        stream,
		bucket:        bucket,
		prefix:        prefix,
		filter:        prefix + filter,
		ignoreDeletes: o.ignoreDeletes,
		keysOnly:      o.keysOnly,
		updates:       make(chan jetstream.KeyValueEntry, watchBuffer),
		stop:          make(chan struct{}),
	}
	w.life, w.end = context.WithCancel(context.Background())
	cons, err := s.js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{w.filter},
		DeliverPolicy:  jetstream.DeliverLastPerSubjectPolicy,
		HeadersOnly:    o.keysOnly,
	})
	if err != nil {
		w.end()
		return nil, fmt.Errorf("kvstore: watch %s %s: %w", bucket, filter, err)
	}
	// The first values wait for the count of initial values (w.mu).
	w.mu.Lock()
	defer w.mu.Unlock()
	cc, err := cons.Consume(w.taker(0), jetstream.PullMaxMessages(batch), jetstream.ConsumeErrHandler(w.onError))
	if err != nil {
		w.end()
		_ = w.deleteConsumer(cons)
		return nil, fmt.Errorf("kvstore: watch %s %s: %w", bucket, filter, err)
	}
	w.cons, w.cc = cons, cc
	if info := cons.CachedInfo(); info != nil {
		w.initial = info.NumPending
	}
	if w.initial == 0 {
		w.updates <- nil // a fresh channel: room for it
		w.loaded()
	}
	return w, nil
}

// watchBatch is how many values a watch of stream pulls at a time: about
// WatchBytes of the stream's messages of average size, within
// [minWatchBatch, maxWatchBatch]. A count, not a byte limit: nats-server
// 2.15.3 loses a message of a consumer delivering the last value per
// subject (a watch's initial values) whenever a pull's byte limit is
// reached before it: the pull ends ("409 Message Size Exceeds MaxBytes"),
// the message is put back, but its place in the consumer's list of last
// values is not, and the next pull starts after it. A watch of 2,560 values
// pulled 4 MiB at a time went without 19 of them (TestWatchDeliversEveryValue).
func (s *Store) watchBatch(ctx context.Context, stream string) (int, error) {
	st, err := s.js.Stream(ctx, stream)
	if err != nil {
		return 0, err
	}
	state := st.CachedInfo().State
	if state.Msgs == 0 {
		return maxWatchBatch, nil
	}
	// A delivered message carries its consumer's reply subject too.
	avg := state.Bytes/state.Msgs + watchReplyBytes
	return int(min(max(WatchBytes/avg, minWatchBatch), maxWatchBatch)), nil
}

// The bounds of a watch's batch, and what a delivered message's reply
// subject adds to its stored size.
const (
	minWatchBatch   = 16
	maxWatchBatch   = 8192
	watchReplyBytes = 128
)

// watchBuffer is how many entries a watch holds for its reader, as
// nats.go's own watches do.
const watchBuffer = 256

// pullWatch is a jetstream.KeyWatcher over an ordered pull consumer (see
// Store.watch).
type pullWatch struct {
	js            jetstream.JetStream
	stream        string
	bucket        string
	prefix        string
	filter        string // the consumers' subject filter
	ignoreDeletes bool
	keysOnly      bool
	updates       chan jetstream.KeyValueEntry

	// mu guards the consumer and what has been taken from it. A message
	// is taken under mu and sent under send, taken before mu is let go,
	// so that the messages of two consumers (the ordered consumer's reset,
	// or the live phase's, goLive) reach the reader in the order taken.
	mu       sync.Mutex
	cons     jetstream.Consumer
	cc       jetstream.ConsumeContext
	gen      int    // the current consume's; a message of an earlier one is dropped
	last     uint64 // stream sequence of the last message taken
	initial  uint64 // initial values (the consumer's pending at its creation)
	received uint64
	initDone bool
	stopped  bool
	live     sync.WaitGroup // goLive

	// life ends when the watch stops (end): goLive's requests with it.
	life context.Context
	end  context.CancelFunc

	send     sync.Mutex
	stop     chan struct{}
	stopOnce sync.Once
	closed   bool // under send: Updates is closed
}

// Updates returns the entries: the current values, a nil entry once they
// are all delivered, then the changes.
func (w *pullWatch) Updates() <-chan jetstream.KeyValueEntry { return w.updates }

// Stop ends the watch: Updates is closed, and its consumer is deleted
// (on a connection that is up; otherwise, or should the delete fail, the
// server deletes it once it has been inactive for a while).
func (w *pullWatch) Stop() error {
	var err error
	w.stopOnce.Do(func() {
		w.mu.Lock()
		w.stopped = true // no goLive from now on
		w.mu.Unlock()
		close(w.stop) // a sender waiting on its reader gives up
		w.end()       // goLive ends
		w.live.Wait()
		w.mu.Lock()
		cons, cc := w.cons, w.cc
		w.mu.Unlock()
		if cc != nil {
			cc.Stop()
		}
		w.send.Lock()
		w.closed = true
		close(w.updates)
		w.send.Unlock()
		if cons != nil {
			err = w.deleteConsumer(cons)
		}
	})
	return err
}

// deleteConsumer deletes the server's consumer of cons, if the
// connection is up.
func (w *pullWatch) deleteConsumer(cons jetstream.Consumer) error {
	info := cons.CachedInfo()
	if info == nil || !w.js.Conn().IsConnected() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
	defer cancel()
	if err := w.js.DeleteConsumer(ctx, w.stream, info.Name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("kvstore: watch of %s stopped, its consumer %s not deleted: %w", w.bucket, info.Name, err)
	}
	return nil
}

// deleteTimeout bounds the wait for a stopped watch's consumer to be
// deleted.
const deleteTimeout = 2 * time.Second

// onError ends the watch when its connection is closed for good, as
// nats.go's watches do; other errors (missed heartbeats, a consumer
// deleted) the ordered consumer recovers from by itself.
func (w *pullWatch) onError(_ jetstream.ConsumeContext, err error) {
	if errors.Is(err, jetstream.ErrConnectionClosed) {
		go func() { _ = w.Stop() }()
	}
}

// loaded is called, under mu, once the initial values are all taken: the
// changes after them are pulled a byte limit at a time (goLive), but for a
// keys-only watch, whose messages carry no values.
func (w *pullWatch) loaded() {
	w.initDone = true
	if !w.keysOnly && !w.stopped {
		w.live.Go(w.goLive)
	}
}

// goLive moves the watch onto a consumer that pulls the changes after the
// last message taken a byte limit at a time, retrying (with backoff) until
// it starts or the watch stops, as an ordered consumer's own reset does.
// The consumer of the initial values is stopped first and its later
// messages dropped: left running until the new one starts, its pull of a
// count would take in a burst of large values written meanwhile. The new
// one starts after the last message taken, so none is lost or sent twice.
func (w *pullWatch) goLive() {
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	w.gen++
	old, oldCC := w.cons, w.cc
	w.cons, w.cc = nil, nil
	w.mu.Unlock()
	oldCC.Stop()
	_ = w.deleteConsumer(old) // or the server's inactivity threshold does
	b := backoff.NewExponentialBackOff(backoff.WithInitialInterval(100*time.Millisecond), backoff.WithMaxInterval(5*time.Second), backoff.WithMaxElapsedTime(0))
	for {
		err := w.startLive()
		if err == nil || w.life.Err() != nil {
			return
		}
		select {
		case <-w.life.Done():
			return
		case <-time.After(b.NextBackOff()):
		}
	}
}

// startLive starts the live phase's consumer after the last message taken.
func (w *pullWatch) startLive() error {
	w.mu.Lock()
	from := w.last + 1
	w.mu.Unlock()
	// Not cut short by the watch's Stop: a consumer the server made after
	// its request was given up would be left behind; made, it is deleted
	// below when the watch has stopped meanwhile.
	ctx, cancel := context.WithTimeout(context.Background(), liveCreateTimeout)
	defer cancel()
	cons, err := w.js.OrderedConsumer(ctx, w.stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{w.filter},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    from,
	})
	if err != nil {
		return err
	}
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		_ = w.deleteConsumer(cons)
		return nil
	}
	cc, err := cons.Consume(w.taker(w.gen), jetstream.PullMaxMessagesWithBytesLimit(maxWatchBatch, PullBytes(w.js.Conn())), jetstream.ConsumeErrHandler(w.onError))
	if err != nil {
		w.mu.Unlock()
		_ = w.deleteConsumer(cons)
		return err
	}
	w.cons, w.cc = cons, cc
	w.mu.Unlock()
	return nil
}

// liveCreateTimeout bounds the request that makes a watch's live
// consumer.
const liveCreateTimeout = 5 * time.Second

// PullBytes is the byte limit of a pull of whole messages from a stream
// that anyone may write large values into (not of a last-value-per-key
// load, see watchBatch): WatchBytes, or more when the server of nc takes
// messages larger than that (a limit below a message's size would stall
// the pull there). A pull bounded by a count alone can bring a
// connection a count of the largest messages at once, past the server's
// limit of pending bytes.
func PullBytes(nc *nats.Conn) int {
	return max(WatchBytes, int(nc.MaxPayload())+pullHeaderBytes)
}

// pullHeaderBytes is what a message's subject, reply subject and headers
// add to its payload, at most (the server's headers are within 64 KiB).
const pullHeaderBytes = 64 << 10

// taker is the message handler of the consume of generation gen.
func (w *pullWatch) taker(gen int) jetstream.MessageHandler {
	return func(m jetstream.Msg) { w.take(gen, m) }
}

// take turns a message into an entry and hands it to the reader, with the
// nil entry after the last initial value. A message of an earlier
// consume than the current one is dropped (goLive).
func (w *pullWatch) take(gen int, m jetstream.Msg) {
	meta, ok := deliveryOf(m.Reply())
	if !ok {
		md, err := m.Metadata() // a form deliveryOf does not know
		if err != nil {
			return
		}
		meta = delivery{seq: md.Sequence.Stream, at: md.Timestamp.UnixNano(), pending: md.NumPending}
	}
	if len(m.Subject()) <= len(w.prefix) {
		return
	}
	op := opOf(m.Headers())
	var e jetstream.KeyValueEntry
	if !w.ignoreDeletes || op == jetstream.KeyValuePut {
		e = &watchEntry{
			bucket:   w.bucket,
			key:      m.Subject()[len(w.prefix):],
			value:    m.Data(),
			revision: meta.seq,
			created:  time.Unix(0, meta.at),
			delta:    meta.pending,
			op:       op,
		}
	}
	w.mu.Lock()
	if gen != w.gen || meta.seq <= w.last {
		w.mu.Unlock()
		return
	}
	w.last = meta.seq
	last := false
	if !w.initDone {
		w.received++
		if w.received >= w.initial || meta.pending == 0 {
			last = true
			w.loaded()
		}
	}
	w.send.Lock()
	w.mu.Unlock()
	defer w.send.Unlock()
	if e != nil && !w.deliver(e) {
		return
	}
	if last {
		w.deliver(nil)
	}
}

// deliver sends e to the reader unless the watch stops first. Under
// w.send.
func (w *pullWatch) deliver(e jetstream.KeyValueEntry) bool {
	if w.closed {
		return false
	}
	select {
	case w.updates <- e:
		return true
	case <-w.stop:
		return false
	}
}

// opOf is what a KV message with headers h is: a put, or a delete or
// purge by its operation header or, for a marker the server wrote, its
// reason.
func opOf(h nats.Header) jetstream.KeyValueOp {
	if len(h) == 0 {
		return jetstream.KeyValuePut
	}
	switch h.Get("KV-Operation") {
	case "DEL":
		return jetstream.KeyValueDelete
	case "PURGE":
		return jetstream.KeyValuePurge
	case "":
	default:
		return jetstream.KeyValuePut
	}
	switch h.Get(jetstream.MarkerReasonHeader) {
	case "MaxAge", "Purge":
		return jetstream.KeyValuePurge
	case "Remove":
		return jetstream.KeyValueDelete
	}
	return jetstream.KeyValuePut
}

// watchEntry is a value a pullWatch delivers.
type watchEntry struct {
	bucket   string
	key      string
	value    []byte
	revision uint64
	created  time.Time
	delta    uint64
	op       jetstream.KeyValueOp
}

func (e *watchEntry) Bucket() string                  { return e.bucket }
func (e *watchEntry) Key() string                     { return e.key }
func (e *watchEntry) Value() []byte                   { return e.value }
func (e *watchEntry) Revision() uint64                { return e.revision }
func (e *watchEntry) Created() time.Time              { return e.created }
func (e *watchEntry) Delta() uint64                   { return e.delta }
func (e *watchEntry) Operation() jetstream.KeyValueOp { return e.op }
