package faulttest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// FireReader reads the fire stream in order, from its first message, with
// an ordered consumer (headers only). Each Sync delivers the messages
// stored since the last one and resumes after the last message read, on
// any connection (Use). It is used from one goroutine.
type FireReader struct {
	stream string
	js     jetstream.JetStream
	cons   jetstream.Consumer
	next   uint64 // next stream sequence to read
}

// NewFireReader reads stream (SCHED_FIRES) through js.
func NewFireReader(js jetstream.JetStream, stream string) *FireReader {
	return &FireReader{stream: stream, js: js, next: 1}
}

// Use reads through js from now on (another connection, another server).
func (r *FireReader) Use(js jetstream.JetStream) { r.js, r.cons = js, nil }

// Sync calls fn for every message stored up to now that it has not seen.
// On error the messages delivered so far stay delivered; the next Sync
// resumes after them. A fetch waits no longer than ctx allows.
func (r *FireReader) Sync(ctx context.Context, fn func(h nats.Header, md *jetstream.MsgMetadata)) error {
	s, err := r.js.Stream(ctx, r.stream)
	if err != nil {
		return fmt.Errorf("stream %s: %w", r.stream, err)
	}
	st := s.CachedInfo().State
	if st.FirstSeq > r.next {
		return fmt.Errorf("stream %s starts at sequence %d, after %d: messages were removed", r.stream, st.FirstSeq, r.next)
	}
	for r.next <= st.LastSeq {
		if r.cons == nil {
			r.cons, err = r.js.OrderedConsumer(ctx, r.stream, jetstream.OrderedConsumerConfig{
				DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
				OptStartSeq:       r.next,
				HeadersOnly:       true,
				InactiveThreshold: 10 * time.Second,
			})
			if err != nil {
				return fmt.Errorf("ordered consumer at %d: %w", r.next, err)
			}
		}
		wait := 3 * time.Second
		if dl, ok := ctx.Deadline(); ok {
			wait = min(wait, time.Until(dl))
		}
		if wait < 100*time.Millisecond {
			return fmt.Errorf("fetch at %d: %w", r.next, context.DeadlineExceeded)
		}
		// Ask for exactly the messages known to be there (at most 2000), so
		// that the fetch returns as soon as they are, not at its timeout.
		batch, err := r.cons.Fetch(int(min(st.LastSeq-r.next+1, 2000)), jetstream.FetchMaxWait(wait))
		if err != nil {
			r.cons = nil
			return fmt.Errorf("fetch at %d: %w", r.next, err)
		}
		n := 0
		for m := range batch.Messages() {
			md, err := m.Metadata()
			if err != nil || md.Sequence.Stream < r.next {
				continue
			}
			fn(m.Headers(), md)
			r.next = md.Sequence.Stream + 1
			n++
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			r.cons = nil
			return fmt.Errorf("fetch at %d: %w", r.next, err)
		}
		if n == 0 {
			r.cons = nil
			return fmt.Errorf("no message read at sequence %d (stream last %d)", r.next, st.LastSeq)
		}
	}
	return nil
}

// Summarize prints a FAULT summary line to the test log and stdout, and
// appends it to $JETSCHED_FAULT_SUMMARY when set: go test shows a passing
// package's output only with -v, so test.sh collects the lines there and
// prints them after the run.
func Summarize(t testing.TB, line string) {
	t.Helper()
	t.Log(line)
	fmt.Println(line)
	if path := os.Getenv("JETSCHED_FAULT_SUMMARY"); path != "" {
		if fh, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			fmt.Fprintln(fh, line)
			_ = fh.Close()
		}
	}
}
