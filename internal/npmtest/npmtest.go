// Package npmtest installs an npm package of the repository for a test:
// a copy in the test's directory (the checkout gets no node_modules),
// installed with `npm ci` from the versions its lock file pins.
package npmtest

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Env is the environment for npm and node: quiet, without update,
// funding or audit requests.
func Env() []string {
	return append(os.Environ(), "npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
}

// Install copies the npm package at src into the test's directory and
// runs `npm ci` there, returning the copy's directory. Without npm the
// test is skipped, except under CI (CI set) where it fails: why says what
// needs npm.
func Install(ctx context.Context, t testing.TB, src, why string) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("npm is not installed (apt-get install nodejs npm): %s is tested in CI: %v", why, err)
		}
		t.Skipf("npm is not installed: %s is skipped (%v)", why, err)
	}
	dir := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := Copy(src, dir); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, npm, "ci")
	cmd.Dir, cmd.Env = dir, Env()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", src, err, out)
	}
	return dir
}

// Copy copies the npm package at src to dst, without what an install or
// a build left there (node_modules, dist).
func Copy(src, dst string) error {
	return filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
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
}
