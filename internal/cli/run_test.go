package cli

import (
	"context"
	"strings"
	"testing"
)

// TestRunClockOffset: --clock-offset is a hidden test flag; a value beyond
// a day, or not a duration, is refused (exit 2, naming the flag) before
// anything connects.
func TestRunClockOffset(t *testing.T) {
	run := func(args ...string) (int, string, string) {
		var out, errOut strings.Builder
		code := Main(context.Background(), args, &out, &errOut)
		return code, out.String(), errOut.String()
	}
	// An unreachable URL: validation must fail before a connection is tried.
	for _, bad := range []string{"48h", "-25h", "soon"} {
		code, _, stderr := run("run", "--nats-url", "nats://127.0.0.1:1", "--clock-offset", bad)
		if code != ExitInvalid || !strings.Contains(stderr, "clock-offset") {
			t.Errorf("--clock-offset %s: exit %d, stderr %q; want %d naming --clock-offset", bad, code, stderr, ExitInvalid)
		}
	}
	code, stdout, _ := run("run", "--help")
	if code != ExitOK {
		t.Fatalf("run --help: exit %d", code)
	}
	if !strings.Contains(stdout, "--lease-ttl") {
		t.Fatalf("run --help does not show the run flags:\n%s", stdout)
	}
	if strings.Contains(stdout, "clock-offset") {
		t.Errorf("run --help lists the hidden test flag --clock-offset:\n%s", stdout)
	}
}

// TestRunPprofNeedsMetrics: --pprof without --metrics-listen is refused
// (exit 2, naming both flags) before anything connects.
func TestRunPprofNeedsMetrics(t *testing.T) {
	var out, errOut strings.Builder
	code := Main(context.Background(), []string{"run", "--nats-url", "nats://127.0.0.1:1", "--pprof"}, &out, &errOut)
	if code != ExitInvalid || !strings.Contains(errOut.String(), "--pprof") || !strings.Contains(errOut.String(), "--metrics-listen") {
		t.Errorf("run --pprof: exit %d, stderr %q; want %d naming --pprof and --metrics-listen", code, errOut.String(), ExitInvalid)
	}
}

// TestRunGCHeadroomValue: --gc-headroom takes a size of at least 64MiB or
// off; anything else is refused (exit 2, naming the flag) before anything
// connects.
func TestRunGCHeadroomValue(t *testing.T) {
	for _, bad := range []string{"lots", "1MiB", "-5GiB"} {
		var out, errOut strings.Builder
		code := Main(context.Background(), []string{"run", "--nats-url", "nats://127.0.0.1:1", "--gc-headroom", bad}, &out, &errOut)
		if code != ExitInvalid || !strings.Contains(errOut.String(), "--gc-headroom") {
			t.Errorf("--gc-headroom %s: exit %d, stderr %q; want %d naming --gc-headroom", bad, code, errOut.String(), ExitInvalid)
		}
	}
}

// TestRunMetricsWorkflowLimit: --metrics-workflow-limit below 1 or above
// the bound is refused (exit 2, naming the flag) before anything connects;
// a good one passes validation (and fails at the unreachable server).
func TestRunMetricsWorkflowLimit(t *testing.T) {
	var out, errOut strings.Builder
	if code := Main(context.Background(), []string{"run", "--nats-url", "nats://127.0.0.1:1", "--metrics-workflow-limit", "5"}, &out, &errOut); code != ExitFailure {
		t.Errorf("--metrics-workflow-limit 5: exit %d, stderr %q; want %d (validated, then no server)", code, errOut.String(), ExitFailure)
	}
	for _, bad := range []string{"0", "-1", "10001", "many"} {
		var out, errOut strings.Builder
		code := Main(context.Background(), []string{"run", "--nats-url", "nats://127.0.0.1:1", "--metrics-workflow-limit", bad}, &out, &errOut)
		if code != ExitInvalid || !strings.Contains(errOut.String(), "metrics-workflow-limit") {
			t.Errorf("--metrics-workflow-limit %s: exit %d, stderr %q; want %d naming the flag", bad, code, errOut.String(), ExitInvalid)
		}
	}
}

// TestErrorsRedactTheURL: a command that cannot connect, and run refusing
// --server-config beside --nats-url, name the URL without its password or
// token, with or without a scheme.
func TestErrorsRedactTheURL(t *testing.T) {
	for _, url := range []string{"nats://user:PWSECRET@127.0.0.1:1", "user:PWSECRET@127.0.0.1:1", "nats://PWSECRET@127.0.0.1:1"} {
		for _, args := range [][]string{
			{"schedule", "ls", "--nats-url", url},
			{"run", "--server-config", "single.conf", "--nats-url", url},
		} {
			var out, errOut strings.Builder
			code := Main(context.Background(), args, &out, &errOut)
			if code == ExitOK || strings.Contains(errOut.String()+out.String(), "PWSECRET") || !strings.Contains(errOut.String(), "127.0.0.1:1") {
				t.Errorf("%q: exit %d, stderr %q; want a failure naming 127.0.0.1:1 without the secret", args, code, errOut.String())
			}
		}
	}
}

// TestRunPprofOnlyOnLoopback: --pprof serves profiles on --metrics-listen
// only when that is a loopback address; another (0.0.0.0, all interfaces,
// a host name) is refused with exit 2 naming --pprof-allow-remote, which
// allows it.
func TestRunPprofOnlyOnLoopback(t *testing.T) {
	for _, listen := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0", "127.0.0.2:9464"} {
		if _, err := checkRun(t, nil, "--nats-url", "nats://127.0.0.1:1", "--metrics-listen", listen, "--pprof"); err != nil {
			t.Errorf("--pprof on %s: %v", listen, err)
		}
	}
	for _, listen := range []string{"0.0.0.0:9464", ":9464", "[::]:9464", "192.0.2.1:9464", "metrics.example:9464"} {
		var out, errOut strings.Builder
		code := Main(context.Background(), []string{"run", "--nats-url", "nats://127.0.0.1:1", "--metrics-listen", listen, "--pprof"}, &out, &errOut)
		if code != ExitInvalid || !strings.Contains(errOut.String(), "--pprof-allow-remote") || !strings.Contains(errOut.String(), listen) {
			t.Errorf("--pprof on %s: exit %d, stderr %q; want %d naming %s and --pprof-allow-remote", listen, code, errOut.String(), ExitInvalid, listen)
		}
		cfg, err := checkRun(t, nil, "--nats-url", "nats://127.0.0.1:1", "--metrics-listen", listen, "--pprof", "--pprof-allow-remote")
		if err != nil || !cfg.Profiling || !cfg.ProfilingAllowRemote {
			t.Errorf("--pprof --pprof-allow-remote on %s: %v, profiling %v, remote %v", listen, err, cfg.Profiling, cfg.ProfilingAllowRemote)
		}
	}
}
