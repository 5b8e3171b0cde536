package helm_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// buildScheduler builds the main module's scheduler binary (the one the
// image ships) into a temporary directory.
func buildScheduler(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "scheduler")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/scheduler")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/scheduler: %v\n%s", err, out)
	}
	return bin
}

// TestArgsAreSchedulerFlags: every flag the chart renders, for every CI
// values file, is a flag of the real `scheduler run`; and the minimal
// values' arguments pass all of its checks, up to connecting to NATS
// (exit 1 "connect to NATS"), where a bad flag or value would exit 2.
func TestArgsAreSchedulerFlags(t *testing.T) {
	t.Parallel()
	bin := buildScheduler(t)
	help, err := exec.Command(bin, "run", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("scheduler run --help: %v\n%s", err, help)
	}
	known := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z][a-z0-9-]*)`).FindAllSubmatch(help, -1) {
		known[string(m[1])] = true
	}
	if !known["nats-url"] || !known["replicas"] {
		t.Fatalf("could not read the flags of scheduler run --help:\n%s", help)
	}
	for _, file := range ciValues(t) {
		args := deployment(t, renderObjects(t, file)).Spec.Template.Spec.Containers[0].Args
		for _, a := range args[1:] {
			flag, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if !strings.HasPrefix(a, "--") || !known[flag] {
				t.Errorf("%s: argument %q is not a flag of scheduler run", name(file), a)
			}
		}
	}

	c := deployment(t, renderObjects(t, "jetsched/ci/minimal.yaml")).Spec.Template.Spec.Containers[0]
	args := c.Args
	// The container's variables from Secrets get a value, so that the
	// scheduler reads them as it would in the pod (a JETSCHED_ name it
	// does not know is refused).
	env := os.Environ()
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			env = append(env, e.Name+"=from-"+e.ValueFrom.SecretKeyRef.Key)
		}
	}
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "--nats-url="):
			args[i] = "--nats-url=nats://127.0.0.1:1" // nothing listens: the run stops at connecting
		default:
			args[i] = strings.NewReplacer("$(POD_NAME)", "jetsched-7d4b9c-x2x9z").Replace(a)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "connect to NATS at nats://127.0.0.1:1") {
		t.Errorf("scheduler %s: %v, want exit 1 failing to connect (every flag accepted):\n%s", strings.Join(args, " "), err, out)
	}
}
