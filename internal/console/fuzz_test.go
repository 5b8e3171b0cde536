package console_test

import (
	"context"
	"fmt"
	"github.com/jetsched/jetsched/internal/daemon/daemontest"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/cli"
	"github.com/jetsched/jetsched/internal/console"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/natstest"
)

// fuzzConsole is a console over a real nats-server and scheduler (admin
// API), with a schedule "job", and a session of the operator with its
// CSRF token.
type fuzzConsole struct {
	handler http.Handler
	session *http.Cookie
	csrf    string
	addrs   atomic.Uint32
}

func startFuzzConsole(f *testing.F) *fuzzConsole {
	f.Helper()
	srv := natstest.Start(f)
	d, err := daemon.Start(context.Background(), daemon.Config{Conn: natsconn.Options{URL: srv.URL()}, AuditKey: []byte(auditKey)})
	if err != nil {
		f.Fatal(err)
	}
	daemontest.Cleanup(f, d)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(nc.Close)
	tokens := filepath.Join(f.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("alice operator "+operatorToken+"\nvictor viewer "+viewerToken+"\n"), 0o600); err != nil {
		f.Fatal(err)
	}
	s, err := console.Start(context.Background(), console.Config{Conn: nc, Listen: "127.0.0.1:0", Auth: console.Auth{Mode: console.AuthToken, File: tokens}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = s.Stop(context.Background()) })
	fc := &fuzzConsole{handler: s.Handler()}
	var out, errOut strings.Builder
	if code := cli.Main(context.Background(), []string{"schedule", "add", "--id", "job", "--workflow", "wf", "--every", "1h", "--nats-url", srv.URL()}, &out, &errOut); code != cli.ExitOK {
		f.Fatalf("schedule add: exit %d: %s", code, errOut.String())
	}
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/schedules/job", nil)
	req.Header.Set("Authorization", "Bearer "+operatorToken)
	rec := httptest.NewRecorder()
	fc.handler.ServeHTTP(rec, req)
	for _, c := range rec.Result().Cookies() {
		if c.Name == "jetsched_console_session" {
			fc.session = c
		}
	}
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(rec.Body.String())
	if m == nil || fc.session == nil {
		f.Fatalf("no session or CSRF token from the schedule's page: %d", rec.Code)
	}
	fc.csrf = m[1]
	return fc
}

// foreignHost is the test's own reading of which Host headers are not the
// console's (which has no --allowed-hosts and listens on 127.0.0.1):
// anything but localhost or a loopback address, with or without a port.
func foreignHost(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if h == "localhost" {
		return false
	}
	ip := net.ParseIP(h)
	return ip == nil || !ip.IsLoopback()
}

// streamEnder is a recorder that ends its request (end) at the first
// Flush: a live stream has then answered, and would otherwise run until
// the request's deadline.
type streamEnder struct {
	*httptest.ResponseRecorder
	end context.CancelFunc
}

// Flush flushes the recorder and ends the request.
func (s *streamEnder) Flush() {
	s.ResponseRecorder.Flush()
	s.end()
}

// FuzzHandlers drives the console's handler with any method, path, query,
// form, Host, Origin, Sec-Fetch-Site and credentials: it never panics,
// never answers 5xx (NATS is up), and never answers a foreign Host with
// anything but a refusal.
func FuzzHandlers(f *testing.F) {
	fc := startFuzzConsole(f)
	type seed struct {
		method, path, query, form, host, origin, site string
		who                                           uint8
		withSession                                   bool
	}
	for _, s := range []seed{
		{"GET", "/schedules", "state=paused&q=job", "", "127.0.0.1:8090", "", "", 1, false},
		{"GET", "/schedules/job", "month=2026-12&acursor=x", "", "localhost", "", "", 2, false},
		{"GET", "/schedules/job", "", "", "evil.example:8090", "", "same-origin", 1, true},
		{"POST", "/schedules/job/pause", "", "note=n&until=2h", "127.0.0.1", "http://127.0.0.1", "same-origin", 1, true},
		{"POST", "/schedules/job/resume", "", "", "evil.example", "http://evil.example", "same-origin", 1, true},
		{"POST", "/schedules/job/skip", "", "count=3", "[::1]:8090", "", "", 1, true},
		{"POST", "/schedules/job/backfill", "", "from=2026-01-01T00:00&to=2026-01-02T00:00&rate=0.5", "localhost:1", "", "", 1, true},
		{"POST", "/schedules/job/remove", "", "confirm=job&revision=1", "127.0.0.1", "null", "cross-site", 1, true},
		{"POST", "/timers/cancel", "", "run=r&step=s", "127.0.0.1", "", "", 1, true},
		{"POST", "/login", "", "token=" + operatorToken + "&next=/%09/evil.example", "127.0.0.1", "", "", 0, false},
		{"GET", "/login", "next=//evil.example&failed=1", "", "127.0.0.1", "", "", 0, false},
		{"GET", "/events", "topic=schedule:job", "", "127.0.0.1", "", "", 2, false},
		{"GET", "/calendars/us", "year=99999", "", "127.0.0.1", "", "", 1, false},
		{"GET", "/timers", "workflow=wf&run=r", "", "LOCALHOST.", "", "", 1, false},
		{"GET", "/fleet", "", "", "127.0.0.1.evil.example", "", "", 1, false},
		{"HEAD", "/static/console.css", "", "", "127.0.0.1", "", "", 0, false},
		{"DELETE", "/schedules/job", "", "", "127.0.0.1", "", "", 3, false},
	} {
		f.Add(s.method, s.path, s.query, s.form, s.host, s.origin, s.site, s.who, s.withSession)
	}
	f.Fuzz(func(t *testing.T, method, path, query, form, host, origin, site string, who uint8, withSession bool) {
		target := "http://127.0.0.1" + path
		if query != "" {
			target += "?" + query
		}
		// A live stream (/events) is ended as soon as it has flushed its
		// first bytes (its status is out by then); the deadline only
		// bounds a handler stuck on NATS.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if withSession {
			form += "&csrf=" + url.QueryEscape(fc.csrf)
		}
		req, err := http.NewRequestWithContext(ctx, method, target, strings.NewReader(form))
		if err != nil {
			return // not a request a client could send
		}
		req.Host = host
		n := fc.addrs.Add(1) // an address per request: the sign-in throttle does not hide the pages
		req.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:5555", byte(n>>16), byte(n>>8), byte(n))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "text/html")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if site != "" {
			req.Header.Set("Sec-Fetch-Site", site)
		}
		switch who % 4 {
		case 1:
			req.Header.Set("Authorization", "Bearer "+operatorToken)
		case 2:
			req.Header.Set("Authorization", "Bearer "+viewerToken)
		case 3:
			req.Header.Set("Authorization", "Bearer "+path)
		}
		if withSession {
			req.AddCookie(fc.session)
		}
		rec := &streamEnder{ResponseRecorder: httptest.NewRecorder(), end: cancel}
		fc.handler.ServeHTTP(rec, req)
		code := rec.Code
		// A 5xx given after the request's own 30 s deadline (a starved
		// box, NATS not answering in time) is no handler fault: nobody
		// reads it. Every other check still holds for it.
		late := ctx.Err() == context.DeadlineExceeded
		if code >= 500 && !late {
			t.Fatalf("%s %s (Host %q): %d\n%s", method, target, host, code, rec.Body.String())
		}
		if foreignHost(host) && code < 400 {
			t.Fatalf("%s %s under the foreign Host %q: %d, want a refusal\n%s", method, target, host, code, rec.Body.String())
		}
	})
}
