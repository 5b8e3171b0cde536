package console

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/user"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/jetsched/jetsched/internal/regfile"
)

// Role is what a console user may do.
type Role int

// Roles: a viewer reads every page; an operator also acts.
const (
	RoleViewer Role = iota
	RoleOperator
)

func (r Role) String() string {
	if r == RoleOperator {
		return "operator"
	}
	return "viewer"
}

// ParseRole reads "viewer" or "operator".
func ParseRole(s string) (Role, error) {
	switch s {
	case "viewer":
		return RoleViewer, nil
	case "operator":
		return RoleOperator, nil
	}
	return 0, fmt.Errorf("role %q: want viewer or operator", s)
}

// AuthMode is how the console tells who is asking.
type AuthMode int

// Authentication modes.
const (
	// AuthNone trusts every request as an operator named after the local
	// user: loopback only.
	AuthNone AuthMode = iota
	// AuthToken wants a bearer token from a tokens file, in the
	// Authorization header or the cookie the /login page sets.
	AuthToken
	// AuthBasic wants HTTP basic authentication checked against a file of
	// bcrypt hashes (htpasswd -B).
	AuthBasic
	// AuthProxy trusts a reverse proxy's user header, from listed proxy
	// addresses only.
	AuthProxy
)

func (m AuthMode) String() string {
	return [...]string{"none", "token", "basic", "proxy"}[m]
}

// Auth configures authentication.
type Auth struct {
	Mode AuthMode
	// File is the tokens file (AuthToken: "USER ROLE TOKEN" per line) or
	// the password file (AuthBasic: "USER:BCRYPT-HASH[:ROLE]" per line,
	// role viewer when absent). Blank lines and lines starting with # are
	// ignored.
	File string
	// Header is the proxy's user header (AuthProxy), e.g. X-Forwarded-User.
	Header string
	// TrustedProxies are the addresses or CIDR ranges requests must come
	// from (AuthProxy); others are refused.
	TrustedProxies []string
	// Operators are the users who get the operator role under AuthProxy
	// (everyone else is a viewer).
	Operators []string
}

// authenticator is an Auth with its files read.
type authenticator struct {
	Auth
	tokens  []tokenUser
	basic   []basicUser
	costs   []int          // the distinct bcrypt costs of the basic file, ascending
	dummies map[int][]byte // cost -> a bcrypt hash of a random password
	proxies []*net.IPNet
	local   string

	// compare is bcrypt.CompareHashAndPassword (a seam for tests that
	// count the hashing work).
	compare func(hash, password []byte) error
	// throttle slows down guessing: failed sign-ins per user and address.
	throttle *throttle

	mu       sync.Mutex
	verified map[string][32]byte // user -> sha256(password) that bcrypt accepted
}

type tokenUser struct {
	user string
	role Role
	sum  [32]byte // sha256 of the token
}

type basicUser struct {
	name string
	sum  [32]byte // sha256 of the name
	hash []byte
	cost int
	role Role
}

// ParseAuth reads the --auth flag: "none", "token:FILE", "basic:FILE" or
// "proxy:HEADER".
func ParseAuth(s string) (Auth, error) {
	mode, arg, _ := strings.Cut(s, ":")
	switch mode {
	case "", "none":
		if arg != "" {
			return Auth{}, fmt.Errorf("--auth %q: none takes no argument", s)
		}
		return Auth{Mode: AuthNone}, nil
	case "token":
		return Auth{Mode: AuthToken, File: arg}, nil
	case "basic":
		return Auth{Mode: AuthBasic, File: arg}, nil
	case "proxy":
		return Auth{Mode: AuthProxy, Header: arg}, nil
	}
	return Auth{}, fmt.Errorf("--auth %q: want none, token:FILE, basic:FILE or proxy:HEADER", s)
}

func (a Auth) validate() error {
	switch a.Mode {
	case AuthToken, AuthBasic:
		if a.File == "" {
			return fmt.Errorf("console: --auth %s needs a file (%s:FILE)", a.Mode, a.Mode)
		}
	case AuthProxy:
		if a.Header == "" {
			return errors.New("console: --auth proxy needs the user header (proxy:X-Forwarded-User)")
		}
		if len(a.TrustedProxies) == 0 {
			return errors.New("console: --auth proxy needs --trusted-proxies: the addresses the proxy connects from")
		}
	}
	if a.Mode != AuthProxy && (len(a.TrustedProxies) > 0 || len(a.Operators) > 0) {
		return errors.New("console: --trusted-proxies and --operators go with --auth proxy:HEADER")
	}
	return nil
}

// newAuthenticator reads the files and parses the proxy ranges.
func newAuthenticator(cfg Auth) (*authenticator, error) {
	a := &authenticator{Auth: cfg, verified: map[string][32]byte{}, compare: bcrypt.CompareHashAndPassword,
		throttle: newThrottle(time.Now, throttleCapacity)}
	if err := a.load(); err != nil {
		return nil, err
	}
	return a, a.makeDummies()
}

// makeDummies hashes a random password at each cost of the basic file, for
// an unknown user to cost the same bcrypt work as a known one.
func (a *authenticator) makeDummies() error {
	a.dummies = map[int][]byte{}
	for _, c := range a.costs {
		pw := make([]byte, 16)
		_, _ = rand.Read(pw)
		h, err := bcrypt.GenerateFromPassword(pw, c)
		if err != nil {
			return fmt.Errorf("console: a bcrypt hash of cost %d: %w", c, err)
		}
		a.dummies[c] = h
	}
	return nil
}

func (a *authenticator) load() error {
	switch a.Mode {
	case AuthNone:
		a.local = "local"
		if u, err := user.Current(); err == nil {
			a.local = u.Username
		}
	case AuthToken:
		return a.eachLine(func(n int, line string) error {
			f := strings.Fields(line)
			if len(f) != 3 {
				return fmt.Errorf("line %d: want USER ROLE TOKEN", n)
			}
			role, err := ParseRole(f[1])
			if err != nil {
				return fmt.Errorf("line %d: %w", n, err)
			}
			if len(f[2]) < 16 {
				return fmt.Errorf("line %d: the token is shorter than 16 characters", n)
			}
			a.tokens = append(a.tokens, tokenUser{user: f[0], role: role, sum: sha256.Sum256([]byte(f[2]))})
			return nil
		})
	case AuthBasic:
		return a.eachLine(func(n int, line string) error {
			parts := strings.Split(line, ":")
			if len(parts) < 2 || len(parts) > 3 || parts[0] == "" {
				return fmt.Errorf("line %d: want USER:BCRYPT-HASH[:ROLE]", n)
			}
			cost, err := bcrypt.Cost([]byte(parts[1]))
			if err != nil {
				return fmt.Errorf("line %d: user %s: not a bcrypt hash (htpasswd -B, or `scheduler console hash`): %w", n, parts[0], err)
			}
			if slices.ContainsFunc(a.basic, func(u basicUser) bool { return u.name == parts[0] }) {
				return fmt.Errorf("line %d: user %s is listed twice", n, parts[0])
			}
			role := RoleViewer
			if len(parts) == 3 {
				var err error
				if role, err = ParseRole(parts[2]); err != nil {
					return fmt.Errorf("line %d: %w", n, err)
				}
			}
			a.basic = append(a.basic, basicUser{name: parts[0], sum: sha256.Sum256([]byte(parts[0])), hash: []byte(parts[1]), cost: cost, role: role})
			if !slices.Contains(a.costs, cost) {
				a.costs = append(a.costs, cost)
				slices.Sort(a.costs)
			}
			return nil
		})
	case AuthProxy:
		for _, p := range a.TrustedProxies {
			if !strings.Contains(p, "/") {
				ip := net.ParseIP(p)
				if ip == nil {
					return fmt.Errorf("console: --trusted-proxies %q: not an IP address or CIDR range", p)
				}
				bits := 128
				if ip.To4() != nil {
					bits = 32
				}
				p = fmt.Sprintf("%s/%d", p, bits)
			}
			_, n, err := net.ParseCIDR(p)
			if err != nil {
				return fmt.Errorf("console: --trusted-proxies %q: %w", p, err)
			}
			a.proxies = append(a.proxies, n)
		}
	}
	return nil
}

// maxAuthFileBytes is the largest --auth file the console reads (tens of
// thousands of users): a device or a FIFO given by mistake is refused,
// not read without end.
const maxAuthFileBytes = 4 << 20

// eachLine calls fn for every meaningful line of a.File.
func (a *authenticator) eachLine(fn func(n int, line string) error) error {
	data, err := regfile.Read(a.File, maxAuthFileBytes)
	if err != nil {
		return fmt.Errorf("console: --auth %s file: %w", a.Mode, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	count := 0
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := fn(n, line); err != nil {
			return fmt.Errorf("console: --auth %s file %s: %w", a.Mode, a.File, err)
		}
		count++
	}
	if count == 0 {
		return fmt.Errorf("console: --auth %s file %s has no users", a.Mode, a.File)
	}
	return nil
}

// Identity is who a request comes from.
type Identity struct {
	User string
	Role Role
}

// Actor is what the audit trail records for the identity's actions.
func (id Identity) Actor() string { return "console:" + id.User }

// errUnauthenticated: the request carries no valid credentials.
var errUnauthenticated = errors.New("console: who are you? (no valid credentials)")

// errUntrustedProxy: under AuthProxy, a request from elsewhere.
var errUntrustedProxy = errors.New("console: requests must come through the trusted reverse proxy")

// tokenCookie carries the bearer token a browser gave on /login.
const tokenCookie = "jetsched_console_token"

// authenticate tells who r comes from.
func (a *authenticator) authenticate(r *http.Request) (Identity, error) {
	switch a.Mode {
	case AuthNone:
		return Identity{User: a.local, Role: RoleOperator}, nil
	case AuthToken:
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			if c, err := r.Cookie(tokenCookie); err == nil {
				tok = c.Value
			}
		}
		if tok == "" {
			return Identity{}, errUnauthenticated
		}
		return a.signIn(r, "", func() (Identity, error) { return a.checkToken(tok) })
	case AuthBasic:
		u, p, ok := r.BasicAuth()
		if !ok {
			return Identity{}, errUnauthenticated
		}
		return a.signIn(r, u, func() (Identity, error) { return a.checkBasic(u, p) })
	case AuthProxy:
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		ip := net.ParseIP(host)
		if err != nil || ip == nil || !slices.ContainsFunc(a.proxies, func(n *net.IPNet) bool { return n.Contains(ip) }) {
			return Identity{}, errUntrustedProxy
		}
		name := strings.TrimSpace(r.Header.Get(a.Header))
		if name == "" {
			return Identity{}, errUnauthenticated
		}
		role := RoleViewer
		if slices.Contains(a.Operators, name) {
			role = RoleOperator
		}
		return Identity{User: name, Role: role}, nil
	}
	return Identity{}, errUnauthenticated
}

// throttledError: too many failed sign-ins of the user or from the
// address; try again after Retry.
type throttledError struct{ Retry time.Duration }

func (e *throttledError) Error() string {
	return fmt.Sprintf("console: too many failed sign-ins; try again in %s", e.Retry.Round(time.Second))
}

// signIn runs check, the credentials of user ("": unnamed, a token) sent
// from r's address, unless that user or address must still wait after
// failures, and counts a failure against both.
func (a *authenticator) signIn(r *http.Request, user string, check func() (Identity, error)) (Identity, error) {
	keys := []string{addrKey(r.RemoteAddr)}
	if user != "" {
		keys = append(keys, userKey(user))
	}
	if d := a.throttle.wait(keys...); d > 0 {
		return Identity{}, &throttledError{Retry: d}
	}
	id, err := check()
	switch {
	case err != nil:
		a.throttle.fail(keys...)
	case user != "":
		a.throttle.forgive(userKey(user))
	}
	return id, err
}

// checkToken finds the user of a bearer token, comparing every entry in
// constant time.
func (a *authenticator) checkToken(tok string) (Identity, error) {
	sum := sha256.Sum256([]byte(tok))
	var found *tokenUser
	for i := range a.tokens {
		if subtle.ConstantTimeCompare(sum[:], a.tokens[i].sum[:]) == 1 {
			found = &a.tokens[i]
		}
	}
	if found == nil {
		return Identity{}, errUnauthenticated
	}
	return Identity{User: found.user, Role: found.role}, nil
}

// checkBasic checks a user's password against its bcrypt hash. bcrypt is
// slow on purpose (tens of milliseconds), and a browser sends the password
// with every request: a password bcrypt accepted is remembered by its
// SHA-256 until another one is tried for that user.
//
// Whether the user exists does not show in the work done: the name is
// compared with every user's in constant time, and every check not
// answered from memory runs one bcrypt comparison per cost of the file,
// against the user's hash at its cost and against a random password's at
// the others (all of them for an unknown user).
func (a *authenticator) checkBasic(name, password string) (Identity, error) {
	nameSum := sha256.Sum256([]byte(name))
	var found *basicUser
	for i := range a.basic {
		if subtle.ConstantTimeCompare(nameSum[:], a.basic[i].sum[:]) == 1 {
			found = &a.basic[i]
		}
	}
	sum := sha256.Sum256([]byte(password))
	if found != nil {
		a.mu.Lock()
		known, seen := a.verified[name]
		a.mu.Unlock()
		if seen && subtle.ConstantTimeCompare(known[:], sum[:]) == 1 {
			return Identity{User: name, Role: found.role}, nil
		}
	}
	ok := false
	for _, c := range a.costs {
		if found != nil && found.cost == c {
			ok = a.compare(found.hash, []byte(password)) == nil
		} else {
			_ = a.compare(a.dummies[c], []byte(password))
		}
	}
	if !ok {
		return Identity{}, errUnauthenticated
	}
	a.mu.Lock()
	a.verified[name] = sum
	a.mu.Unlock()
	return Identity{User: name, Role: found.role}, nil
}

// HashPassword returns the bcrypt hash of password for a basic-auth file.
func HashPassword(password string) (string, error) {
	if len(password) < 8 {
		return "", errors.New("console: a password of at least 8 characters, please")
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	return string(h), err
}

// caller is who a request comes from and its browser session's id.
type caller struct {
	id      Identity
	session string
}

type callerKey struct{}

func withCaller(ctx context.Context, c caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

func callerOf(r *http.Request) caller {
	c, _ := r.Context().Value(callerKey{}).(caller)
	return c
}

func identityOf(r *http.Request) Identity { return callerOf(r).id }

func sessionOf(r *http.Request) string { return callerOf(r).session }
