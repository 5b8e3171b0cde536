package natstest

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/jsstore"
)

// SlowLink forwards TCP connections to the server at serverURL, at most
// rate bytes per millisecond from the server to the client, as many
// connections at once as come, and returns the URL to connect to instead:
// a link slower than the server, on which a client that pulls more than
// it can take has the server's pending bytes for it grow. It is closed
// when the test ends.
func SlowLink(t testing.TB, serverURL string, rate int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &slowLink{ln: ln, dest: strings.TrimPrefix(serverURL, "nats://"), rate: rate}
	l.wg.Go(l.accept)
	t.Cleanup(l.close)
	return "nats://" + ln.Addr().String()
}

type slowLink struct {
	ln   net.Listener
	dest string
	rate int
	wg   sync.WaitGroup
	mu   sync.Mutex
	open []net.Conn
}

func (l *slowLink) accept() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", l.dest)
		if err != nil {
			_ = c.Close()
			continue
		}
		l.mu.Lock()
		l.open = append(l.open, c, s)
		l.mu.Unlock()
		l.wg.Go(func() { _, _ = io.Copy(s, c); _ = s.Close() })
		l.wg.Go(func() { l.throttle(c, s); _ = c.Close() })
	}
}

// throttle copies from to to, rate bytes per millisecond at most.
func (l *slowLink) throttle(to io.Writer, from io.Reader) {
	buf := make([]byte, l.rate)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		n, err := from.Read(buf)
		if n > 0 {
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (l *slowLink) close() {
	_ = l.ln.Close()
	l.mu.Lock()
	for _, c := range l.open {
		_ = c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
}

// StartTight runs a server as Start does whose limit of pending bytes for
// a client (max_pending) is twice kvstore.WatchBytes: a reader that pulls
// more than about that at once, over a SlowLink, has its connection
// closed as a slow consumer (see KeptUp).
func StartTight(t testing.TB) *Server {
	t.Helper()
	return StartWith(t, &server.Options{MaxPending: 2 * jsstore.WatchBytes})
}

// KeptUp fails the test if the server closed a connection as a slow
// consumer or nc reconnected: what a reader of the server that pulls no
// more than it can take keeps. who names the reader.
func (s *Server) KeptUp(t testing.TB, nc *nats.Conn, who string) {
	t.Helper()
	if got := s.SlowConsumers(); got != 0 {
		t.Fatalf("the server closed %d slow consumers: %s read past the pending limit", got, who)
	}
	if got := nc.Stats().Reconnects; got != 0 {
		t.Fatalf("the connection of %s reconnected %d times", who, got)
	}
}
