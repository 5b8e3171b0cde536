package cli

import (
	"strings"
	"testing"
)

// TestConfigValidate: config validate checks a config file and the static
// schedules files it names without starting anything: a valid one prints
// what run would use and exits 0; a bad key, value or schedule exits 2
// naming the key (or the file, entry and field) and where it came from.
func TestConfigValidate(t *testing.T) {
	t.Parallel()
	schedules := writeFile(t, "schedules.yaml", "source: billing\nschedules:\n  - {id: invoices, workflow: billing, cron: '0 9 1 * *', tz: Europe/Paris, labels: {team: billing}}\n  - {id: heartbeat, workflow: ping, every: 30s}\n")
	good := writeFile(t, "jetsched.yaml", "nats-url: nats://user:secret@nats1:4222\nname-prefix: acme\nreplicas: 3\nschedules: ["+schedules+"]\nmetrics-listen: 127.0.0.1:9090\n")
	code, out, stderr := cliEnv(t, nil, "config", "validate", good)
	if code != ExitOK {
		t.Fatalf("config validate: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"config file: " + good, "nats: nats://user:<redacted>@nats1:4222", "buckets acme_*", "3 replica(s)",
		"static schedules: billing, 2 schedule(s)", "metrics: 127.0.0.1:9090", "valid:"} {
		if !strings.Contains(out, want) {
			t.Errorf("config validate's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "secret") {
		t.Errorf("config validate prints a password:\n%s", out)
	}
	// The file through JETSCHED_CONFIG, and no file at all, are valid too.
	if code, out, stderr := cliEnv(t, []string{configEnv + "=" + good}, "config", "validate"); code != ExitOK || !strings.Contains(out, "billing, 2") {
		t.Errorf("JETSCHED_CONFIG: exit %d: %s%s", code, out, stderr)
	}
	if code, out, stderr := cliEnv(t, nil, "config", "validate"); code != ExitOK || !strings.Contains(out, "nats: embedded, listening on 127.0.0.1:4222") {
		t.Errorf("no file: exit %d: %s%s", code, out, stderr)
	}

	badSchedules := writeFile(t, "bad-schedules.yaml", "schedules:\n  - {id: invoices, workflow: billing, cron: '0 9 31 2 *'}\n")
	badLabel := writeFile(t, "bad-label.yaml", "schedules:\n  - {id: invoices, workflow: billing, every: 1h, labels: {team: 'a b'}}\n")
	for _, tc := range []struct {
		name, file string
		args       []string
		want       []string
	}{
		{"unknown key", "replicas: 3\nlease-tll: 5s\n", nil, []string{"line 2", `unknown key "lease-tll"`, "did you mean lease-ttl?"}},
		{"bad value", "replicas: three\n", nil, []string{"line 1", "replicas", "want a whole number"}},
		{"out of range", "replicas: 9\n", nil, []string{"--replicas 9: must be 1 to 5", "line 1"}},
		{"a schedule that never fires", "schedules: [" + badSchedules + "]\n", nil, []string{badSchedules, "invoices", "cron"}},
		{"a bad label", "schedules: [" + badLabel + "]\n", nil, []string{badLabel, "invoices", "labels.team"}},
		{"a missing schedules file", "schedules: [/does/not/exist.yaml]\n", nil, []string{"--schedules", "/does/not/exist.yaml"}},
		{"bad memory limit", "memory-limit: lots\n", nil, []string{"--memory-limit", "memory-limit: "}},
		{"FILE and --config", "replicas: 1\n", []string{"--config", "/x.yaml"}, []string{"FILE or --config, not both"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "bad.yaml", tc.file)
			code, out, stderr := cliEnv(t, nil, append([]string{"config", "validate", path}, tc.args...)...)
			if code != ExitInvalid {
				t.Fatalf("exit %d, want %d; stdout %s stderr %s", code, ExitInvalid, out, stderr)
			}
			for _, want := range tc.want {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q does not contain %q", stderr, want)
				}
			}
		})
	}
	if code, _, stderr := cliEnv(t, nil, "config", "validate", "a.yaml", "b.yaml"); code != ExitInvalid {
		t.Errorf("two files: exit %d: %s", code, stderr)
	}
}
