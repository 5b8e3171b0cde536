package console

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
)

// overdueRows is how many overdue schedules the fleet page lists.
const overdueRows = 100

type fleetData struct {
	base
	Summary      admin.Summary
	SummaryErr   string
	Fleet        fleetView
	Lateness     latencyView
	Overdue      []overdueRow
	OverdueCount int
	Tolerance    time.Duration
	Now          time.Time
}

func (s *Server) fleetPage(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	d := fleetData{base: s.base(r, "Fleet", "fleet", topicFleet), Now: now, Tolerance: s.cfg.DeadManTolerance}
	var st admin.StatusPage
	if err := s.api.call(r.Context(), "", "status", admin.ListRequest{Limit: 1}, &st); err != nil {
		d.SummaryErr = err.Error()
	}
	d.Summary = st.Summary
	d.Fleet = s.index.fleet(now)
	d.Lateness = s.fires.view(now)
	d.Overdue, d.OverdueCount = s.index.overdue(now, s.cfg.DeadManTolerance, overdueRows)
	s.pages.render(w, http.StatusOK, "fleet", d)
}

// loginPage asks for a bearer token (--auth token): the browser keeps it
// in an HttpOnly cookie.
func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	d := base{Title: "Sign in", Auth: s.cfg.Auth.Mode.String()}
	if s.cfg.Auth.Mode != AuthToken {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if r.URL.Query().Get("failed") != "" {
		d.Error = "That token is not valid."
	}
	s.pages.render(w, http.StatusOK, "login", struct {
		base
		Next string
	}{d, safeNext(r.URL.Query().Get("next"))})
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if s.cfg.Auth.Mode != AuthToken {
		http.NotFound(w, r)
		return
	}
	next := safeNext(r.PostFormValue("next"))
	tok := strings.TrimSpace(r.PostFormValue("token"))
	_, err := s.auth.signIn(r, "", func() (Identity, error) { return s.auth.checkToken(tok) })
	var throttled *throttledError
	if errors.As(err, &throttled) {
		tooMany(w, throttled)
		return
	}
	if err != nil {
		http.Redirect(w, r, "/login?failed=1&next="+url.QueryEscape(next), http.StatusSeeOther)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: tok, Path: "/", HttpOnly: true,
		Secure: s.cfg.TLSCert != "", SameSite: http.SameSiteStrictMode})
	s.startSession(w) // a new session, so the CSRF tokens of before are dead
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	s.endSession(w)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// safeNext keeps a redirect after sign-in on this site: a local path
// ("/fleet?x=1"), or "/" for anything else: another host ("//evil",
// "/\\evil", "https://evil"), a scheme ("javascript:"), a relative path,
// a backslash anywhere (browsers read it as a slash), and a control
// character, space or non-ASCII byte anywhere (browsers drop tabs and
// newlines, so "/\t/evil" would become "//evil"), encoded or not in the
// path.
func safeNext(next string) string {
	const home = "/"
	if len(next) > 2048 || !localPath(next) {
		return home
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || !localPath(u.Path) {
		return home
	}
	return next
}

// localPath reports whether p starts with one slash and holds only
// printable ASCII without backslashes.
func localPath(p string) bool {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") {
		return false
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c <= ' ' || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}
