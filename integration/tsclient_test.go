package integration

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/daemon"
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
	npm, err := exec.LookPath("npm")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("npm is not installed (apt-get install nodejs npm): the TypeScript client is tested in CI: %v", err)
		}
		t.Skipf("npm is not installed: the TypeScript client's tests are skipped (%v)", err)
	}
	apiDoc, err := filepath.Abs("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "client")
	copyPackage(t, tsClientDir, dir)
	d := startDaemon(t, daemon.Config{})

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	env := append(os.Environ(), "NATS_URL="+d.ClientURL(), "JETSCHED_API_DOC="+apiDoc,
		"npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
	for _, args := range [][]string{{"ci"}, {"test"}} {
		cmd := exec.CommandContext(ctx, npm, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("npm %s in clients/typescript: %v\n%s", args[0], err, out)
		}
		t.Logf("npm %s:\n%s", args[0], out)
	}
}

// copyPackage copies the npm package at src to dst, without what an
// install or a build left there (node_modules, dist).
func copyPackage(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if e.IsDir() {
			if e.Name() == "node_modules" || e.Name() == "dist" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}
