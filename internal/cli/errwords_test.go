package cli

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestNoGoDurationFlags walks the command tree: no flag may be pflag's own
// duration (Go's grammar, Go's errors); each is durationValue, which reads
// the one duration grammar (2 hours, 1d 3h, 90s).
func TestNoGoDurationFlags(t *testing.T) {
	t.Parallel()
	root := (&app{}).rootCommand()
	var walk func(*cobra.Command)
	seen := 0
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if typ := fmt.Sprintf("%T", f.Value); typ == "*pflag.durationValue" || typ == "*pflag.durationSliceValue" {
				t.Errorf("%s --%s is a Go duration flag (%s); use durationVar", c.CommandPath(), f.Name, typ)
			}
			if _, ok := f.Value.(durationValue); ok {
				seen++
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if seen < 15 {
		t.Errorf("%d duration flags found, want the run, pause, wakeup, console and bench ones", seen)
	}
}

// TestMistakesInOurWords runs the command line on mistakes a newcomer
// makes; each exits 2 with one line that says what was meant. None needs
// a server: an unreachable one would make a check that let the input
// through exit 1.
func TestMistakesInOurWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"schedule", "lst"}, `unknown command "lst" for "scheduler schedule"; did you mean "ls"?`},
		{[]string{"schedul", "ls"}, `unknown command "schedul" for "scheduler"; did you mean "schedule"?`},
		{[]string{"wakeup", "lss"}, `unknown command "lss" for "scheduler wakeup"; did you mean "ls"?`},
		{[]string{"schedule", "frobnicate"}, `unknown command "frobnicate" for "scheduler schedule"; "scheduler schedule --help" lists its commands`},
		{[]string{"schedule", "add", "--id", "x", "--workflow", "w", "--cron", "0 9 * * *", "--tzz", "UTC"}, `unknown flag --tzz for "scheduler schedule add"; did you mean --tz?`},
		{[]string{"schedule", "pause", "x", "--for", "2 horus"}, `invalid --for "2 horus": unknown unit "horus"; want ms, s, m, h or d, or a word such as seconds, minutes, hours, days (e.g. 90s, 2 hours, 1d 3h)`},
		{[]string{"schedule", "pause", "x", "--for", "30"}, `invalid --for "30": a bare number needs a unit here; did you mean 30s or 30m?`},
		{[]string{"schedule", "pause", "x", "--until", "tomorrow"}, `invalid --until "tomorrow": want an RFC 3339 time or now+DURATION (e.g. 2026-12-01T09:00:00Z, now+2h, now-30m)`},
		{[]string{"schedule", "ls", "--limit", "ten"}, `invalid --limit "ten": want a whole number`},
		{[]string{"schedule", "add", "--id", "x", "--workflow", "w", "--cron", "0 9 * * *", "--tz", "Europe/Pariss"}, `--tz: invalid tz "Europe/Pariss": unknown time zone; did you mean "Europe/Paris"?`},
		{[]string{"schedule", "add", "--id", "x", "--workflow", "w", "--every", "30"}, `--every: invalid every "30": 30 is 30ms: a bare number is milliseconds; at least 100ms; did you mean 30s?`},
		{[]string{"run", "--lease-ttl", "1 fortnight"}, `invalid --lease-ttl "1 fortnight": unknown unit "fortnight"`},
	} {
		code, _, stderr := cliEnv(t, nil, append(c.args, "--nats-url", "nats://127.0.0.1:1")...)
		if code != ExitInvalid || stderr != "scheduler: "+c.want+"\n" && !strings.HasPrefix(stderr, "scheduler: "+c.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", c.args, code, stderr, ExitInvalid, c.want)
		}
		for _, internal := range []string{"time: ", "strconv.", "Did you mean this?", "Usage:"} {
			if strings.Contains(stderr, internal) {
				t.Errorf("%q: stderr %q has %q", c.args, stderr, internal)
			}
		}
	}
	// A group without a subcommand still prints its help, exit 0.
	if code, stdout, _ := cliEnv(t, nil, "schedule"); code != ExitOK || !strings.Contains(stdout, "Available Commands") {
		t.Errorf("schedule: exit %d, stdout %q; want its help", code, stdout)
	}
	// The exit statuses are in the root's help.
	if code, stdout, _ := cliEnv(t, nil, "--help"); code != ExitOK || !strings.Contains(stdout, "5  not found") {
		t.Errorf("--help: exit %d, no exit status table:\n%s", code, stdout)
	}
}

// TestDurationGrammarInConfig: a config file's and the environment's
// durations read the same grammar as flags.
func TestDurationGrammarInConfig(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "ok.yaml", "lease-ttl: 2 minutes\ntick-retention: 1d 12h\n")
	out := printed(t, []string{"JETSCHED_FIRE_RETENTION=7 days"}, "--config", path)
	for key, want := range map[string]string{"lease-ttl": "2m", "tick-retention": "1d12h", "fire-retention": "7d"} {
		if got := fmt.Sprint(out[key].Value); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
}

// TestPauseResumeRepeat: a repeated pause or resume succeeds and says so;
// --strict keeps the old refusal; a missing schedule exits 5.
func TestPauseResumeRepeat(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must("schedule", "add", "--id", "p", "--workflow", "w", "--every", "1h")
	out, _ := e.must("schedule", "resume", "p")
	if !strings.Contains(out, "schedule p not paused") {
		t.Errorf("resume of a running schedule: %q", out)
	}
	if code, _, stderr := e.run("schedule", "resume", "p", "--strict"); code != ExitInvalid || !strings.Contains(stderr, "p is not paused") {
		t.Errorf("resume --strict of a running schedule: exit %d, %q; want 2", code, stderr)
	}
	e.must("schedule", "pause", "p", "--note", "one", "--for", "2 hours")
	out, _ = e.must("schedule", "pause", "p", "--note", "two")
	if !strings.Contains(out, "schedule p already paused") {
		t.Errorf("pause of a paused schedule: %q", out)
	}
	if code, _, stderr := e.run("schedule", "pause", "p", "--strict"); code != ExitInvalid || !strings.Contains(stderr, "already paused") {
		t.Errorf("pause --strict of a paused schedule: exit %d, %q; want 2", code, stderr)
	}
	st, _, err := e.store.GetState(context.Background(), "p")
	if err != nil || st.Paused == nil || st.Paused.Note != "two" {
		t.Fatalf("state: %+v, %v; want paused with the second note", st.Paused, err)
	}
	out, _ = e.must("schedule", "resume", "p")
	if !strings.Contains(out, "schedule p resumed") {
		t.Errorf("resume of a paused schedule: %q", out)
	}
	for _, args := range [][]string{{"schedule", "pause", "nope"}, {"schedule", "resume", "nope"}, {"schedule", "get", "nope"}} {
		if code, _, stderr := e.run(args...); code != ExitNotFound || !strings.Contains(stderr, `not found: schedule "nope"`) {
			t.Errorf("%q: exit %d, %q; want %d", args, code, stderr, ExitNotFound)
		}
	}
}

// TestWakeupTZAlias: wakeup add takes --tz as another name of --zone.
func TestWakeupTZAlias(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must("wakeup", "add", "--run", "r", "--step", "s", "--workflow", "w", "--when", "2099-01-02 09:00", "--tz", "Europe/Paris")
	out, _ := e.must("wakeup", "ls", "--run", "r", "--json")
	if !strings.Contains(out, `"zone": "Europe/Paris"`) && !strings.Contains(out, `"zone":"Europe/Paris"`) {
		t.Errorf("timer registered with --tz: %s", out)
	}
}

// TestListenAddressTaken: run and demo on a taken port fail at once with
// the cause and the way out, not a wait and "server not ready".
func TestListenAddressTaken(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr := l.Addr().String()
	for _, cmd := range []string{"run", "demo"} {
		code, _, stderr := cliEnv(t, nil, cmd, "--listen", addr, "--data-dir", t.TempDir(), "--log-level", "error")
		want := "scheduler: listen " + addr + ": address already in use; another NATS server or scheduler is running there: pass --listen 127.0.0.1:0 for a free port\n"
		if code != ExitFailure || !strings.HasSuffix(stderr, want) {
			t.Errorf("%s on a taken port: exit %d, stderr %q; want %d and %q", cmd, code, stderr, ExitFailure, want)
		}
	}
}
