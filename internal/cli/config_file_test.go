//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jetsched/jetsched/internal/testwait"
)

// TestStartFilesMustBeRegular: --config naming a FIFO (which would block
// until a writer comes, SIGTERM or not), a device such as /dev/zero
// (endless) or a directory is refused at once, with exit 2 naming the file
// and the reason; so is a --config over the size cap, and a FIFO given as
// --server-config, --schedules or --audit-key-file.
func TestStartFilesMustBeRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "settings.fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("# "+strings.Repeat("x", maxConfigFile)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := []string{"--nats-url", "nats://127.0.0.1:1"}
	for _, c := range []struct {
		args         []string
		file, reason string
	}{
		{[]string{"config", "print", "--config", fifo}, fifo, "FIFO"},
		{[]string{"config", "print", "--config", "/dev/zero"}, "/dev/zero", "a device"},
		{[]string{"config", "print", "--config", dir}, dir, "a directory"},
		{[]string{"config", "print", "--config", big}, big, "larger than 1 MiB"},
		{append([]string{"run", "--server-config", fifo}, "--user", "u", "--password", "p"), fifo, "FIFO"},
		{append([]string{"run", "--schedules", fifo}, url...), fifo, "FIFO"},
		{append([]string{"run", "--audit-key-file", fifo}, url...), fifo, "FIFO"},
		// Input files of the CLI may be pipes (`@<(jq ...)`), but are read
		// no further than 64 MiB.
		{append([]string{"schedule", "add", "--id", "z", "--workflow", "w", "--every", "1h", "--input", "@/dev/zero"}, url...), "/dev/zero", "larger than 64 MiB"},
		{append([]string{"wakeup", "add", "--run", "r", "--step", "s", "--workflow", "w", "--when", "1h", "--payload", "@/dev/zero"}, url...), "/dev/zero", "larger than 64 MiB"},
		{append([]string{"calendar", "put", "c", "/dev/zero"}, url...), "/dev/zero", "larger than 64 MiB"},
	} {
		type result struct {
			code   int
			stderr string
		}
		done := make(chan result, 1)
		go func() {
			code, _, stderr := cliEnv(t, nil, c.args...)
			done <- result{code, stderr}
		}()
		var r result
		// A generous deadline: this detects a hang, not slowness (reading
		// 64 MiB of /dev/zero on a loaded box takes seconds).
		if err := testwait.Until(60*time.Second, strings.Join(c.args, " ")+" to return", func() error {
			select {
			case r = <-done:
				return nil
			default:
				return os.ErrDeadlineExceeded
			}
		}); err != nil {
			// End a read that hangs on the FIFO: a writer comes and goes.
			// Non-blocking, so that a hang elsewhere (no reader on the
			// FIFO) does not block the test here for good.
			if w, err := os.OpenFile(fifo, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
				_ = w.Close()
				<-done
			}
			t.Fatalf("%q: %v (it hangs)", c.args, err)
		}
		if r.code != ExitInvalid || !strings.Contains(r.stderr, c.file) || !strings.Contains(r.stderr, c.reason) {
			t.Errorf("%q: exit %d, %q; want exit %d naming %s and %q", c.args, r.code, r.stderr, ExitInvalid, c.file, c.reason)
		}
	}
}
