package pipelined_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/pipelined"
	"github.com/jetsched/jetsched/internal/testwait"
)

// await is f's acknowledgement or error, failing the test when neither
// comes within 10 s.
func await(t *testing.T, f jetstream.PubAckFuture) (*jetstream.PubAck, error) {
	t.Helper()
	select {
	case ack := <-f.Ok():
		return ack, nil
	case err := <-f.Err():
		return nil, err
	case <-time.After(10 * time.Second):
		t.Fatalf("publish to %s neither acknowledged nor failed within 10s", f.Msg().Subject)
		return nil, nil
	}
}

func newStream(t *testing.T, js jetstream.JetStream, name, subjects string) {
	t.Helper()
	if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{Name: name, Subjects: []string{subjects}, Duplicates: time.Minute}); err != nil {
		t.Fatal(err)
	}
}

// Every publish of a window far larger than the pending limit lands and
// gets its own acknowledgement: its own sequence, and the duplicate of a
// message id already stored is reported as one.
func TestPublisherAcknowledgesEachPublish(t *testing.T) {
	srv := natstest.Start(t)
	nc, js := srv.Connect(t)
	newStream(t, js, "P", "p.>")
	p := pipelined.NewPublisher(nc, 64, 0)
	defer p.Close()
	ctx := context.Background()
	const n = 3000
	futs := make([]jetstream.PubAckFuture, n)
	for i := range n {
		m := nats.NewMsg(fmt.Sprintf("p.%d", i%1000))
		m.Data = []byte(fmt.Sprint(i))
		m.Header.Set(jetstream.MsgIDHeader, fmt.Sprint(i%2000)) // the last 1,000 are duplicates of the first
		m.Header.Set(jetstream.ExpectedStreamHeader, "P")
		f, err := p.Publish(ctx, m)
		if err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
		futs[i] = f
	}
	acks := make([]*jetstream.PubAck, n)
	for i, f := range futs {
		ack, err := await(t, f)
		if err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
		if ack.Stream != "P" || ack.Duplicate != (i >= 2000) {
			t.Fatalf("publish %d acknowledged as %+v", i, ack)
		}
		acks[i] = ack
	}
	seen := map[uint64]bool{}
	for i, ack := range acks {
		switch {
		case i >= 2000 && ack.Sequence != acks[i-2000].Sequence:
			t.Fatalf("duplicate %d acknowledged with sequence %d, its original has %d", i, ack.Sequence, acks[i-2000].Sequence)
		case i < 2000 && seen[ack.Sequence]:
			t.Fatalf("publish %d: sequence %d acknowledged twice", i, ack.Sequence)
		}
		seen[ack.Sequence] = true
	}
	if p.Pending() != 0 {
		t.Fatalf("%d publishes still pending after every acknowledgement", p.Pending())
	}
}

// PublishTo takes an acknowledgement from the stream it names, and fails
// the future of one from another stream (the message is stored there: the
// subject is that stream's now) with ErrWrongStream, naming both streams;
// the same Publisher's other publishes are untouched.
func TestPublishToChecksTheAcknowledgingStream(t *testing.T) {
	srv := natstest.Start(t)
	nc, js := srv.Connect(t)
	newStream(t, js, "P", "p.>")
	newStream(t, js, "Q", "q.>")
	p := pipelined.NewPublisher(nc, 0, 0)
	defer p.Close()
	ctx := context.Background()
	for _, c := range []struct {
		subject, stream string
		wrong           bool
	}{
		{"p.a", "P", false},
		{"q.a", "P", true},
		{"q.b", "", false}, // no stream named: any
		{"q.c", "Q", false},
		{"p.b", "Q", true},
	} {
		f, err := p.PublishTo(ctx, nats.NewMsg(c.subject), c.stream)
		if err != nil {
			t.Fatalf("%s to %q: %v", c.subject, c.stream, err)
		}
		ack, err := await(t, f)
		switch {
		case c.wrong && (!errors.Is(err, pipelined.ErrWrongStream) || !strings.Contains(err.Error(), c.stream)):
			t.Fatalf("%s to %q: acknowledged %+v, error %v: want ErrWrongStream naming %s", c.subject, c.stream, ack, err, c.stream)
		case !c.wrong && (err != nil || ack.Stream != strings.ToUpper(c.subject[:1])):
			t.Fatalf("%s to %q: acknowledged %+v, error %v", c.subject, c.stream, ack, err)
		}
	}
}

// What the stream refuses comes back as nats.go gives it: a conditional
// write that lost as "wrong last sequence", a message for another stream
// as its API error, and a subject no stream takes as no response.
func TestPublisherReportsRefusals(t *testing.T) {
	srv := natstest.Start(t)
	nc, js := srv.Connect(t)
	newStream(t, js, "P", "p.>")
	p := pipelined.NewPublisher(nc, 0, 0)
	defer p.Close()
	ctx := context.Background()

	lost := nats.NewMsg("p.k")
	lost.Header.Set(jetstream.ExpectedLastSubjSeqHeader, "5")
	other := nats.NewMsg("p.k")
	other.Header.Set(jetstream.ExpectedStreamHeader, "Q")
	nowhere := nats.NewMsg("q.k")
	for _, c := range []struct {
		name string
		m    *nats.Msg
		is   func(error) bool
	}{
		{"conditional write that lost", lost, natserr.WrongLastSequence},
		{"another stream", other, func(err error) bool {
			var api *jetstream.APIError
			return errors.As(err, &api) && api.ErrorCode == 10060 // expected stream does not match
		}},
		{"no stream", nowhere, func(err error) bool { return errors.Is(err, jetstream.ErrNoStreamResponse) }},
	} {
		f, err := p.Publish(ctx, c.m)
		if err != nil {
			t.Fatalf("%s: publish: %v", c.name, err)
		}
		if _, err := await(t, f); !c.is(err) {
			t.Fatalf("%s: error %v", c.name, err)
		}
	}
	// Past the size limits: a payload over the server's max_payload is
	// refused at once, a header over 64 KB by the stream; both are
	// natserr.Permanent, so no one publishes them again.
	big := nats.NewMsg("p.big")
	big.Data = make([]byte, nc.MaxPayload()+1)
	if _, err := p.Publish(ctx, big); !natserr.Permanent(err) {
		t.Fatalf("a payload past max_payload: %v, want a refusal for good", err)
	}
	wide := nats.NewMsg("p.wide")
	wide.Header.Set("X-Wide", strings.Repeat("h", 65*1024))
	if f, err := p.Publish(ctx, wide); !natserr.Permanent(err) {
		if err != nil {
			t.Fatalf("a header past 64 KB: %v", err)
		}
		if _, err := await(t, f); !natserr.Permanent(err) {
			t.Fatalf("a header past 64 KB: %v, want a refusal for good", err)
		}
	}
	// AwaitRevision gives a lost conditional write as kv.Update does.
	again := nats.NewMsg("p.k")
	again.Header.Set(jetstream.ExpectedLastSubjSeqHeader, "5")
	f, err := p.Publish(ctx, again)
	if _, err := pipelined.AwaitRevision(ctx, f, err); !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		t.Fatalf("a conditional write that lost, awaited: %v", err)
	}
	first := nats.NewMsg("p.new")
	first.Header.Set(jetstream.ExpectedLastSubjSeqHeader, "0")
	f, err = p.Publish(ctx, first)
	if rev, err := pipelined.AwaitRevision(ctx, f, err); err != nil || rev == 0 {
		t.Fatalf("a conditional write that won, awaited: revision %d, %v", rev, err)
	}
	if _, err := p.Publish(ctx, &nats.Msg{Subject: "p.k", Reply: "mine"}); !errors.Is(err, jetstream.ErrAsyncPublishReplySubjectSet) {
		t.Fatalf("a message with a reply subject of its own: %v", err)
	}
}

// hold subscribes to subject without ever answering, as a stream that
// lost its acknowledgements would; the messages it got come on the
// channel.
func hold(t *testing.T, nc *nats.Conn, subject string) <-chan *nats.Msg {
	t.Helper()
	got := make(chan *nats.Msg, 64)
	sub, err := nc.ChanSubscribe(subject, got)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return got
}

// receive is the next message on got, within 10 s.
func receive(t *testing.T, got <-chan *nats.Msg) *nats.Msg {
	t.Helper()
	select {
	case m := <-got:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no message within 10s")
		return nil
	}
}

// With its limit of publishes unacknowledged, Publish waits for room: it
// gives up when its context ends, and goes on once an acknowledgement
// comes. The replies go under the connection's own inbox prefix (a
// least-privilege user's).
func TestPublisherWaitsForRoom(t *testing.T) {
	srv := natstest.Start(t)
	nc, err := nats.Connect(srv.URL(), nats.CustomInboxPrefix("_INBOX_tenant"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	got := hold(t, nc, "h.>")
	p := pipelined.NewPublisher(nc, 2, 0)
	defer p.Close()
	ctx := context.Background()
	first, err := p.Publish(ctx, nats.NewMsg("h.1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Publish(ctx, nats.NewMsg("h.2")); err != nil {
		t.Fatal(err)
	}
	m := receive(t, got)
	if !strings.HasPrefix(m.Reply, "_INBOX_tenant.") {
		t.Fatalf("reply subject %q, not under the connection's inbox prefix", m.Reply)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := p.Publish(short, nats.NewMsg("h.3")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a third publish with two unacknowledged: %v, want it to wait until its context ends", err)
	}
	third := make(chan error, 1)
	go func() {
		_, err := p.Publish(ctx, nats.NewMsg("h.3"))
		third <- err
	}()
	if err := m.Respond([]byte(`{"stream":"H","seq":1}`)); err != nil {
		t.Fatal(err)
	}
	if ack, err := await(t, first); err != nil || ack.Sequence != 1 || ack.Stream != "H" {
		t.Fatalf("first publish: %+v, %v", ack, err)
	}
	select {
	case err := <-third:
		if err != nil {
			t.Fatalf("third publish once there is room: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the third publish still waits for room after an acknowledgement")
	}
}

// A publish never acknowledged fails after the timeout (the sweep frees
// it), and Close fails what is still pending and refuses what comes
// after.
func TestPublisherTimesOutAndCloses(t *testing.T) {
	srv := natstest.Start(t)
	nc, _ := srv.Connect(t)
	hold(t, nc, "h.>")
	p := pipelined.NewPublisher(nc, 0, 200*time.Millisecond)
	ctx := context.Background()
	f, err := p.Publish(ctx, nats.NewMsg("h.1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := await(t, f); !errors.Is(err, jetstream.ErrAsyncPublishTimeout) {
		t.Fatalf("an unacknowledged publish: %v, want a timeout", err)
	}
	if n := p.Pending(); n != 0 {
		t.Fatalf("%d pending after the timeout", n)
	}
	// After an idle spell the sweep starts again with the next publish.
	f, err = p.Publish(ctx, nats.NewMsg("h.2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := await(t, f); !errors.Is(err, jetstream.ErrAsyncPublishTimeout) {
		t.Fatalf("an unacknowledged publish after an idle spell: %v, want a timeout", err)
	}
	held, err := p.Publish(ctx, nats.NewMsg("h.3"))
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	if _, err := await(t, held); !errors.Is(err, pipelined.ErrClosed) {
		t.Fatalf("pending at Close: %v", err)
	}
	if _, err := p.Publish(ctx, nats.NewMsg("h.4")); !errors.Is(err, pipelined.ErrClosed) {
		t.Fatalf("publish after Close: %v", err)
	}
}

// A server restart in the middle of a burst: every publish is settled,
// acknowledged or failed (a lost acknowledgement by the sweep), none is
// left pending, and publishing goes on over the reconnected connection.
func TestPublisherAcrossAServerRestart(t *testing.T) {
	srv := natstest.Start(t)
	nc, js := srv.Connect(t)
	newStream(t, js, "P", "p.>")
	p := pipelined.NewPublisher(nc, 0, time.Second)
	defer p.Close()
	ctx := context.Background()
	var futs []jetstream.PubAckFuture
	for i := range 400 {
		if i == 200 {
			srv.Restart()
		}
		f, err := p.Publish(ctx, nats.NewMsg(fmt.Sprintf("p.%d", i)))
		if err != nil {
			continue // refused while the connection was down: nothing pending
		}
		futs = append(futs, f)
	}
	acked := 0
	for _, f := range futs {
		if _, err := await(t, f); err == nil {
			acked++
		}
	}
	if n := p.Pending(); n != 0 {
		t.Fatalf("%d publishes pending after every future settled", n)
	}
	if acked == 0 {
		t.Fatal("no publish of the burst acknowledged")
	}
	publishesAgain(t, p, "the restart")
}

// publishesAgain waits until a publish on p is acknowledged after what
// (a restart, a reconnection).
func publishesAgain(t *testing.T, p *pipelined.Publisher, what string) {
	t.Helper()
	err := testwait.Until(20*time.Second, "a publish acknowledged after "+what, func() error {
		f, err := p.Publish(context.Background(), nats.NewMsg("p.after"))
		if err != nil {
			return err
		}
		_, err = await(t, f)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A publish whose acknowledgement the lost connection took fails with
// nats.ErrDisconnected as soon as the connection is lost, not after the
// timeout (an hour here); a publish made after the reconnection is
// acknowledged. Before, the wait held a fleet's schedules back 10-15 s
// after every reconnect (integration/links, latency-200ms: p99 15.07 s).
func TestPublisherFailsPendingWhenTheConnectionIsLost(t *testing.T) {
	srv := natstest.Start(t)
	nc, js := srv.Connect(t)
	newStream(t, js, "P", "p.>")
	hold(t, nc, "h.>")
	p := pipelined.NewPublisher(nc, 0, time.Hour)
	defer p.Close()
	ctx := context.Background()
	lost, err := p.Publish(ctx, nats.NewMsg("h.1")) // never answered
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.ForceReconnect(); err != nil {
		t.Fatal(err)
	}
	if _, err := await(t, lost); !errors.Is(err, nats.ErrDisconnected) {
		t.Fatalf("a publish pending when the connection was lost: %v, want nats.ErrDisconnected", err)
	}
	publishesAgain(t, p, "the reconnection")
}
