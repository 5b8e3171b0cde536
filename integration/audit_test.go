package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/cli"
	"github.com/jetsched/jetsched/internal/daemon"
)

// TestAuditTrail: mutations by the CLI and through the admin API are
// chained in SCHED_AUDIT; `scheduler audit verify` passes, then names a
// forged entry.
func TestAuditTrail(t *testing.T) {
	ctx := context.Background()
	keyFile := filepath.Join(t.TempDir(), "audit.key")
	if err := os.WriteFile(keyFile, []byte("a-secret-of-at-least-16-bytes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemon.Config{AuditKey: []byte("a-secret-of-at-least-16-bytes")})
	run := cliRunner(d, "--audit-key-file", keyFile)
	if code, _, e := run("schedule", "add", "--id", "a", "--workflow", "wf", "--every", "1m"); code != 0 {
		t.Fatal(e)
	}
	waitUntil(t, 10*time.Second, func() bool { code, _, _ := run("schedule", "pause", "a", "--note", "audit me"); return code == 0 })
	nc, err := nats.Connect(d.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if msg, err := nc.Request("sched.api.schedule.resume", []byte(`{"id":"a"}`), 10*time.Second); err != nil || msg.Header.Get("Nats-Service-Error-Code") != "" {
		t.Fatalf("resume through the API: %v %s", err, msg.Data)
	}
	code, out, e := run("audit", "verify", "--from", "1")
	if code != 0 || !strings.Contains(out, "intact: 3 entries") {
		t.Fatalf("verify: exit %d: %s %s", code, out, e)
	}
	// A forged entry, published with a JetStream ack so that it is stored
	// before verify reads (a core publish + flush only reaches the server).
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "sched.audit.action", []byte(`{"kind":"action","actor":"mallory","action":"schedule.delete","target":"a","prev":"","mac":"00"}`)); err != nil {
		t.Fatal(err)
	}
	code, _, e = run("audit", "verify", "--from", "1")
	if code != cli.ExitFailure || !strings.Contains(e, "broken at sequence 4") {
		t.Fatalf("verify after a forgery: exit %d: %s", code, e)
	}
}
