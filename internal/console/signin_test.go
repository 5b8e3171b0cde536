package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// TestBasicAuthDoesTheSameWorkForUnknownUsers (issue 52): whether a user
// exists does not show in the bcrypt work a wrong password costs. With
// hashes of two costs in the file, every check not answered from memory
// runs one comparison per cost, the same for a known user (right or wrong
// password) as for an unknown one, counted through the comparison seam.
func TestBasicAuthDoesTheSameWorkForUnknownUsers(t *testing.T) {
	alice, _ := bcrypt.GenerateFromPassword([]byte("alice-password"), bcrypt.MinCost)
	bob, _ := bcrypt.GenerateFromPassword([]byte("bob-password"), bcrypt.MinCost+1)
	a, err := newAuthenticator(Auth{Mode: AuthBasic, File: writeAuthFile(t, "alice:"+string(alice)+":operator\nbob:"+string(bob)+"\n")})
	if err != nil {
		t.Fatal(err)
	}
	var costs []int
	a.compare = func(hash, password []byte) error {
		c, err := bcrypt.Cost(hash)
		if err != nil {
			t.Fatalf("compared against %q, not a bcrypt hash", hash)
		}
		costs = append(costs, c)
		return bcrypt.CompareHashAndPassword(hash, password)
	}
	want := []int{bcrypt.MinCost, bcrypt.MinCost + 1}
	for _, c := range []struct {
		user, password string
		ok             bool
	}{
		{"carol", "carol-password", false},
		{"alice", "wrong-password", false},
		{"bob", "wrong-password", false},
		{"", "", false},
		{"alice\x00", "alice-password", false},
		{"alice", "alice-password", true},
		{"bob", "bob-password", true},
	} {
		costs = nil
		_, err := a.checkBasic(c.user, c.password)
		if (err == nil) != c.ok {
			t.Errorf("%q/%q: %v", c.user, c.password, err)
		}
		slices.Sort(costs)
		if !slices.Equal(costs, want) {
			t.Errorf("%q/%q: bcrypt comparisons at costs %v, want %v", c.user, c.password, costs, want)
		}
	}
	costs = nil
	if _, err := a.checkBasic("alice", "alice-password"); err != nil || len(costs) != 0 {
		t.Errorf("a password bcrypt accepted before: %v, %d comparisons", err, len(costs))
	}
}

// fakeClock is a clock tests move by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// TestThrottle: after the free failures, each failure of a key makes it
// wait twice as long up to the cap; another key does not wait; a success
// forgives the user; a key is forgotten after its last failure; and the
// map holds at most its capacity, dropping the least recently failing.
func TestThrottle(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	th := newThrottle(clock.now, 100)
	for range throttleFree {
		if d := th.wait("user:alice"); d != 0 {
			t.Fatalf("a free failure already waits %s", d)
		}
		th.fail("user:alice", "addr:192.0.2.1")
	}
	if d := th.wait("user:alice"); d != 0 {
		t.Fatalf("after %d failures: wait %s, want none", throttleFree, d)
	}
	wantWaits := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute}
	for _, want := range wantWaits {
		th.fail("user:alice", "addr:192.0.2.1")
		if d := th.wait("user:alice"); d != want {
			t.Fatalf("wait %s, want %s", d, want)
		}
		if d := th.wait("user:bob", "addr:192.0.2.1"); d != want {
			t.Fatalf("the address waits %s, want %s", d, want)
		}
		if d := th.wait("user:bob", "addr:192.0.2.2"); d != 0 {
			t.Fatalf("another user from another address waits %s", d)
		}
		clock.t = clock.t.Add(want - time.Millisecond)
		if d := th.wait("user:alice"); d != time.Millisecond {
			t.Fatalf("a millisecond before the end: wait %s", d)
		}
		clock.t = clock.t.Add(time.Millisecond)
		if d := th.wait("user:alice"); d != 0 {
			t.Fatalf("at the end: wait %s", d)
		}
	}
	th.forgive("user:alice")
	th.fail("user:alice")
	if d := th.wait("user:alice"); d != 0 {
		t.Errorf("a forgiven user waits %s after one failure", d)
	}
	th.fail("addr:192.0.2.1")
	clock.t = clock.t.Add(throttleForget)
	th.fail("addr:192.0.2.1")
	if d := th.wait("addr:192.0.2.1"); d != 0 {
		t.Errorf("an address forgotten after %s waits %s after one more failure", throttleForget, d)
	}

	small := newThrottle(clock.now, 3)
	for i := range 10 {
		small.fail(fmt.Sprintf("addr:10.0.0.%d", i))
		clock.t = clock.t.Add(time.Second)
		if n := small.size(); n > 3 {
			t.Fatalf("%d keys kept, capacity 3", n)
		}
	}
	for range throttleFree {
		small.fail("addr:10.0.0.9")
	}
	small.fail("addr:10.0.0.0")
	small.fail("addr:10.0.0.9")
	if small.wait("addr:10.0.0.9") == 0 {
		t.Error("a full map dropped the key that failed last")
	}
}

func TestAddrKey(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.7:5555":              "addr:192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:5555": "addr:2001:db8:1:2::/64",
		"[2001:db8:1:2::9]:1":         "addr:2001:db8:1:2::/64",
		"[::ffff:192.0.2.7]:5555":     "addr:192.0.2.7",
		"pipe":                        "addr:pipe",
	} {
		if got := addrKey(in); got != want {
			t.Errorf("addrKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSignInIsThrottled: a guesser of basic-auth passwords and of tokens
// is answered "wait" (without a check) after the free failures, for the
// user it guesses and from its address, and the right password does not
// pass while it waits.
func TestSignInIsThrottled(t *testing.T) {
	alice, _ := bcrypt.GenerateFromPassword([]byte("alice-password"), bcrypt.MinCost)
	basic, err := newAuthenticator(Auth{Mode: AuthBasic, File: writeAuthFile(t, "alice:"+string(alice)+"\n")})
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := newAuthenticator(Auth{Mode: AuthToken, File: writeAuthFile(t, "alice operator aaaaaaaaaaaaaaaaaaaa\n")})
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	basic.throttle = newThrottle(clock.now, 100)
	tokens.throttle = newThrottle(clock.now, 100)
	basicReq := func(addr, user, password string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = addr
		r.SetBasicAuth(user, password)
		return r
	}
	tokenReq := func(addr, tok string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = addr
		r.Header.Set("Authorization", "Bearer "+tok)
		return r
	}
	for i := range throttleFree + 1 {
		if _, err := basic.authenticate(basicReq("192.0.2.1:1", "alice", fmt.Sprint("guess", i))); !errors.Is(err, errUnauthenticated) {
			t.Fatalf("guess %d: %v", i, err)
		}
		if _, err := tokens.authenticate(tokenReq("192.0.2.1:1", fmt.Sprintf("guess-%017d", i))); !errors.Is(err, errUnauthenticated) {
			t.Fatalf("token guess %d: %v", i, err)
		}
	}
	var throttled *throttledError
	if _, err := basic.authenticate(basicReq("192.0.2.1:1", "alice", "alice-password")); !errors.As(err, &throttled) || throttled.Retry != time.Second {
		t.Errorf("the right password while the guesser waits: %v", err)
	}
	if _, err := basic.authenticate(basicReq("198.51.100.9:1", "alice", "alice-password")); !errors.As(err, &throttled) {
		t.Errorf("the guessed user from another address: %v, want to wait", err)
	}
	if _, err := tokens.authenticate(tokenReq("192.0.2.1:2", "aaaaaaaaaaaaaaaaaaaa")); !errors.As(err, &throttled) {
		t.Errorf("a token from the guessing address: %v, want to wait", err)
	}
	if id, err := tokens.authenticate(tokenReq("198.51.100.9:1", "aaaaaaaaaaaaaaaaaaaa")); err != nil || id.User != "alice" {
		t.Errorf("a token from another address: %+v %v", id, err)
	}
	clock.t = clock.t.Add(time.Second)
	if id, err := basic.authenticate(basicReq("198.51.100.9:1", "alice", "alice-password")); err != nil || id.User != "alice" {
		t.Errorf("the right password after the wait: %+v %v", id, err)
	}
}

// TestCSRFTokens: a token passes for its user and session in its period
// and the next, and no longer after; not for another session or user, and
// not under another process's key.
func TestCSRFTokens(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	k := newCSRFKeys(clock.now)
	s1, s2 := newSessionID(), newSessionID()
	if !validSessionID(s1) || s1 == s2 || validSessionID("short") || validSessionID(s1[:42]+"!") {
		t.Fatalf("session ids: %q %q", s1, s2)
	}
	tok := k.token("alice", s1)
	for _, c := range []struct {
		name          string
		user, session string
		got           string
		ok            bool
	}{
		{"its own", "alice", s1, tok, true},
		{"another session", "alice", s2, tok, false},
		{"another user", "bob", s1, tok, false},
		{"no session", "alice", "", k.token("alice", ""), false},
		{"empty", "alice", s1, "", false},
	} {
		if got := k.valid(c.user, c.session, c.got); got != c.ok {
			t.Errorf("%s: valid %v, want %v", c.name, got, c.ok)
		}
	}
	if other := newCSRFKeys(clock.now); other.valid("alice", s1, tok) {
		t.Error("another process's key accepts the token")
	}
	clock.t = clock.t.Add(csrfPeriod)
	if !k.valid("alice", s1, tok) {
		t.Error("the token of the period before is refused")
	}
	if k.token("alice", s1) == tok {
		t.Error("the token did not change with the period")
	}
	clock.t = clock.t.Add(csrfPeriod)
	if k.valid("alice", s1, tok) {
		t.Error("a token two periods old is accepted")
	}
}
