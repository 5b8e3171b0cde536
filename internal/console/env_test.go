package console_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"github.com/jetsched/jetsched/internal/daemon/daemontest"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/cli"
	"github.com/jetsched/jetsched/internal/console"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Tokens of the test console's users.
const (
	operatorToken = "operator-token-0123456789"
	viewerToken   = "viewer-token-0123456789ab"
	auditKey      = "console-test-audit-key-0123456789"
)

// usCalendar has Christmas on 12-25.
const usCalendar = `{"zone":"America/New_York","holidays":[
 {"name":"New Year's Day","date":"01-01","observed":"nearest"},
 {"name":"Independence Day","date":"07-04","observed":"nearest"},
 {"name":"Thanksgiving","month":11,"weekday":"thu","nth":4},
 {"name":"Christmas Day","date":"12-25","observed":"nearest"}]}`

// env is a real nats-server, a scheduler (fire engine, admin API, audit
// trail) and its web console.
type env struct {
	t    *testing.T
	url  string // NATS
	d    *daemon.Daemon
	web  string // the console's base URL, without the trailing slash
	jars map[string]http.CookieJar
}

// newEnv starts everything; cfg configures the console (Listen and Conn
// are filled in). With a zero Auth, the console uses token auth with the
// operator and viewer tokens.
func newEnv(t *testing.T, cfg console.Config) *env {
	t.Helper()
	if cfg.Auth.Mode == console.AuthNone && cfg.Auth.File == "" {
		file := filepath.Join(t.TempDir(), "tokens")
		tokens := "# user role token\nalice operator " + operatorToken + "\nvictor viewer " + viewerToken + "\n"
		if err := os.WriteFile(file, []byte(tokens), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg.Auth = console.Auth{Mode: console.AuthToken, File: file}
	}
	return startEnv(t, cfg)
}

// newLocalEnv starts everything with a console that authenticates nobody
// (--auth none on loopback, the default of `scheduler console`).
func newLocalEnv(t *testing.T, cfg console.Config) *env {
	t.Helper()
	cfg.Auth = console.Auth{Mode: console.AuthNone}
	return startEnv(t, cfg)
}

// startEnv starts everything with cfg's Auth as it is.
func startEnv(t *testing.T, cfg console.Config) *env {
	t.Helper()
	srv := natstest.Start(t)
	cfg.Listen = "127.0.0.1:0"
	d, err := daemon.Start(context.Background(), daemon.Config{
		Conn: natsconn.Options{URL: srv.URL()}, AuditKey: []byte(auditKey), Console: cfg,
	})
	if err != nil {
		t.Fatal(err)
	}
	daemontest.Cleanup(t, d)
	return &env{t: t, url: srv.URL(), d: d, web: strings.TrimSuffix(d.ConsoleURL(), "/"), jars: map[string]http.CookieJar{}}
}

// cli runs the scheduler command line against the env's NATS and fails
// the test on a non-zero exit.
func (e *env) cli(args ...string) string {
	e.t.Helper()
	var out, errOut bytes.Buffer
	if code := cli.Main(context.Background(), append(args, "--nats-url", e.url), &out, &errOut); code != cli.ExitOK {
		e.t.Fatalf("scheduler %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String()
}

// file writes a temporary file.
func (e *env) file(name, content string) string {
	e.t.Helper()
	p := filepath.Join(e.t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// get fetches a console page as the holder of token ("" for none).
func (e *env) get(token, path string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.web+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.do(req, token)
}

// post submits a form as the holder of token.
func (e *env) post(token, path string, form url.Values, headers ...string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.web+path, strings.NewReader(form.Encode()))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return e.do(req, token)
}

func (e *env) do(req *http.Request, token string) (int, string) {
	e.t.Helper()
	return e.doIn(req, token, token)
}

// doIn sends req as the holder of token ("" for none) in the browser
// session named session (its own cookies).
func (e *env) doIn(req *http.Request, token, session string) (int, string) {
	e.t.Helper()
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e.client(session).Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// client is an HTTP client that does not follow redirects and keeps the
// cookies of the browser session named session.
func (e *env) client(session string) *http.Client {
	jar, ok := e.jars[session]
	if !ok {
		jar, _ = cookiejar.New(nil)
		e.jars[session] = jar
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// csrf reads the CSRF token from a page's forms.
func csrf(t *testing.T, page string) string {
	t.Helper()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on the page")
	}
	return m[1]
}

// paused reads a schedule's pause through the CLI (nil when it is not
// paused).
func (e *env) paused(id string) *kvstore.Pause {
	e.t.Helper()
	var v struct {
		State *kvstore.State `json:"state"`
	}
	if err := json.Unmarshal([]byte(e.cli("schedule", "get", id, "--json")), &v); err != nil {
		e.t.Fatal(err)
	}
	if v.State == nil {
		return nil
	}
	return v.State.Paused
}

// auditEntry waits for an entry of the audit trail for action on target
// and returns it as JSON.
func (e *env) auditEntry(action, target string) map[string]any {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cons, err := e.d.JetStream().OrderedConsumer(ctx, audit.Stream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		e.t.Fatal(err)
	}
	for {
		m, err := cons.Next(jetstream.FetchContext(ctx))
		if err != nil {
			e.t.Fatalf("no audit entry %s %s: %v", action, target, err)
		}
		var entry map[string]any
		if json.Unmarshal(m.Data(), &entry) == nil && entry["action"] == action && entry["target"] == target {
			return entry
		}
	}
}

// subscribe opens the live-update stream of topic as the holder of
// token: one value on the channel per "change" event; stop closes it.
func (e *env) subscribe(token, topic string) (events <-chan struct{}, stop func()) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.web+"/events?topic="+url.QueryEscape(topic), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		e.t.Fatalf("/events?topic=%s: %s %s", topic, resp.Status, resp.Header.Get("Content-Type"))
	}
	ch := make(chan struct{}, 1)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "event: change") {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
	}()
	return ch, func() {
		cancel()
		for range ch {
		}
	}
}

// waitPage fetches path as the holder of token until cond holds for the
// page: at once, then after each live-update event of topic (the console's
// own signal that something changed), until within passes.
func (e *env) waitPage(token, path, topic string, within time.Duration, cond func(string) bool) string {
	e.t.Helper()
	events, stop := e.subscribe(token, topic)
	defer stop()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		_, page := e.get(token, path)
		if cond(page) {
			return page
		}
		select {
		case _, ok := <-events:
			if !ok {
				e.t.Fatalf("%s: the event stream ended before the condition held:\n%s", path, page)
			}
		case <-deadline.C:
			e.t.Fatalf("%s: the condition did not hold within %s:\n%s", path, within, page)
		}
	}
}
