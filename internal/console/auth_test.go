package console

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/sys/unix"
)

func writeAuthFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "auth")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseAuth(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Auth
		err  string
	}{
		{"none", Auth{Mode: AuthNone}, ""},
		{"", Auth{Mode: AuthNone}, ""},
		{"token:/etc/t", Auth{Mode: AuthToken, File: "/etc/t"}, ""},
		{"basic:/etc/p", Auth{Mode: AuthBasic, File: "/etc/p"}, ""},
		{"proxy:X-Forwarded-User", Auth{Mode: AuthProxy, Header: "X-Forwarded-User"}, ""},
		{"oauth:x", Auth{}, "want none, token:FILE"},
		{"none:x", Auth{}, "none takes no argument"},
	} {
		got, err := ParseAuth(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got.Mode != c.want.Mode || got.File != c.want.File || got.Header != c.want.Header {
			t.Errorf("%q: %+v %v", c.in, got, err)
		}
	}
}

func TestBasicAuth(t *testing.T) {
	alice, _ := bcrypt.GenerateFromPassword([]byte("alice-password"), bcrypt.MinCost)
	bob, _ := bcrypt.GenerateFromPassword([]byte("bob-password"), bcrypt.MinCost)
	file := writeAuthFile(t, "# users\nalice:"+string(alice)+":operator\n\nbob:"+string(bob)+"\n")
	a, err := newAuthenticator(Auth{Mode: AuthBasic, File: file})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		user, password string
		want           Identity
		ok             bool
	}{
		{"alice", "alice-password", Identity{"alice", RoleOperator}, true},
		{"alice", "alice-password", Identity{"alice", RoleOperator}, true}, // remembered
		{"alice", "bob-password", Identity{}, false},
		{"bob", "bob-password", Identity{"bob", RoleViewer}, true},
		{"carol", "alice-password", Identity{}, false},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.SetBasicAuth(c.user, c.password)
		id, err := a.authenticate(r)
		if (err == nil) != c.ok || id != c.want {
			t.Errorf("%s/%s: %+v %v", c.user, c.password, id, err)
		}
	}
	if _, err := a.authenticate(httptest.NewRequest(http.MethodGet, "/", nil)); !errors.Is(err, errUnauthenticated) {
		t.Errorf("no credentials: %v", err)
	}
	for _, bad := range []string{"alice:plaintext\n", "alice\n", "alice:" + string(alice) + ":admin\n", "# nobody\n", "alice:" + string(alice) + "\nalice:" + string(bob) + "\n"} {
		if _, err := newAuthenticator(Auth{Mode: AuthBasic, File: writeAuthFile(t, bad)}); err == nil {
			t.Errorf("basic file %q accepted", bad)
		}
	}
	h, err := HashPassword("long enough")
	if err != nil || bcrypt.CompareHashAndPassword([]byte(h), []byte("long enough")) != nil {
		t.Errorf("HashPassword: %q %v", h, err)
	}
}

func TestTokenAuth(t *testing.T) {
	file := writeAuthFile(t, "alice operator aaaaaaaaaaaaaaaaaaaa\nvictor viewer vvvvvvvvvvvvvvvvvvvv\n")
	a, err := newAuthenticator(Auth{Mode: AuthToken, File: file})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Authorization", "Bearer vvvvvvvvvvvvvvvvvvvv")
	if id, err := a.authenticate(r); err != nil || id != (Identity{"victor", RoleViewer}) {
		t.Errorf("bearer: %+v %v", id, err)
	}
	r = httptest.NewRequest(http.MethodGet, "/", nil)
	r.AddCookie(&http.Cookie{Name: tokenCookie, Value: "aaaaaaaaaaaaaaaaaaaa"})
	if id, err := a.authenticate(r); err != nil || id != (Identity{"alice", RoleOperator}) {
		t.Errorf("cookie: %+v %v", id, err)
	}
	r = httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Authorization", "Bearer aaaaaaaaaaaaaaaaaaab")
	if _, err := a.authenticate(r); !errors.Is(err, errUnauthenticated) {
		t.Errorf("a wrong token: %v", err)
	}
	if _, err := newAuthenticator(Auth{Mode: AuthToken, File: writeAuthFile(t, "alice operator short\n")}); err == nil {
		t.Error("a short token was accepted")
	}
}

func TestProxyAuth(t *testing.T) {
	a, err := newAuthenticator(Auth{Mode: AuthProxy, Header: "X-Forwarded-User", TrustedProxies: []string{"10.0.0.2", "192.168.0.0/24"}, Operators: []string{"alice"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		remote, user string
		want         Identity
		err          error
	}{
		{"10.0.0.2:5555", "alice", Identity{"alice", RoleOperator}, nil},
		{"192.168.0.77:5555", "bob", Identity{"bob", RoleViewer}, nil},
		{"10.0.0.3:5555", "alice", Identity{}, errUntrustedProxy},
		{"10.0.0.2:5555", "", Identity{}, errUnauthenticated},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = c.remote
		if c.user != "" {
			r.Header.Set("X-Forwarded-User", c.user)
		}
		id, err := a.authenticate(r)
		if id != c.want || !errors.Is(err, c.err) {
			t.Errorf("%s %q: %+v %v", c.remote, c.user, id, err)
		}
	}
	if _, err := newAuthenticator(Auth{Mode: AuthProxy, Header: "X", TrustedProxies: []string{"not-an-ip"}}); err == nil {
		t.Error("a bad proxy address was accepted")
	}
}

// TestAuthFileMustBeRegular: an --auth file that is a FIFO or a device
// is refused naming it, without blocking on the FIFO or reading the
// device without end.
func TestAuthFileMustBeRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "auth.fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, reason string }{{fifo, "FIFO"}, {"/dev/zero", "a device"}} {
		for _, mode := range []AuthMode{AuthBasic, AuthToken} {
			_, err := newAuthenticator(Auth{Mode: mode, File: c.path})
			if err == nil || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.reason) {
				t.Errorf("%v %s: %v, want an error naming the file and %q", mode, c.path, err, c.reason)
			}
		}
	}
}
