package partition

// The test process stays in the root namespace; it reaches a node by
// dialing from inside the node's namespace (setns on a locked thread for
// the socket's creation). A connection made this way to a node's own
// address never crosses the bridge, so the checker's view of a node is
// never cut by a nemesis: it sees exactly what that node's server sees.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// nsDialer dials from inside network namespace ns.
type nsDialer struct{ ns string }

// Dial satisfies nats.CustomDialer.
func (d nsDialer) Dial(network, address string) (net.Conn, error) {
	return d.dialTimeout(network, address, 5*time.Second)
}

func (d nsDialer) dialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return d.DialContext(ctx, network, address)
}

// DialContext creates the socket in the namespace and connects it. The
// socket stays in that namespace for its life.
func (d nsDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		// This goroutine's thread switches namespace; it is handed back to
		// the scheduler only once it is back in the original one. If the
		// switch back fails, the goroutine exits still locked and the
		// runtime ends the thread with it.
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{err: fmt.Errorf("open own network namespace: %w", err)}
			return
		}
		defer orig.Close()
		target, err := os.Open("/var/run/netns/" + d.ns)
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{err: fmt.Errorf("open network namespace %s: %w", d.ns, err)}
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- result{err: fmt.Errorf("setns %s: %w", d.ns, err)}
			return
		}
		var dl net.Dialer
		c, err := dl.DialContext(ctx, network, address)
		if unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		if err != nil {
			err = fmt.Errorf("dial %s in namespace %s: %w", address, d.ns, err)
		}
		done <- result{c, err}
	}()
	r := <-done
	return r.c, r.err
}

// httpClient is an HTTP client whose connections are made in the
// namespace, without keep-alives (nothing lingers after a request).
func (d nsDialer) httpClient() *http.Client {
	return &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true},
	}
}
