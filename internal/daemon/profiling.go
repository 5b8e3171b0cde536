package daemon

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// ErrProfilingRemote: profiles asked for on a metrics address that is not
// loopback, without ProfilingAllowRemote. Whoever reaches /debug/pprof/
// can take CPU profiles and traces of the process and read its heap's
// shape, so by default only this machine may.
var ErrProfilingRemote = errors.New("daemon: profiles are served only on a loopback metrics address")

// CheckProfiling refuses to serve profiles on listen (the metrics
// address) unless it is a loopback address (127.0.0.0/8, ::1, or
// localhost) or allowRemote is set. An address without a host (":9464")
// listens on every interface, and so does 0.0.0.0; a host name other than
// localhost may resolve to anything, so it counts as remote.
func CheckProfiling(listen string, allowRemote bool) error {
	if allowRemote {
		return nil
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("daemon: metrics address %q: %w", listen, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.WithZone("").IsLoopback() {
		return nil
	}
	return fmt.Errorf("%w: %s is not (allow another explicitly)", ErrProfilingRemote, listen)
}
