package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// TestConsoleRefusesBadFlags: a console beyond loopback without --auth,
// and other bad console flags, exit 2 naming the flag before anything
// connects (no NATS server runs here).
func TestConsoleRefusesBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"console", "--listen", "0.0.0.0:8090"}, "--auth"},
		{[]string{"console", "--listen", "nope"}, "--listen"},
		{[]string{"console", "--auth", "magic"}, "--auth"},
		{[]string{"console", "--auth", "proxy:X-User", "--listen", "0.0.0.0:8090"}, "--trusted-proxies"},
		{[]string{"console", "--https-cert", "c.pem"}, "--https-key"},
		{[]string{"console", "--operators", "alice"}, "--operators"},
		{[]string{"console", "--allowed-hosts", "https://console.example.com"}, "--allowed-hosts \"https://console.example.com\""},
		{[]string{"run", "--console-listen", "127.0.0.1:8090", "--console-allowed-hosts", "*.example.com"}, "--console-allowed-hosts \"*.example.com\""},
		{[]string{"run", "--console-listen", "0.0.0.0:8090"}, "--console-auth"},
		{[]string{"demo", "--console-listen", "[::]:8090"}, "--console-auth"},
	} {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), append(c.args, "--nats-url", "nats://127.0.0.1:1"), &out, &errOut)
		if code != ExitInvalid || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 naming %s", c.args, code, errOut.String(), c.want)
		}
	}
}

// TestConsoleHash prints a basic-auth file line.
func TestConsoleHash(t *testing.T) {
	var out, errOut bytes.Buffer
	a := &app{stdout: &out, stderr: &errOut}
	root := a.rootCommand()
	root.SetIn(strings.NewReader("correct horse battery\n"))
	root.SetArgs([]string{"console", "hash", "alice", "operator"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(strings.TrimSpace(out.String()), ":")
	if len(parts) != 3 || parts[0] != "alice" || parts[2] != "operator" || bcrypt.CompareHashAndPassword([]byte(parts[1]), []byte("correct horse battery")) != nil {
		t.Fatalf("hash line %q", out.String())
	}
	root = (&app{stdout: &out, stderr: &errOut}).rootCommand()
	root.SetIn(strings.NewReader("short\n"))
	root.SetArgs([]string{"console", "hash"})
	if err := root.Execute(); err == nil {
		t.Fatal("a short password was hashed")
	}
}
