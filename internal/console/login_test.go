package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/jetsched/jetsched/internal/console"
)

// postLogin signs in with tok and next, and returns the status and the
// response's Location and Retry-After.
func (e *env) postLogin(session, tok, next string) (code int, location, retry string) {
	e.t.Helper()
	form := url.Values{"token": {tok}, "next": {next}}
	req, err := http.NewRequest(http.MethodPost, e.web+"/login", strings.NewReader(form.Encode()))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := e.client(session).Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location"), resp.Header.Get("Retry-After")
}

// TestLoginIsThrottled (issue 52): after a few wrong tokens from an
// address, /login answers 429 with Retry-After, without checking the
// token, even the right one.
func TestLoginIsThrottled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, console.Config{})
	tried := 0
	for ; tried < 20; tried++ {
		code, _, retry := e.postLogin("guesser", fmt.Sprintf("guess-%020d", tried), "/")
		if code == http.StatusTooManyRequests {
			if n, err := strconv.Atoi(retry); err != nil || n < 1 {
				t.Errorf("429 with Retry-After %q, want whole seconds", retry)
			}
			break
		}
		if code != http.StatusSeeOther {
			t.Fatalf("wrong token %d: %d", tried, code)
		}
	}
	if tried == 20 {
		t.Fatal("20 wrong tokens in a row, and no 429")
	}
	if code, _, _ := e.postLogin("guesser", operatorToken, "/"); code != http.StatusTooManyRequests {
		t.Errorf("the right token while the address waits: %d, want 429", code)
	}
	if code, _ := e.get(operatorToken, "/fleet"); code != http.StatusTooManyRequests {
		t.Errorf("a bearer token from the waiting address: %d, want 429", code)
	}
}

// TestLoginRedirectStaysLocal (issue 52): where /login sends the browser
// after signing in is a local path, or /.
func TestLoginRedirectStaysLocal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, console.Config{})
	for next, want := range map[string]string{
		"/schedules?q=x":        "/schedules?q=x",
		"/\t/evil.example":      "/",
		"/%09/evil.example":     "/",
		"//evil.example":        "/",
		"/\\evil.example":       "/",
		"\\/\\/evil.example":    "/",
		"https://evil.example/": "/",
		"javascript:alert(1)":   "/",
	} {
		code, loc, _ := e.postLogin("s", operatorToken, next)
		if code != http.StatusSeeOther || loc != want {
			t.Errorf("next %q: %d to %q, want 303 to %q", next, code, loc, want)
		}
	}
}
