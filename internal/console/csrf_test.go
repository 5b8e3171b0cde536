package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/jetsched/jetsched/internal/console"
)

// pageIn fetches path as the holder of token in the browser session
// named session.
func (e *env) pageIn(token, session, path string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.web+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.doIn(req, token, session)
}

// postIn submits a form as the holder of token in the browser session
// named session.
func (e *env) postIn(token, session, path string, form url.Values) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.web+path, strings.NewReader(form.Encode()))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return e.doIn(req, token, session)
}

// TestCSRFTokenIsPerSession (issue 52): the forms' CSRF token belongs to
// one browser session, not to the user: another session of the same user
// cannot use it, and signing in again replaces it. Under every auth mode
// that has operators without a login (none) and with one (token).
func TestCSRFTokenIsPerSession(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		start func(*testing.T, console.Config) *env
		token string
	}{
		{"none", newLocalEnv, ""},
		{"token", newEnv, operatorToken},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := c.start(t, console.Config{})
			e.cli("schedule", "add", "--id", "job", "--workflow", "wf", "--every", "1h")
			_, page := e.pageIn(c.token, "one", "/schedules/job")
			one := csrf(t, page)
			_, page = e.pageIn(c.token, "two", "/schedules/job")
			two := csrf(t, page)
			if one == two {
				t.Fatalf("two sessions of the same user got the same CSRF token %q", one)
			}
			_, page = e.pageIn(c.token, "one", "/schedules/job")
			if again := csrf(t, page); again != one {
				t.Errorf("the same session got another CSRF token on its next page: %q, then %q", one, again)
			}
			if code, _ := e.postIn(c.token, "two", "/schedules/job/pause", url.Values{"csrf": {one}}); code != http.StatusForbidden {
				t.Errorf("session one's token in session two: %d, want 403", code)
			}
			if code, _ := e.postIn(c.token, "fresh", "/schedules/job/pause", url.Values{"csrf": {one}}); code != http.StatusForbidden {
				t.Errorf("session one's token without a session: %d, want 403", code)
			}
			if e.paused("job") != nil {
				t.Fatal("a token of another session paused the schedule")
			}
			if code, body := e.postIn(c.token, "one", "/schedules/job/pause", url.Values{"csrf": {one}}); code != http.StatusSeeOther {
				t.Fatalf("session one's own token: %d\n%s", code, body)
			}
			if e.paused("job") == nil {
				t.Fatal("session one's pause did not pause")
			}
			if c.token == "" {
				return
			}
			// Signing in again starts a new session: the old token is dead.
			if code, _ := e.postIn("", "one", "/login", url.Values{"token": {operatorToken}, "next": {"/schedules/job"}}); code != http.StatusSeeOther {
				t.Fatalf("login: %d", code)
			}
			if code, _ := e.postIn("", "one", "/schedules/job/resume", url.Values{"csrf": {one}}); code != http.StatusForbidden {
				t.Errorf("the token of before the login: %d, want 403", code)
			}
			_, page = e.pageIn("", "one", "/schedules/job")
			if code, _ := e.postIn("", "one", "/schedules/job/resume", url.Values{"csrf": {csrf(t, page)}}); code != http.StatusSeeOther || e.paused("job") != nil {
				t.Errorf("the token of after the login: %d, paused %v", code, e.paused("job"))
			}
		})
	}
}
