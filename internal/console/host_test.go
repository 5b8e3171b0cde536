package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/jetsched/jetsched/internal/console"
)

// hostGet fetches path with the Host header host, in a session of its
// own, and returns the status and the body.
func (e *env) hostGet(host, path string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.web+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Host = host
	return e.doIn(req, "", "host:"+host)
}

// port is the console's port.
func (e *env) port() string {
	u, err := url.Parse(e.web)
	if err != nil {
		e.t.Fatal(err)
	}
	return u.Port()
}

// TestForeignHostIsRefused (issue 52, DNS rebinding): a console without
// auth on loopback answers only to its own names. A page asked for under
// another Host (a name the attacker's DNS points at 127.0.0.1) is refused
// with 421 and a plain explanation, without the page or a CSRF token, and
// a POST under that Host is not applied even with a genuine token and
// headers that call it same-origin.
func TestForeignHostIsRefused(t *testing.T) {
	t.Parallel()
	e := newLocalEnv(t, console.Config{AllowedHosts: []string{"console.example.com", "ops.example.net:8443"}})
	e.cli("schedule", "add", "--id", "x", "--workflow", "wf", "--every", "1h")
	e.cli("schedule", "pause", "x", "--note", "held")
	port := e.port()

	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port, "LOCALHOST", "console.example.com:" + port, "Console.Example.com", "ops.example.net:8443"} {
		if code, page := e.hostGet(host, "/schedules/x"); code != http.StatusOK || !strings.Contains(page, `name="csrf"`) {
			t.Errorf("Host %s: %d, want 200 and the page with its forms", host, code)
		}
	}
	foreign := []string{"evil.example:" + port, "evil.example", "localhost.evil.example:" + port, "127.0.0.1.nip.io:" + port,
		"console.example.com.evil.example", "ops.example.net:" + port, "10.1.2.3:" + port}
	for _, host := range foreign {
		code, body := e.hostGet(host, "/schedules/x")
		if code != http.StatusMisdirectedRequest || strings.Contains(body, "csrf") || strings.Contains(body, "<html") || !strings.Contains(body, "--allowed-hosts") {
			t.Errorf("Host %s: %d, want 421 with a plain explanation and nothing else:\n%s", host, code, body)
		}
	}

	// A genuine token, from the console's own name, used under the
	// attacker's: refused, and the schedule stays paused.
	_, page := e.hostGet("localhost:"+port, "/schedules/x")
	token := csrf(t, page)
	evil := "evil.example:" + port
	req, err := http.NewRequest(http.MethodPost, e.web+"/schedules/x/resume", strings.NewReader(url.Values{"csrf": {token}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = evil
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://"+evil)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if code, body := e.doIn(req, "", "host:"+evil); code != http.StatusMisdirectedRequest {
		t.Errorf("a resume under Host %s: %d, want 421:\n%s", evil, code, body)
	}
	if e.paused("x") == nil {
		t.Fatal("a resume under a foreign Host resumed the schedule")
	}

	// Under an allowed Host, an Origin that is not one of the console's
	// names is refused, whatever the request says of itself.
	for _, origin := range []string{"http://" + evil, "null", "http://localhost.evil.example:" + port} {
		req, err := http.NewRequest(http.MethodPost, e.web+"/schedules/x/resume", strings.NewReader(url.Values{"csrf": {token}}.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		if code, _ := e.doIn(req, "", "host:localhost:"+port); code != http.StatusForbidden {
			t.Errorf("a resume from Origin %s: %d, want 403", origin, code)
		}
	}
	if e.paused("x") == nil {
		t.Fatal("a resume from a foreign Origin resumed the schedule")
	}
}

// TestAllowedHostsAreChecked: a bad --allowed-hosts entry is refused
// naming the flag and the entry.
func TestAllowedHostsAreChecked(t *testing.T) {
	for _, bad := range []string{"https://console.example.com", "console.example.com/path", "", "host:port", "a b", "*.example.com"} {
		err := console.Config{AllowedHosts: []string{bad}}.Check()
		if err == nil || !strings.Contains(err.Error(), "--allowed-hosts") || !strings.Contains(err.Error(), bad) {
			t.Errorf("--allowed-hosts %q: %v, want an error naming the flag and the entry", bad, err)
		}
	}
	if err := (console.Config{AllowedHosts: []string{"console.example.com", "10.0.0.5", "[2001:db8::1]", "ops.example.net:8443"}}).Check(); err != nil {
		t.Errorf("good --allowed-hosts: %v", err)
	}
}
