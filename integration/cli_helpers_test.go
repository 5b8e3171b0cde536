package integration

import (
	"bytes"
	"context"
	"github.com/jetsched/jetsched/internal/daemon/daemontest"
	"testing"

	"github.com/jetsched/jetsched/internal/cli"
	"github.com/jetsched/jetsched/internal/daemon"
)

// startDaemon runs a scheduler on its own embedded server (cfg's
// connection fields are filled in) until the test ends.
func startDaemon(t *testing.T, cfg daemon.Config) *daemon.Daemon {
	t.Helper()
	cfg.Embedded, cfg.Listen, cfg.DataDir = true, "127.0.0.1:0", t.TempDir()
	d, err := daemon.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	daemontest.Cleanup(t, d)
	return d
}

// cliRunner runs `scheduler <args> --nats-url <d> <extra>` in-process and
// returns its exit status, stdout and stderr.
func cliRunner(d *daemon.Daemon, extra ...string) func(args ...string) (int, string, string) {
	return func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		args = append(append(args, "--nats-url", d.ClientURL()), extra...)
		code := cli.Main(context.Background(), args, &out, &errOut)
		return code, out.String(), errOut.String()
	}
}

// mustRun is run failing the test on an exit status other than 0, and
// returning stdout.
func mustRun(t *testing.T, run func(args ...string) (int, string, string)) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		code, out, errOut := run(args...)
		if code != cli.ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		return out
	}
}
