package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/jetsched/jetsched/internal/daemon"
)

// cliEnv runs the command line in the environment environ.
func cliEnv(t *testing.T, environ []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = mainEnv(context.Background(), args, environ, &out, &errOut)
	return code, out.String(), errOut.String()
}

// printed is config print --format json's output in environ with args.
func printed(t *testing.T, environ []string, args ...string) map[string]jsonEntry {
	t.Helper()
	code, stdout, stderr := cliEnv(t, environ, append([]string{"config", "print", "--format", "json"}, args...)...)
	if code != ExitOK {
		t.Fatalf("config print %q: exit %d: %s", args, code, stderr)
	}
	var out map[string]jsonEntry
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("config print --format json: %v\n%s", err, stdout)
	}
	return out
}

// checkRun parses args as run does and builds its daemon.Config, without
// starting anything: what run would use.
func checkRun(t *testing.T, environ []string, args ...string) (daemon.Config, error) {
	t.Helper()
	a := &app{stdout: io.Discard, stderr: io.Discard, environ: environ}
	root := a.rootCommand()
	var (
		f   daemonFlags
		cfg daemon.Config
	)
	cmd := &cobra.Command{Use: "check-run", Args: noArgs, RunE: func(cmd *cobra.Command, _ []string) error {
		st, err := a.configure(cmd, f.configFile)
		if err != nil {
			return err
		}
		cfg, err = a.daemonConfig(&f)
		return st.annotate(err)
	}}
	f.register(cmd, "./jetsched-data", "")
	root.AddCommand(cmd)
	root.SetArgs(append([]string{"check-run"}, args...))
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	err := root.ExecuteContext(context.Background())
	return cfg, err
}

// TestConfigPrecedence: an explicit flag wins over the config file, which
// wins over the JETSCHED_ variable, which wins over the default; NATS_URL
// stays nats-url's default.
func TestConfigPrecedence(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "jetsched.yaml", "lease-ttl: 7s\nnats-url: nats://file:4222\n")
	for _, tc := range []struct {
		name       string
		flag, env  bool
		file       bool
		want, from string
	}{
		{"default", false, false, false, "10s", fromDefault},
		{"env", false, true, false, "5s", fromEnv},
		{"file", false, false, true, "7s", fromFile},
		{"file over env", false, true, true, "7s", fromFile},
		{"flag", true, false, false, "3s", fromFlag},
		{"flag over env", true, true, false, "3s", fromFlag},
		{"flag over file", true, false, true, "3s", fromFlag},
		{"flag over file and env", true, true, true, "3s", fromFlag},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var args, environ []string
			if tc.flag {
				args = append(args, "--lease-ttl", "3s")
			}
			if tc.env {
				environ = append(environ, "JETSCHED_LEASE_TTL=5s")
			}
			if tc.file {
				args = append(args, "--config", file)
			}
			got := printed(t, environ, args...)["lease-ttl"]
			if got.Value != tc.want || got.Source != tc.from {
				t.Fatalf("lease-ttl = %v from %s, want %s from %s", got.Value, got.Source, tc.want, tc.from)
			}
		})
	}
	t.Run("JETSCHED_CONFIG names the file, --config wins", func(t *testing.T) {
		t.Parallel()
		other := writeFile(t, "other.yaml", "lease-ttl: 9s\n")
		if got := printed(t, []string{configEnv + "=" + file})["lease-ttl"]; got.Value != "7s" || got.Source != fromFile {
			t.Errorf("JETSCHED_CONFIG: lease-ttl = %v from %s, want 7s from file", got.Value, got.Source)
		}
		if got := printed(t, []string{configEnv + "=" + file}, "--config", other)["lease-ttl"]; got.Value != "9s" {
			t.Errorf("--config over JETSCHED_CONFIG: lease-ttl = %v, want 9s", got.Value)
		}
	})
	t.Run("NATS_URL is the default of nats-url", func(t *testing.T) {
		t.Parallel()
		nats := "NATS_URL=nats://natsurl:4222"
		for _, tc := range []struct {
			environ    []string
			args       []string
			want, from string
		}{
			{[]string{nats}, nil, "nats://natsurl:4222", fromDefault},
			{[]string{nats, "JETSCHED_NATS_URL=nats://env:4222"}, nil, "nats://env:4222", fromEnv},
			{[]string{nats, "JETSCHED_NATS_URL=nats://env:4222"}, []string{"--config", file}, "nats://file:4222", fromFile},
		} {
			if got := printed(t, tc.environ, tc.args...)["nats-url"]; got.Value != tc.want || got.Source != tc.from {
				t.Errorf("%q %q: nats-url = %v from %s, want %s from %s", tc.environ, tc.args, got.Value, got.Source, tc.want, tc.from)
			}
		}
	})
}

// TestConfigCountsAsExplicit: --listen and --data-dir from the file or
// the environment override --server-config's, as the flags do; left at
// their defaults they do not.
func TestConfigCountsAsExplicit(t *testing.T) {
	t.Parallel()
	serverConf := writeFile(t, "server.conf", "listen: 127.0.0.1:4999\njetstream { store_dir: \"/tmp/from-server-conf\" }\n")
	for _, tc := range []struct {
		name          string
		environ, args []string
		listen, dir   string // "" : the server config's
	}{
		{"defaults: the server config's", nil, nil, "", ""},
		{"file", nil, []string{"--config", writeFile(t, "c.yaml", "listen: 127.0.0.1:5111\ndata-dir: /tmp/from-file\n")}, "127.0.0.1:5111", "/tmp/from-file"},
		{"env", []string{"JETSCHED_LISTEN=127.0.0.1:5222", "JETSCHED_DATA_DIR=/tmp/from-env"}, nil, "127.0.0.1:5222", "/tmp/from-env"},
		{"flag", nil, []string{"--listen", "127.0.0.1:5333"}, "127.0.0.1:5333", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := checkRun(t, tc.environ, append([]string{"--server-config", serverConf}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Listen != tc.listen || cfg.DataDir != tc.dir {
				t.Fatalf("listen %q, data dir %q; want %q and %q", cfg.Listen, cfg.DataDir, tc.listen, tc.dir)
			}
		})
	}
}

// TestConfigRefusesBadInput: an unknown key or variable close to a
// setting, a value of the wrong type or out of range, a broken file: exit
// 2 before anything connects, naming the key, the file and line or the
// variable, and the reason.
func TestConfigRefusesBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		file    string // config file content ("": no file)
		environ []string
		want    []string // in stderr
	}{
		{"unknown key, suggested", "workers: 8\nlease-tll: 5s\n", nil, []string{"line 2", `unknown key "lease-tll"`, "did you mean lease-ttl?"}},
		{"unknown key", "frobnicate: 1\n", nil, []string{"line 1", `unknown key "frobnicate"`}},
		{"bad duration", "replicas: 3\nlease-ttl: 10\n", nil, []string{"line 2", "lease-ttl", "a bare number needs a unit here; did you mean 10s or 10m?"}},
		{"bad int", "replicas: three\n", nil, []string{"line 1", "replicas", "want a whole number"}},
		{"bad bool", "console-read-only: maybe\n", nil, []string{"line 1", "console-read-only"}},
		{"list for a single value", "lease-ttl: [5s]\n", nil, []string{"line 1", "lease-ttl", "not a list"}},
		{"mapping value", "lease-ttl: {a: 1}\n", nil, []string{"line 1", "lease-ttl", "not a mapping"}},
		{"list of lists", "schedules: [[a]]\n", nil, []string{"line 1", "schedules", "item 1"}},
		{"no value", "instance:\n", nil, []string{"line 1", "instance", "no value"}},
		{"twice", "workers: 4\nworkers: 5\n", nil, []string{"line 2", "workers given twice (first on line 1)"}},
		{"hidden test flag", "clock-offset: 5s\n", nil, []string{"clock-offset", "command line"}},
		{"config in config", "config: other.yaml\n", nil, []string{"config", "does not name another"}},
		{"not a mapping", "- lease-ttl\n", nil, []string{"line 1", "want a mapping"}},
		{"broken YAML", "lease-ttl: [5s\n", nil, []string{"--config", "yaml"}},
		{"out of range, where it came from", "replicas: 9\n", nil, []string{"--replicas 9: must be 1 to 5", "(replicas: ", "line 1)"}},
		{"cross-flag rule", "claim-ttl: 2m\n", nil, []string{"--duplicate-window", "claim-ttl", "line 1"}},
		{"env bad value", "", []string{"JETSCHED_LEASE_TTL=soon"}, []string{"JETSCHED_LEASE_TTL", "lease-ttl", "soon"}},
		{"env out of range", "", []string{"JETSCHED_WORKERS=0"}, []string{"--workers 0", "(workers: JETSCHED_WORKERS)"}},
		{"env typo", "", []string{"JETSCHED_LEASE_TLL=5s"}, []string{"JETSCHED_LEASE_TLL", "did you mean JETSCHED_LEASE_TTL?"}},
		{"env hidden test flag", "", []string{"JETSCHED_CLOCK_OFFSET=5s"}, []string{"JETSCHED_CLOCK_OFFSET", "test setting"}},
		{"env bad list", "", []string{`JETSCHED_SCHEDULES=a,"b`}, []string{"JETSCHED_SCHEDULES", "comma-separated"}},
		{"missing JETSCHED_CONFIG file", "", []string{configEnv + "=/does/not/exist.yaml"}, []string{"--config", "/does/not/exist.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// An unreachable server: a check that let the input through
			// would fail to connect with exit 1, not 2.
			args := []string{"run", "--nats-url", "nats://127.0.0.1:1"}
			var path string
			if tc.file != "" {
				path = writeFile(t, "bad.yaml", tc.file)
				args = append(args, "--config", path)
			}
			code, _, stderr := cliEnv(t, tc.environ, args...)
			if code != ExitInvalid {
				t.Fatalf("exit %d, want %d; stderr: %s", code, ExitInvalid, stderr)
			}
			for _, want := range append(tc.want, path) {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q does not contain %q", stderr, want)
				}
			}
		})
	}
}

// TestDemoTakesConfig: demo reads the same file and variables as run.
func TestDemoTakesConfig(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "demo.yaml", "lease-tll: 5s\n")
	if code, _, stderr := cliEnv(t, nil, "demo", "--config", file); code != ExitInvalid || !strings.Contains(stderr, "did you mean lease-ttl?") {
		t.Errorf("demo --config with a typo: exit %d, stderr %q; want %d suggesting lease-ttl", code, stderr, ExitInvalid)
	}
	if code, _, stderr := cliEnv(t, []string{"JETSCHED_REPLICAS=7"}, "demo"); code != ExitInvalid || !strings.Contains(stderr, "(replicas: JETSCHED_REPLICAS)") {
		t.Errorf("demo with JETSCHED_REPLICAS=7: exit %d, stderr %q; want %d naming the variable", code, stderr, ExitInvalid)
	}
}

// TestConfigUnknownEnvWarns: a JETSCHED_ variable neither a setting nor
// close to one (a test harness's) is a warning, not an error; the
// variables that are not flags are neither.
func TestConfigUnknownEnvWarns(t *testing.T) {
	t.Parallel()
	a := &app{environ: []string{"JETSCHED_FAULT_SUMMARY=/tmp/x", "JETSCHED_AUDIT_KEY=0123456789abcdef0123", "JETSCHED_CRASH_AT=publish", "JETSCHED_CONFIG="}}
	ref := a.runFlagSet()
	st, err := applyConfig(a.runFlagSet(), ref, "", a.environ)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.warnings) != 1 || !strings.Contains(st.warnings[0], "JETSCHED_FAULT_SUMMARY") {
		t.Fatalf("warnings %q, want one naming JETSCHED_FAULT_SUMMARY", st.warnings)
	}
}

// TestConfigLists: repeatable and list flags take YAML lists in the file
// and comma-separated values in the environment; a flag replaces the
// file's list, and an empty list in the file replaces the environment's.
func TestConfigLists(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "lists.yaml", "schedules:\n  - /a/billing.yaml\n  - /a/reports.yaml\nconsole-operators: [alice, bob]\nconsole-trusted-proxies: []\n")
	environ := []string{"JETSCHED_CONSOLE_TRUSTED_PROXIES=10.0.0.1,10.0.0.0/8", "JETSCHED_CONSOLE_OPERATORS=carol"}
	list := func(e jsonEntry) []string {
		var out []string
		for _, v := range e.Value.([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		environ []string
		args    []string
		key     string
		want    []string
	}{
		{"file list", nil, []string{"--config", file}, "schedules", []string{"/a/billing.yaml", "/a/reports.yaml"}},
		{"file flow list over env", environ, []string{"--config", file}, "console-operators", []string{"alice", "bob"}},
		{"env list", environ, nil, "console-trusted-proxies", []string{"10.0.0.1", "10.0.0.0/8"}},
		{"empty file list over env", environ, []string{"--config", file}, "console-trusted-proxies", nil},
		{"flags over the file list", nil, []string{"--config", file, "--schedules", "/b/x.yaml", "--schedules", "/b/y.yaml"}, "schedules", []string{"/b/x.yaml", "/b/y.yaml"}},
	} {
		if got := list(printed(t, tc.environ, tc.args...)[tc.key]); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %s = %q, want %q", tc.name, tc.key, got, tc.want)
		}
	}
}

// TestConfigEnvNaming: every setting of run is read from
// JETSCHED_<FLAG NAME, upper case, - as _>.
func TestConfigEnvNaming(t *testing.T) {
	t.Parallel()
	var environ []string
	n := 0
	(&app{}).runFlagSet().VisitAll(func(f *pflag.Flag) {
		if !configurable(f) {
			return
		}
		want := "JETSCHED_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if envName(f.Name) != want {
			t.Errorf("envName(%s) = %s, want %s", f.Name, envName(f.Name), want)
		}
		v := map[string]string{"bool": "true", "int": "5", "int64": "5", "duration": "5s", "stringSlice": "a,b", "stringArray": "a"}[f.Value.Type()]
		environ = append(environ, want+"="+cmp.Or(v, "value"))
		n++
	})
	got := printed(t, environ)
	if len(got) != n {
		t.Errorf("config print has %d keys, want the %d settings", len(got), n)
	}
	for key, e := range got {
		if e.Source != fromEnv || e.Env != envName(key) {
			t.Errorf("%s: source %s (%s), want env %s", key, e.Source, e.Env, envName(key))
		}
	}
}

// TestConfigPrintRedacts: config print shows no password, no secret in a
// NATS URL and not the audit key's value; paths to secret files are shown.
func TestConfigPrintRedacts(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "secret.yaml", "user: sched\npassword: hunter2-file\ncreds: /etc/jetsched/scheduler.creds\n")
	environ := []string{"JETSCHED_AUDIT_KEY=audit-key-value-0123456789", "JETSCHED_NATS_URL=nats://sched:url-pass@n1:4222,nats://s3cr3t-token@n2:4222,nats://n3:4222"}
	for _, format := range []string{"yaml", "json"} {
		code, stdout, stderr := cliEnv(t, environ, "config", "print", "--format", format, "--config", file)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", format, code, stderr)
		}
		for _, secret := range []string{"hunter2-file", "url-pass", "s3cr3t-token", "audit-key-value"} {
			if strings.Contains(stdout, secret) {
				t.Errorf("%s: the output shows the secret %q:\n%s", format, secret, stdout)
			}
		}
		for _, shown := range []string{"/etc/jetsched/scheduler.creds", "nats://sched:" + redacted + "@n1:4222,nats://" + redacted + "@n2:4222,nats://n3:4222"} {
			if !strings.Contains(stdout, shown) {
				t.Errorf("%s: the output does not show %q:\n%s", format, shown, stdout)
			}
		}
	}
	_, stdout, _ := cliEnv(t, environ, "config", "print", "--config", file)
	for _, line := range []string{"# password: " + redacted + "  # file, a secret: not printed", "# JETSCHED_AUDIT_KEY is set"} {
		if !strings.Contains(stdout, line) {
			t.Errorf("yaml output has no line %q:\n%s", line, stdout)
		}
	}
}

// TestConfigPrintRoundTrip: config print's YAML, loaded back with --config
// alone, gives the same settings (the secrets excepted, which it leaves
// out), each from the file or its default.
func TestConfigPrintRoundTrip(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "in.yaml", "replicas: 3\nschedules: [/a/one.yaml, '/a/two, with comma.yaml']\nconsole-read-only: true\nevents: \"default,fired\"\nname-prefix: \"123\"\n")
	environ := []string{"JETSCHED_LEASE_TTL=4s", "JETSCHED_INSTANCE=node-1", "JETSCHED_PASSWORD=secret-pw", "JETSCHED_USER=u"}
	args := []string{"config", "print", "--config", file, "--metrics-listen", "127.0.0.1:9464", "--fire-history", "-1", "--replicas", "1"}
	code, first, stderr := cliEnv(t, environ, args...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	back := writeFile(t, "printed.yaml", first)
	code, second, stderr := cliEnv(t, nil, "config", "print", "--config", back)
	if code != ExitOK {
		t.Fatalf("printed config refused: exit %d: %s\n%s", code, stderr, first)
	}
	var a, b map[string]any
	if err := yaml.Unmarshal([]byte(first), &a); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(second), &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("round trip changed the settings:\nfirst:\n%s\nsecond:\n%s", first, second)
	}
	if a["replicas"] != 1 || a["lease-ttl"] != "4s" || a["name-prefix"] != "123" || len(a) != 10 {
		t.Errorf("printed settings %v: want replicas 1, lease-ttl 4s, name-prefix \"123\" and 10 keys", a)
	}
	for key, e := range printed(t, nil, "--config", back) {
		if _, set := a[key]; set != (e.Source == fromFile) {
			t.Errorf("%s: from %s after the round trip", key, e.Source)
		}
	}
}

// TestConfigExampleFile: deploy/jetsched.yaml parses and, with its files
// replaced by test ones, passes every check run makes.
func TestConfigExampleFile(t *testing.T) {
	t.Parallel()
	example := filepath.Join("..", "..", "deploy", "jetsched.yaml")
	write := func(name, content string) string { return writeFile(t, name, content) }
	cfg, err := checkRun(t, nil, "--config", example,
		"--audit-key-file", write("audit.key", "0123456789abcdef0123456789abcdef"),
		"--schedules", write("billing.yaml", "schedules:\n  - {id: invoices, workflow: billing, cron: \"0 6 * * *\", tz: Europe/London}\n"),
		"--console-auth", "token:"+write("tokens", "alice operator 0123456789abcdef0123\n"))
	if err != nil {
		t.Fatalf("deploy/jetsched.yaml: %v", err)
	}
	if cfg.Embedded || cfg.Setup.Replicas != 3 || cfg.MetricsListen != "0.0.0.0:9464" || cfg.Conn.Creds != "/etc/jetsched/scheduler.creds" || !strings.HasPrefix(cfg.Console.Listen, "0.0.0.0:") {
		t.Errorf("deploy/jetsched.yaml: embedded %v, replicas %d, metrics %q, creds %q, console %q", cfg.Embedded, cfg.Setup.Replicas, cfg.MetricsListen, cfg.Conn.Creds, cfg.Console.Listen)
	}
}

// TestConfigPrintRedactsEverySecret: config print hides a password in a
// URL without a scheme, a token, a query's password, an nkey seed given
// where a seed file's path belongs, and credentials or a key pasted in
// place of their file's path; it shows the rest of each URL.
func TestConfigPrintRedactsEverySecret(t *testing.T) {
	t.Parallel()
	const seed = "SUAMLK2ZNL35WSMW37E7UD4VZ7ELPKW7DHC3BWBSD2GCZ7IUQQXZIORRBU"
	cases := []struct {
		args   []string
		secret string
		shown  string
	}{
		{[]string{"--nats-url", "u:PWNOSCHEME@h:4222"}, "PWNOSCHEME", "u:" + redacted + "@h:4222"},
		{[]string{"--nats-url", "nats://TOKENVALUE@h:4222,nats://h2:4222"}, "TOKENVALUE", "nats://" + redacted + "@h:4222,nats://h2:4222"},
		{[]string{"--nats-url", "nats://h:4222?password=QUERYPW"}, "QUERYPW", "nats://h:4222?" + redacted},
		{[]string{"--nkey", seed}, seed, redacted},
		{[]string{"--creds", "-----BEGIN NATS USER JWT-----\neyJ0eXAiOiJKV1QiCREDSJWT\n------END NATS USER JWT------"}, "CREDSJWT", redacted},
		{[]string{"--tls-key", "-----BEGIN PRIVATE KEY-----\nMIIEvKEYBODY\n-----END PRIVATE KEY-----"}, "KEYBODY", redacted},
	}
	for _, c := range cases {
		for _, format := range []string{"yaml", "json"} {
			code, stdout, stderr := cliEnv(t, nil, append([]string{"config", "print", "--format", format}, c.args...)...)
			if code != ExitOK {
				t.Fatalf("%s %q: exit %d: %s", format, c.args, code, stderr)
			}
			if strings.Contains(stdout, c.secret) {
				t.Errorf("%s %q: the output shows the secret %q:\n%s", format, c.args, c.secret, stdout)
			}
			if !strings.Contains(stdout, c.shown) {
				t.Errorf("%s %q: the output does not show %q", format, c.args, c.shown)
			}
		}
	}
}
