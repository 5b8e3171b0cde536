package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"time"
)

// sessionCookie holds a browser session's random id, which the forms'
// CSRF tokens are bound to.
const sessionCookie = "jetsched_console_session"

// csrfPeriod is how often the CSRF tokens change: a token is good in the
// period it was made and the next, so from csrfPeriod to twice that.
const csrfPeriod = 2 * time.Hour

// csrfKeys makes and checks the forms' CSRF tokens: an HMAC, under a key
// random per process, of the user, the session id and the period. Another
// session of the same user, another user, an earlier period or another
// process's token does not pass.
type csrfKeys struct {
	key []byte
	now func() time.Time
}

// newCSRFKeys draws a fresh key; now is the clock the periods follow.
func newCSRFKeys(now func() time.Time) csrfKeys {
	k := csrfKeys{key: make([]byte, 32), now: now}
	_, _ = rand.Read(k.key) // crypto/rand.Read never fails (it crashes the program instead)
	return k
}

// token is the current token of user's session.
func (k csrfKeys) token(user, session string) string {
	return k.tokenAt(user, session, k.period())
}

// valid reports whether got is the token of user's session of this period
// or the one before.
func (k csrfKeys) valid(user, session, got string) bool {
	if session == "" || got == "" {
		return false
	}
	p := k.period()
	ok := hmac.Equal([]byte(got), []byte(k.tokenAt(user, session, p)))
	ok = hmac.Equal([]byte(got), []byte(k.tokenAt(user, session, p-1))) || ok
	return ok
}

func (k csrfKeys) period() int64 { return k.now().UnixNano() / int64(csrfPeriod) }

func (k csrfKeys) tokenAt(user, session string, period int64) string {
	m := hmac.New(sha256.New, k.key)
	m.Write([]byte("csrf\x00"))
	m.Write([]byte(session))
	m.Write([]byte{0})
	m.Write(binary.BigEndian.AppendUint64(nil, uint64(period)))
	m.Write([]byte(user))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// sessionIDLen is the length of a session id: 32 random bytes in
// unpadded base64url.
const sessionIDLen = 43

// newSessionID is a fresh random session id.
func newSessionID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// validSessionID reports whether id has the form newSessionID makes.
func validSessionID(id string) bool {
	b, err := base64.RawURLEncoding.DecodeString(id)
	return len(id) == sessionIDLen && err == nil && len(b) == 32
}

// startSession sets a new session cookie on w and returns its id.
func (s *Server) startSession(w http.ResponseWriter) string {
	id := newSessionID()
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", HttpOnly: true,
		Secure: s.cfg.TLSCert != "", SameSite: http.SameSiteStrictMode})
	return id
}

// endSession expires the session cookie.
func (s *Server) endSession(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: s.cfg.TLSCert != "", SameSite: http.SameSiteStrictMode})
}

// session is r's session id, starting a session when r has none (or one
// this console did not make).
func (s *Server) session(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(sessionCookie); err == nil && validSessionID(c.Value) {
		return c.Value
	}
	return s.startSession(w)
}
