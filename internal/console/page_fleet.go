package console

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jetsched/jetsched/pkg/admin"
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
	if _, err := s.auth.checkToken(tok); err != nil {
		http.Redirect(w, r, "/login?failed=1&next="+url.QueryEscape(next), http.StatusSeeOther)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: tok, Path: "/", HttpOnly: true,
		Secure: s.cfg.TLSCert != "", SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// safeNext keeps a redirect on this site: a path, never "//host".
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/schedules"
	}
	return next
}
