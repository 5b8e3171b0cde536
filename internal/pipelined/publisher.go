package pipelined

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/natserr"
)

// DefaultMaxPending is how many publishes a Publisher leaves
// unacknowledged before Publish waits for room: nats.go's default
// (jetstream.WithPublishAsyncMaxPending).
const DefaultMaxPending = 4000

// DefaultTimeout is how long a Publisher keeps waiting for an
// acknowledgement before it fails the publish: longer than the waiters'
// own bound (pipeline.AckWait, 5 s), so that it only frees what a lost
// acknowledgement (a reconnect) would otherwise keep for ever.
const DefaultTimeout = 10 * time.Second

// ErrClosed fails the publishes still waiting when a Publisher is closed,
// and the ones sent after it.
var ErrClosed = errors.New("pipelined: publisher closed")

// ErrWrongStream fails a PublishTo acknowledged by another stream than the
// one named: the message's subject is captured by that stream now.
var ErrWrongStream = errors.New("pipelined: acknowledged by another stream")

// Publisher sends JetStream publishes on one connection without waiting
// for their acknowledgements, as js.PublishMsgAsync does, for the engine's
// hot paths (a window's fires, its state records). It differs in what it
// costs per message: the acknowledgement is read by a parser of the
// server's PubAck rather than by encoding/json (see parseAck), the reply
// subjects are numbered rather than drawn at random, and one timer for
// all pending publishes fails those unacknowledged past Timeout, not one
// timer each. A message's headers say what the stream must check
// (jetstream.MsgIDHeader, ExpectedStreamHdr, ExpectedLastSubjSeqHeader,
// MsgTTLHeader): set them before Publish.
//
// Its reply subscription, made at the first Publish on a reply subject
// under the connection's inbox prefix, lasts until Close or until the
// connection closes. When the connection is lost, the publishes still
// waiting fail at once with nats.ErrDisconnected, as nats.go's own async
// publisher does: their acknowledgements, if any, went to the lost
// connection, and waiting out Timeout for them held a fleet's schedules
// back 10-15 s after each reconnect (integration/links). It is safe for
// concurrent use.
type Publisher struct {
	nc         *nats.Conn
	maxPending int
	interval   time.Duration // Timeout / 2: the sweep's period

	mu      sync.Mutex
	sub     *nats.Subscription
	prefix  string // the reply subjects' prefix, ending in '.'
	next    uint64 // the next reply number
	pending map[uint64]*future
	room    chan struct{} // closed once pending is below maxPending
	sweep   *time.Timer   // armed while anything is pending
	gen     uint64        // sweeps so far
	closed  bool
	status  chan nats.Status // the connection's losses (watchStatus), once subscribed
	watched chan struct{}    // closed when watchStatus returns

	stream string // the stream name of the last acknowledgement (the reply handler's own)
}

// NewPublisher returns a Publisher on nc that leaves at most maxPending
// publishes unacknowledged (DefaultMaxPending when 0) and fails a publish
// unacknowledged for timeout (DefaultTimeout when 0; 1 to 1.5 times it).
func NewPublisher(nc *nats.Conn, maxPending int, timeout time.Duration) *Publisher {
	if maxPending <= 0 {
		maxPending = DefaultMaxPending
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Publisher{nc: nc, maxPending: maxPending, interval: timeout / 2, pending: map[uint64]*future{}}
}

// future is one publish waiting for its acknowledgement: exactly one of
// ok and err receives, once.
type future struct {
	msg    *nats.Msg
	stream string // the stream it must be stored in (PublishTo), or ""
	gen    uint64 // the sweep generation it was sent in
	ok     chan *jetstream.PubAck
	err    chan error
}

func (f *future) Ok() <-chan *jetstream.PubAck { return f.ok }
func (f *future) Err() <-chan error            { return f.err }
func (f *future) Msg() *nats.Msg               { return f.msg }

// Publish sends m with a reply subject of the Publisher's own and returns
// the future of its acknowledgement. While maxPending publishes are
// unacknowledged it waits for room, until ctx ends. m itself is not
// changed (m.Reply must be empty).
func (p *Publisher) Publish(ctx context.Context, m *nats.Msg) (jetstream.PubAckFuture, error) {
	return p.PublishTo(ctx, m, "")
}

// PublishTo is Publish for a message that must be stored in stream (""
// for any): an acknowledgement from another stream fails the future with
// ErrWrongStream. It checks what a Nats-Expected-Stream header would have
// the server check, after the fact: the message is then stored in that
// other stream, where the header would have kept it out. The header is
// stored with the message and delivered with it to every consumer, and
// costs the server a look-up per message; a fire carries none (without
// it a herd's drain went from 0.91x to 0.97x the server's @at, and its CPU
// from 1.62x to 1.48x, medians of 16 rounds, 5 December), and a fire's
// subject is in another stream only when an operator moved it there.
func (p *Publisher) PublishTo(ctx context.Context, m *nats.Msg, stream string) (jetstream.PubAckFuture, error) {
	if m.Reply != "" {
		return nil, jetstream.ErrAsyncPublishReplySubjectSet
	}
	f := &future{msg: m, stream: stream, ok: make(chan *jetstream.PubAck, 1), err: make(chan error, 1)}
	id, reply, err := p.register(ctx, f)
	if err != nil {
		return nil, err
	}
	if err := p.nc.PublishMsg(&nats.Msg{Subject: m.Subject, Reply: reply, Header: m.Header, Data: m.Data}); err != nil {
		p.mu.Lock()
		delete(p.pending, id)
		p.makeRoom()
		p.mu.Unlock()
		return nil, err
	}
	return f, nil
}

// register numbers f and adds it to the pending publishes, once there is
// room, and returns its number and reply subject.
func (p *Publisher) register(ctx context.Context, f *future) (uint64, string, error) {
	p.mu.Lock()
	for {
		if p.closed {
			p.mu.Unlock()
			return 0, "", ErrClosed
		}
		if p.sub == nil {
			if err := p.subscribe(); err != nil {
				p.mu.Unlock()
				return 0, "", err
			}
		}
		if len(p.pending) < p.maxPending {
			break
		}
		if p.room == nil {
			p.room = make(chan struct{})
		}
		room := p.room
		p.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return 0, "", fmt.Errorf("waiting for room among %d unacknowledged publishes: %w", p.maxPending, ctx.Err())
		}
		p.mu.Lock()
	}
	id := p.next
	p.next++
	f.gen = p.gen
	p.pending[id] = f
	if p.sweep == nil {
		p.sweep = time.AfterFunc(p.interval, p.expire)
	} else if len(p.pending) == 1 {
		p.sweep.Reset(p.interval)
	}
	reply := strconv.AppendUint([]byte(p.prefix), id, 10)
	p.mu.Unlock()
	return id, string(reply), nil
}

// subscribe makes the reply subscription, and starts watching the
// connection for losses. p.mu is held.
func (p *Publisher) subscribe() error {
	prefix := p.nc.NewInbox() + "."
	sub, err := p.nc.Subscribe(prefix+"*", func(m *nats.Msg) { p.answer(prefix, m) })
	if err != nil {
		return fmt.Errorf("pipelined: subscribe to the acknowledgements: %w", err)
	}
	p.sub, p.prefix = sub, prefix
	if p.status == nil {
		p.status, p.watched = p.nc.StatusChanged(nats.RECONNECTING, nats.CLOSED), make(chan struct{})
		go p.watchStatus(p.status, p.watched)
	}
	return nil
}

// watchStatus fails the pending publishes each time the connection is
// lost (RECONNECTING), until it closes or Close removes the listener.
// Publishes made after the loss go out once it reconnects, and their
// acknowledgements come to the resubscribed reply subject.
func (p *Publisher) watchStatus(ch chan nats.Status, done chan struct{}) {
	defer close(done)
	for st := range ch {
		if st == nats.CLOSED {
			return
		}
		p.failPending(nats.ErrDisconnected)
	}
}

// failPending fails every pending publish with err.
func (p *Publisher) failPending(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, f := range p.pending {
		delete(p.pending, id)
		f.err <- err
	}
	p.makeRoom()
}

// answer settles the publish an acknowledgement is for; prefix is the
// subscription's.
func (p *Publisher) answer(prefix string, m *nats.Msg) {
	if len(m.Subject) <= len(prefix) {
		return
	}
	id, err := strconv.ParseUint(m.Subject[len(prefix):], 10, 64)
	if err != nil {
		return
	}
	p.mu.Lock()
	f := p.pending[id]
	delete(p.pending, id)
	p.makeRoom()
	p.mu.Unlock()
	if f == nil {
		return // failed at its timeout, or at Close
	}
	if len(m.Data) == 0 && m.Header.Get("Status") == "503" {
		f.err <- jetstream.ErrNoStreamResponse
		return
	}
	ack, err := parseAck(m.Data, p.stream)
	if err != nil {
		f.err <- err
		return
	}
	p.stream = ack.Stream
	if f.stream != "" && ack.Stream != f.stream {
		f.err <- fmt.Errorf("%w: %s, not %s (sequence %d)", ErrWrongStream, ack.Stream, f.stream, ack.Sequence)
		return
	}
	f.ok <- ack
}

// expire is the sweep, every Timeout/2 while anything is pending: it
// fails the publishes sent before the sweep three sweeps ago or earlier
// (so at least Timeout ago), and runs again while any is pending.
func (p *Publisher) expire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gen++
	for id, f := range p.pending {
		if f.gen+3 <= p.gen {
			delete(p.pending, id)
			f.err <- jetstream.ErrAsyncPublishTimeout
		}
	}
	p.makeRoom()
	if len(p.pending) > 0 && !p.closed {
		p.sweep.Reset(p.interval)
	}
}

// makeRoom wakes the publishes waiting for room once there is some. p.mu
// is held.
func (p *Publisher) makeRoom() {
	if p.room != nil && len(p.pending) < p.maxPending {
		close(p.room)
		p.room = nil
	}
}

// Pending is how many publishes wait for their acknowledgements.
func (p *Publisher) Pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pending)
}

// Close fails the publishes still pending with ErrClosed, ends the reply
// subscription and refuses any later Publish.
func (p *Publisher) Close() {
	p.mu.Lock()
	status, watched := p.status, p.watched
	p.mu.Unlock()
	if status != nil {
		p.nc.RemoveStatusListener(status) // closes it: watchStatus returns
		<-watched
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	if p.sweep != nil {
		p.sweep.Stop()
	}
	if p.sub != nil {
		_ = p.sub.Unsubscribe()
	}
	for id, f := range p.pending {
		delete(p.pending, id)
		f.err <- ErrClosed
	}
	if p.room != nil {
		close(p.room)
		p.room = nil
	}
}

// AwaitRevision is the new revision of a conditional write (a KV update,
// Nats-Expected-Last-Subject-Sequence) sent as f, or the error of sending
// it (sendErr), or why it failed: a write that lost to another is
// jetstream.ErrKeyRevisionMismatch, as from kv.Update. ctx bounds the
// wait.
func AwaitRevision(ctx context.Context, f jetstream.PubAckFuture, sendErr error) (uint64, error) {
	if sendErr != nil {
		return 0, sendErr
	}
	select {
	case ack := <-f.Ok():
		return ack.Sequence, nil
	case err := <-f.Err():
		if natserr.WrongLastSequence(err) {
			return 0, fmt.Errorf("%w: %v", jetstream.ErrKeyRevisionMismatch, err)
		}
		return 0, err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}
