package image

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// podman runs podman on the store build.sh built into.
type podman struct {
	driver string // containers-storage driver: build.sh --print-storage-driver
	image  string
	// runOpts are the `podman run` options that work on this host (probe).
	runOpts []string
	// names of the containers started, for unique names.
	started int
}

// run runs podman with args and returns its stdout, or an error with its
// stderr. --events-backend file: there is no journald in a CI container;
// --cgroup-manager cgroupfs: nor a systemd to ask for cgroups.
func (p *podman) run(timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "podman", append([]string{"--events-backend", "file", "--cgroup-manager", "cgroupfs"}, args...)...)
	cmd.Env = append(os.Environ(), "STORAGE_DRIVER="+p.driver)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = errors.Join(err, ctx.Err())
		}
		return out.String(), fmt.Errorf("podman %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// runCandidates are the `podman run` options to try, from none to all that
// a restricted host needs. What this machine (a Firecracker VM, root
// without CAP_SYS_RESOURCE, hybrid cgroup v1/v2) needed, found by trying:
//   - ulimits at most the host's hard limits: podman's defaults (nofile
//     1048576, nproc 4194304) cannot be set without CAP_SYS_RESOURCE
//     ("setrlimit RLIMIT_NOFILE: Operation not permitted"); an nproc near
//     the host's limit was refused too, 4096 (threads of uid 65532) is
//     plenty for the scheduler, which starts no processes;
//   - runc: crun 1.8 (bookworm) refuses the hybrid cgroup layout ("cgroups
//     in hybrid mode not supported, drop all controllers from cgroupv2");
//   - --cgroups disabled, for a host where no cgroup can be created.
func runCandidates() [][]string {
	var lim syscall.Rlimit
	ulimits := []string{"--ulimit", "nproc=4096:4096"}
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		ulimits = append(ulimits, "--ulimit", fmt.Sprintf("nofile=%d:%d", lim.Max, lim.Max))
	}
	runc := []string{"--runtime", "runc"}
	return [][]string{
		nil,
		ulimits,
		append(runc, ulimits...),
		append(append(runc, "--cgroups", "disabled"), ulimits...),
	}
}

// probe finds the run options with which the image runs `help` here, or
// returns every attempt's podman error.
func (p *podman) probe(t *testing.T) error {
	t.Helper()
	var errs []error
	for _, opts := range runCandidates() {
		args := append(append([]string{"run", "--rm", "--network", "host"}, opts...), p.image, "help")
		out, err := p.run(time.Minute, args...)
		if err == nil && strings.Contains(out, "scheduler") {
			p.runOpts = opts
			return nil
		}
		if err == nil {
			err = fmt.Errorf("podman %s: exit 0 without the help text: %q", strings.Join(args, " "), out)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// start runs the image detached on the host's network with args as its
// command and removes the container (and its anonymous volume) when the
// test ends. Host networking keeps every connection on loopback.
func (p *podman) start(t *testing.T, args ...string) string {
	t.Helper()
	p.started++
	name := fmt.Sprintf("jetsched-imagetest-%d-%d", os.Getpid(), p.started)
	run := append(append([]string{"run", "-d", "--name", name, "--network", "host"}, p.runOpts...), p.image)
	if _, err := p.run(time.Minute, append(run, args...)...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := p.run(time.Minute, "rm", "-f", "-v", name); err != nil {
			t.Errorf("remove container: %v", err)
		}
	})
	return name
}

// logs is a container's output, for failure messages.
func (p *podman) logs(name string) string {
	out, err := p.run(30*time.Second, "logs", name)
	if err != nil {
		return err.Error()
	}
	return out
}

// stopCleanly stops a container with SIGTERM and fails unless it exits 0
// in time: the scheduler is PID 1 there, which gets only the signals it
// handles.
func (p *podman) stopCleanly(t *testing.T, name string) {
	t.Helper()
	if _, err := p.run(time.Minute, "stop", "-t", "30", name); err != nil {
		t.Fatal(err)
	}
	code, err := p.run(30*time.Second, "inspect", "--format", "{{.State.ExitCode}}", name)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(code) != "0" {
		t.Fatalf("container exited %s after SIGTERM, want 0; logs:\n%s", strings.TrimSpace(code), p.logs(name))
	}
}

// removeTestImages removes the tags the test built (the image itself
// stays while another tag, a developer's own build, names it).
func (p *podman) removeTestImages(t *testing.T) {
	out, err := p.run(time.Minute, "images", "--filter", "reference="+testRepo, "--format", "{{.Repository}}:{{.Tag}}")
	if err != nil {
		t.Errorf("list test images: %v", err)
		return
	}
	for _, ref := range strings.Fields(out) {
		// The filter matches images, and lists every name of them.
		if !strings.HasPrefix(ref, testRepo+":") {
			continue
		}
		if _, err := p.run(time.Minute, "rmi", ref); err != nil {
			t.Errorf("remove test image: %v", err)
		}
	}
}
