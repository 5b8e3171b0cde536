package daemon

import (
	"context"
	"errors"
	"testing"

	"github.com/jetsched/jetsched/internal/natsconn"
)

// TestStartRefusesRemoteProfiling: a daemon asked for profiles on a
// metrics address that is not loopback refuses to start, before it
// connects anywhere, unless ProfilingAllowRemote says so.
func TestStartRefusesRemoteProfiling(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		_, err := Start(context.Background(), Config{
			Conn:          natsconn.Options{URL: "nats://127.0.0.1:1"},
			MetricsListen: listen, Profiling: true,
		})
		if !errors.Is(err, ErrProfilingRemote) {
			t.Errorf("profiling on %s: %v; want ErrProfilingRemote", listen, err)
		}
	}
	for _, c := range []struct {
		listen string
		remote bool
	}{{"127.0.0.1:0", false}, {"localhost:9464", false}, {"[::1]:0", false}, {"0.0.0.0:9464", true}} {
		if err := CheckProfiling(c.listen, c.remote); err != nil {
			t.Errorf("CheckProfiling(%s, %v): %v", c.listen, c.remote, err)
		}
	}
}
