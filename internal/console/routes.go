package console

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.Handle("GET /static/", serveStatic())
	mux.HandleFunc("GET /login", s.loginPage)
	mux.HandleFunc("POST /login", s.login)
	mux.HandleFunc("POST /logout", s.logout)

	app := http.NewServeMux()
	app.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/schedules", http.StatusSeeOther)
	})
	app.HandleFunc("GET /schedules", s.schedulesPage)
	app.HandleFunc("GET /schedules/{id}", s.schedulePage)
	app.HandleFunc("POST /schedules/{id}/{action}", s.scheduleAction)
	app.HandleFunc("GET /timers", s.timersPage)
	app.HandleFunc("POST /timers/cancel", s.cancelTimer)
	app.HandleFunc("GET /deadletters", s.deadLettersPage)
	app.HandleFunc("GET /deadletters/{seq}", s.deadLetterPage)
	app.HandleFunc("POST /deadletters/{seq}/{action}", s.deadLetterAction)
	app.HandleFunc("POST /deadletters/purge", s.purgeWorkflow)
	app.HandleFunc("GET /calendars", s.calendarsPage)
	app.HandleFunc("GET /calendars/{name}", s.calendarPage)
	app.HandleFunc("GET /fleet", s.fleetPage)
	app.HandleFunc("GET /events", s.serveEvents)
	mux.Handle("/", s.authenticated(app))

	// A request under a Host that is not the console's is refused before
	// anything else (DNS rebinding), then a POST from an Origin that is
	// not, then browsers' cross-site POSTs; the forms' CSRF tokens, bound
	// to the session, cover what those checks cannot see.
	return securityHeaders(s.hosts.guard(http.NewCrossOriginProtection().Handler(mux)))
}

// securityHeaders keeps the pages to their own origin: no inline script,
// no framing, no external anything.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// authenticated tells who asks before any page: a request without valid
// credentials gets the basic-auth challenge, the token login page, or a
// refusal, by mode.
func (s *Server) authenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := s.auth.authenticate(r)
		if err != nil {
			var throttled *throttledError
			switch {
			case errors.As(err, &throttled):
				tooMany(w, throttled)
			case errors.Is(err, errUntrustedProxy):
				http.Error(w, err.Error(), http.StatusForbidden)
			case s.cfg.Auth.Mode == AuthBasic:
				w.Header().Set("WWW-Authenticate", `Basic realm="jetsched console", charset="UTF-8"`)
				http.Error(w, err.Error(), http.StatusUnauthorized)
			case s.cfg.Auth.Mode == AuthToken && r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/html"):
				http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			default:
				w.Header().Set("WWW-Authenticate", `Bearer realm="jetsched console"`)
				http.Error(w, err.Error(), http.StatusUnauthorized)
			}
			return
		}
		next.ServeHTTP(w, r.WithContext(withCaller(r.Context(), caller{id: id, session: s.session(w, r)})))
	})
}

// tooMany answers a sign-in refused by the throttle: 429 with Retry-After
// in whole seconds.
func tooMany(w http.ResponseWriter, e *throttledError) {
	w.Header().Set("Retry-After", strconv.FormatInt(int64((e.Retry+time.Second-1)/time.Second), 10))
	http.Error(w, e.Error(), http.StatusTooManyRequests)
}

// errForbidden explains a refused action.
type errForbidden string

func (e errForbidden) Error() string { return string(e) }

// mayAct checks that r's user may act: an operator, a console that is not
// read-only, and the form's CSRF token.
func (s *Server) mayAct(r *http.Request) (Identity, error) {
	id := identityOf(r)
	switch {
	case s.cfg.ReadOnly:
		return id, errForbidden("the console is read-only (--read-only)")
	case id.Role != RoleOperator:
		return id, errForbidden("user " + id.User + " is a viewer; only operators act")
	}
	if !s.csrf.valid(id.User, sessionOf(r), r.PostFormValue("csrf")) {
		return id, errForbidden("the form's CSRF token is missing, wrong, of another session or expired: reload the page and try again")
	}
	return id, nil
}

// base is what every page's layout shows.
type base struct {
	Title    string
	Nav      string
	Topic    string // live-update topic, "" for none
	User     Identity
	CanAct   bool
	ReadOnly bool
	CSRF     string
	Done     string // the outcome of the action just taken
	Error    string
	Loading  bool // the schedule index is still loading
	Auth     string
}

func (s *Server) base(r *http.Request, title, nav, topic string) base {
	id := identityOf(r)
	b := base{Title: title, Nav: nav, Topic: topic, User: id, ReadOnly: s.cfg.ReadOnly,
		CanAct: id.Role == RoleOperator && !s.cfg.ReadOnly, Loading: !s.index.isLoaded(), Auth: s.cfg.Auth.Mode.String()}
	if b.CanAct {
		b.CSRF = s.csrf.token(id.User, sessionOf(r))
	}
	b.Done = doneMessage(r.URL.Query().Get("done"))
	return b
}

// doneMessage is the banner after an action (the redirect names one;
// nothing from the URL is shown as it is).
func doneMessage(code string) string {
	switch code {
	case "paused":
		return "Paused."
	case "resumed":
		return "Resumed."
	case "triggered":
		return "Triggered: one extra fire is on its way."
	case "skipped":
		return "The next slots will be skipped."
	case "backfill":
		return "Backfill started; its progress shows below."
	case "cancelled":
		return "Backfill cancelled."
	case "removed":
		return "Schedule removed."
	case "updated":
		return "Schedule updated: the changed fields are in the audit trail below."
	case "timer":
		return "Timer cancelled."
	case "timers":
		return "The run's timers are cancelled."
	case "dl-retried":
		return "Dead letter retried: the message is published again for the workflow's workers."
	case "dl-already":
		return "Already retried: nothing was published again."
	case "dl-purged":
		return "Dead letter purged."
	case "dl-purged-all":
		return "The workflow's dead letters are purged."
	case "logged-in":
		return "Signed in."
	}
	return ""
}
