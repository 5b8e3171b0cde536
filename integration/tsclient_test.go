package integration

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/npmtest"
)

// tsClientDir is the TypeScript client, from this package's directory.
const tsClientDir = "../clients/typescript"

// TestTypeScriptClient runs the TypeScript client's tests (node's test
// runner, `npm test` in clients/typescript) against a real scheduler with
// its embedded nats-server on a loopback port: the client's every call and
// error code, the worker's acks, retries, dead letters, permanent failures
// and cancel requests, and docs/api.md against what the client calls. The
// package is copied into the test's directory and installed there with
// `npm ci` (the versions its lock file pins), so that the checkout gets no
// node_modules. Without npm the test is skipped, except under CI where it
// fails.
func TestTypeScriptClient(t *testing.T) {
	apiDoc, err := filepath.Abs("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dir := npmtest.Install(ctx, t, tsClientDir, "the TypeScript client")
	d := startDaemon(t, daemon.Config{})
	cmd := exec.CommandContext(ctx, "npm", "test")
	cmd.Dir, cmd.Env = dir, append(npmtest.Env(), "NATS_URL="+d.ClientURL(), "JETSCHED_API_DOC="+apiDoc)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npm test in clients/typescript: %v\n%s", err, out)
	}
	t.Logf("npm test:\n%s", out)
}
