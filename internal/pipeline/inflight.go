package pipeline

import (
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Inflight tracks messages published without waiting (a fire, a wakeup):
// one goroutine waits for their acknowledgements in order, AckWait at most
// each, and runs each one's follow-up with its acknowledgement. A message
// that fails or goes unacknowledged is handed to its republish function,
// in a goroutine of its own, and the follow-up runs if that succeeds.
// Republishing must be safe: these messages carry a Nats-Msg-Id, so the
// stream stores a second copy only once its duplicate window has passed.
type Inflight struct {
	pending chan inflightMsg
	done    chan struct{}
	retries sync.WaitGroup
}

type inflightMsg struct {
	f         jetstream.PubAckFuture
	sent      time.Time
	republish func(first error) (*jetstream.PubAck, error)
	then      func(*jetstream.PubAck)
}

// StartInflight starts the goroutine; Add blocks while size messages wait
// for their acknowledgements. Close stops it.
func StartInflight(size int) *Inflight {
	in := &Inflight{pending: make(chan inflightMsg, size), done: make(chan struct{})}
	go in.run()
	return in
}

// Add tracks f, sent at sent. then runs (in the tracker's goroutine, or in
// a republish goroutine) once the message is acknowledged; republish is
// called when it is not, with the first error, and reports its own.
func (in *Inflight) Add(f jetstream.PubAckFuture, sent time.Time, republish func(first error) (*jetstream.PubAck, error), then func(*jetstream.PubAck)) {
	in.pending <- inflightMsg{f: f, sent: sent, republish: republish, then: then}
}

func (in *Inflight) run() {
	defer close(in.done)
	acks := NewAckTimer()
	defer acks.Stop()
	for m := range in.pending {
		ack, err := acks.Await(m.f, m.sent)
		if err == nil {
			m.then(ack)
			continue
		}
		in.retries.Go(func() {
			if ack, err := m.republish(err); err == nil {
				m.then(ack)
			}
		})
	}
}

// Close waits for every tracked message to be acknowledged or given up,
// then stops. Call it once nothing is added any more.
func (in *Inflight) Close() {
	close(in.pending)
	<-in.done
	in.retries.Wait()
}
