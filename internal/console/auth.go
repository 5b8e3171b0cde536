package console

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/user"
	"slices"
	"strings"
	"sync"

	"golang.org/x/crypto/bcrypt"
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
	basic   map[string]basicUser
	proxies []*net.IPNet
	local   string

	mu       sync.Mutex
	verified map[string][32]byte // user -> sha256(password) that bcrypt accepted
}

type tokenUser struct {
	user string
	role Role
	sum  [32]byte // sha256 of the token
}

type basicUser struct {
	hash []byte
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
	a := &authenticator{Auth: cfg, verified: map[string][32]byte{}}
	return a, a.load()
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
		a.basic = map[string]basicUser{}
		return a.eachLine(func(n int, line string) error {
			parts := strings.Split(line, ":")
			if len(parts) < 2 || len(parts) > 3 || parts[0] == "" {
				return fmt.Errorf("line %d: want USER:BCRYPT-HASH[:ROLE]", n)
			}
			if _, err := bcrypt.Cost([]byte(parts[1])); err != nil {
				return fmt.Errorf("line %d: user %s: not a bcrypt hash (htpasswd -B, or `scheduler console hash`): %w", n, parts[0], err)
			}
			role := RoleViewer
			if len(parts) == 3 {
				var err error
				if role, err = ParseRole(parts[2]); err != nil {
					return fmt.Errorf("line %d: %w", n, err)
				}
			}
			a.basic[parts[0]] = basicUser{hash: []byte(parts[1]), role: role}
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

// eachLine calls fn for every meaningful line of a.File.
func (a *authenticator) eachLine(fn func(n int, line string) error) error {
	data, err := os.ReadFile(a.File)
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
		return a.checkToken(tok)
	case AuthBasic:
		u, p, ok := r.BasicAuth()
		if !ok {
			return Identity{}, errUnauthenticated
		}
		return a.checkBasic(u, p)
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
func (a *authenticator) checkBasic(name, password string) (Identity, error) {
	u, ok := a.basic[name]
	if !ok {
		// Spend the same time as for a known user.
		_ = bcrypt.CompareHashAndPassword([]byte(dummyHash), []byte(password))
		return Identity{}, errUnauthenticated
	}
	sum := sha256.Sum256([]byte(password))
	a.mu.Lock()
	known, seen := a.verified[name]
	a.mu.Unlock()
	if seen && subtle.ConstantTimeCompare(known[:], sum[:]) == 1 {
		return Identity{User: name, Role: u.role}, nil
	}
	if bcrypt.CompareHashAndPassword(u.hash, []byte(password)) != nil {
		return Identity{}, errUnauthenticated
	}
	a.mu.Lock()
	a.verified[name] = sum
	a.mu.Unlock()
	return Identity{User: name, Role: u.role}, nil
}

// dummyHash is a bcrypt hash (cost 10) of nothing anyone types, for
// timing.
const dummyHash = "$2a$10$CwTycUXWue0Thq9StjUM0uJ8DPLKXt1FYlwYpQW0G5nXW.y1Drq3W"

// HashPassword returns the bcrypt hash of password for a basic-auth file.
func HashPassword(password string) (string, error) {
	if len(password) < 8 {
		return "", errors.New("console: a password of at least 8 characters, please")
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	return string(h), err
}

type identityKey struct{}

func withIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

func identityOf(r *http.Request) Identity {
	id, _ := r.Context().Value(identityKey{}).(Identity)
	return id
}
