package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestDurationFlags: --work, --timeout and --grace take the scheduler's
// duration grammar ("2 minutes", "1d 3h", "90s"), and a bad one is refused
// (exit 2) in its words, naming the flag, never Go's ("time: unknown
// unit").
func TestDurationFlags(t *testing.T) {
	var errOut bytes.Buffer
	o, err := parseArgs([]string{"--work", "2 minutes", "--timeout", "1h 30m", "--grace", "90s"}, &errOut)
	if err != nil {
		t.Fatalf("parseArgs: %v: %s", err, errOut.String())
	}
	if o.work != 2*time.Minute || o.timeout != 90*time.Minute || o.grace != 90*time.Second {
		t.Fatalf("work %s, timeout %s, grace %s", o.work, o.timeout, o.grace)
	}
	if o, _ := parseArgs(nil, &errOut); o.grace != 30*time.Second || o.work != 0 {
		t.Fatalf("defaults: work %s, grace %s", o.work, o.grace)
	}
	for _, c := range []struct{ flag, value, want string }{
		{"--work", "2 horus", `unknown unit "horus"`},
		{"--timeout", "30", "a bare number needs a unit here; did you mean 30s or 30m?"},
		{"--grace", "-5s", "-grace"},
	} {
		errOut.Reset()
		code := run(context.Background(), []string{c.flag, c.value}, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), c.want) || !strings.Contains(errOut.String(), c.flag[1:]) ||
			strings.Contains(errOut.String(), "time: ") {
			t.Errorf("%s %q: exit %d: %s; want exit 2 naming the flag and %q", c.flag, c.value, code, errOut.String(), c.want)
		}
	}
}
