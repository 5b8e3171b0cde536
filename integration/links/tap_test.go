package links

import (
	"bytes"
	"io"
	"net"
	"sync"
	"time"
)

// Subjects the tap watches for in what a scheduler sends: writes to the
// state bucket (claims and records) and fire publishes. nats.go sends
// both as HPUB or PUB.
var (
	stateWrite  = []byte("PUB $KV.sched_state.")
	firePublish = []byte("PUB sched.fire.")
)

// tap is a TCP forwarder between a scheduler and its proxy that notes when
// the scheduler sends a state write or a fire, before any toxic delays or
// drops it: what the scheduler attempted, on the test's clock. It reads
// the scheduler's side eagerly (a queue, not the proxy's back-pressure),
// so that a throttled link does not hide when an attempt was made.
type tap struct {
	ln   net.Listener
	dest string

	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
	writes []time.Time // state writes sent
	fires  []time.Time // fire publishes sent
	wg     sync.WaitGroup
}

// newTap listens on a free loopback port and forwards to dest.
func newTap(dest string) (*tap, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	t := &tap{ln: ln, dest: dest, conns: map[net.Conn]bool{}}
	t.wg.Add(1)
	go t.accept()
	return t, nil
}

// addr is where the scheduler connects.
func (t *tap) addr() string { return t.ln.Addr().String() }

// close stops accepting, closes every connection and waits for the
// forwarding goroutines.
func (t *tap) close() {
	_ = t.ln.Close()
	t.mu.Lock()
	t.closed = true
	for c := range t.conns {
		_ = c.Close()
	}
	t.mu.Unlock()
	t.wg.Wait()
}

func (t *tap) accept() {
	defer t.wg.Done()
	for {
		client, err := t.ln.Accept()
		if err != nil {
			return
		}
		t.mu.Lock()
		dest := t.dest
		t.mu.Unlock()
		upstream, err := net.Dial("tcp", dest)
		if err != nil {
			_ = client.Close()
			continue
		}
		if !t.track(client, upstream) {
			return
		}
		queue := make(chan []byte, 1<<14)
		t.wg.Add(3)
		go t.read(client, queue)
		go t.pass(queue, upstream, client)
		go t.copyDown(upstream, client)
	}
}

// redirect forwards new connections to dest and closes the current ones
// (the scheduler reconnects, through the tap, to dest).
func (t *tap) redirect(dest string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dest = dest
	for c := range t.conns {
		_ = c.Close()
	}
}

// track registers a pair of connections, or closes them when the tap is
// closing.
func (t *tap) track(conns ...net.Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		t.conns[c] = true
	}
	return true
}

// read notes the attempts in what the scheduler sends and queues it.
func (t *tap) read(client net.Conn, queue chan<- []byte) {
	defer t.wg.Done()
	defer close(queue)
	var sc scanner
	buf := make([]byte, 32<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			now := time.Now()
			writes, fires := sc.scan(buf[:n])
			t.note(now, writes, fires)
			queue <- bytes.Clone(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// pass writes the queue to the proxy; at its end, both sides close.
func (t *tap) pass(queue <-chan []byte, upstream, client net.Conn) {
	defer t.wg.Done()
	defer func() { _ = upstream.Close(); _ = client.Close() }()
	for b := range queue {
		if _, err := upstream.Write(b); err != nil {
			_ = client.Close()
			for range queue { // let read end
			}
			return
		}
	}
}

func (t *tap) copyDown(upstream, client net.Conn) {
	defer t.wg.Done()
	_, _ = io.Copy(client, upstream)
	_ = client.Close()
	_ = upstream.Close()
}

func (t *tap) note(at time.Time, writes, fires int) {
	if writes == 0 && fires == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for range writes {
		t.writes = append(t.writes, at)
	}
	for range fires {
		t.fires = append(t.fires, at)
	}
}

// attempts are the last state write and fire sent in [from, to), as
// offsets from from (-1: none), and how many writes came later than limit.
func (t *tap) attempts(from, to time.Time, limit time.Duration) (lastWrite, lastFire time.Duration, late int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	last := func(ts []time.Time) time.Duration {
		d := time.Duration(-1)
		for _, at := range ts {
			if !at.Before(from) && at.Before(to) {
				d = max(d, at.Sub(from))
			}
		}
		return d
	}
	for _, at := range t.writes {
		if at.Sub(from) > limit && at.Before(to) {
			late++
		}
	}
	return last(t.writes), last(t.fires), late
}

// scanner counts the watched subjects in a byte stream read in chunks,
// including those split across two chunks.
type scanner struct{ tail []byte }

func (s *scanner) scan(chunk []byte) (writes, fires int) {
	buf := append(s.tail, chunk...)
	count := func(pat []byte) int {
		n := 0
		for i := 0; ; {
			j := bytes.Index(buf[i:], pat)
			if j < 0 {
				return n
			}
			// Count a match only if it ends in the new chunk: one that
			// lies wholly in the tail was counted with the last chunk.
			if i+j+len(pat) > len(s.tail) {
				n++
			}
			i += j + 1
		}
	}
	writes, fires = count(stateWrite), count(firePublish)
	keep := max(len(stateWrite), len(firePublish)) - 1
	s.tail = bytes.Clone(buf[max(0, len(buf)-keep):])
	return writes, fires
}
