package faulttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// GoBuild builds the Go package pkg (an import path of this module or of
// its dependencies) into the executable out, with the test's environment
// minus GOFLAGS, so that the binary is the one the tests exercise.
func GoBuild(out, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	if o, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, o)
	}
	return nil
}

// BuildScheduler builds cmd/scheduler into a directory of t and returns
// its path.
func BuildScheduler(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "scheduler")
	if err := GoBuild(bin, "github.com/jetsched/jetsched/cmd/scheduler"); err != nil {
		t.Fatal(err)
	}
	return bin
}
