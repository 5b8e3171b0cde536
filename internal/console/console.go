// Package console is jetsched's web console: server-rendered pages of the
// schedules, one schedule (spec, next fires explained, a month view, the
// ledger, fire headers), timers, calendars and the fleet, with live
// updates by Server-Sent Events and the operator actions (pause, resume,
// trigger, skip, backfill, remove, cancel a timer) as CSRF-protected forms.
//
// The console is a client like any other: it reads through the admin API
// (sched.api.>) and follows the buckets with KV watches and the fire and
// audit streams with ordered consumers, so it runs anywhere with NATS
// credentials, inside `scheduler run` (--console-listen) or on its own
// (`scheduler console`). Every action goes through the admin API with the
// header Sched-Actor: console:<user>, so the audit trail names the console
// user. Assets are embedded; the pages read without JavaScript.
package console

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// DefaultListen is where the console listens unless told otherwise:
// loopback only.
const DefaultListen = "127.0.0.1:8090"

// Config configures a console.
type Config struct {
	// Conn is the NATS connection the console reads and acts through.
	// Required.
	Conn *nats.Conn
	// JetStream is the context on Conn the console reads the buckets and
	// streams through: its domain or API prefix (natsconn.JetStream, from
	// --js-domain or --js-api-prefix) is where they are. Default:
	// jetstream.New(Conn).
	JetStream jetstream.JetStream
	// Layout names the buckets, streams and subjects (zero: the default
	// "sched" layout).
	Layout kvstore.Layout
	// Listen is the HTTP address. Default DefaultListen. A non-loopback
	// address needs Auth (ErrNeedsAuth).
	Listen string
	// Auth says who may look and act. The zero value trusts every request
	// as an operator named after the local user, which is allowed only on a
	// loopback Listen.
	Auth Auth
	// AllowedHosts are the host names (or addresses), each with an optional
	// :PORT, that the console answers to besides localhost, 127.0.0.1 and
	// [::1] (any port), the host of a specific Listen address, and, when
	// Listen binds every address (0.0.0.0, [::]), the machine's host name
	// and addresses. A request under any other Host gets 421 and nothing
	// else (DNS rebinding), and a POST whose Origin is not one of them
	// 403. The name a reverse proxy or a DNS name brings people in by
	// goes here.
	AllowedHosts []string
	// ReadOnly hides every action and refuses every POST.
	ReadOnly bool
	// TLSCert and TLSKey serve HTTPS (both or neither).
	TLSCert, TLSKey string
	// DeadManTolerance is how late a schedule's next slot may be before the
	// fleet page lists it overdue (the scheduler's --dead-man-tolerance).
	// Default 1m.
	DeadManTolerance time.Duration
	// AuditWindow is how many of the audit trail's last entries the console
	// reads at start for "last changed by" (it follows every new one).
	// Default 50,000.
	AuditWindow int
	// LatenessWindow is how far back the fleet page's lateness histogram
	// reaches into the fire stream. Default 1h.
	LatenessWindow time.Duration
	// PageSize is the schedule list's page size. Default 50.
	PageSize int
	// Logger receives failures. Default: discard.
	Logger *slog.Logger
}

// ErrNeedsAuth: the console was asked to listen beyond loopback without
// an authentication mode.
var ErrNeedsAuth = errors.New("console: a non-loopback --listen needs --auth (token:FILE, basic:FILE or proxy:HEADER); see docs/console.md")

func (c Config) validate() error {
	if c.Conn == nil {
		return errors.New("console: Config.Conn is required")
	}
	return c.Check()
}

// Check checks what the flags set (everything but Conn), so that a
// command can refuse bad flags before it connects.
func (c Config) Check() error {
	listen := cmp.Or(c.Listen, DefaultListen)
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("console: give both --https-cert and --https-key, or neither")
	}
	if err := c.Auth.validate(); err != nil {
		return err
	}
	if c.Auth.Mode == AuthNone && !loopback(listen) {
		return fmt.Errorf("%w (--listen %s)", ErrNeedsAuth, listen)
	}
	if _, err := newHostAllowList(listen, c.AllowedHosts); err != nil {
		return err
	}
	if c.PageSize < 0 || c.PageSize > 1000 {
		return fmt.Errorf("console: page size %d: must be 1 to 1000", c.PageSize)
	}
	_, err := newAuthenticator(c.Auth) // reads the auth file: refuse a bad one now
	return err
}

// loopback reports whether a listen address binds loopback only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Server is a running console.
type Server struct {
	cfg   Config
	log   *slog.Logger
	store *jsstore.Store
	js    jetstream.JetStream
	api   apiClient
	auth  *authenticator
	index *index
	hub   *hub
	fires *fireFollower
	audit *auditFollower
	pages *pages
	hosts *hostAllowList
	csrf  csrfKeys

	ln   net.Listener
	http *http.Server

	mu      sync.Mutex
	stopped bool
	cancel  context.CancelFunc
	served  chan error
}

// Start binds the buckets, loads the schedule index (it keeps loading in
// the background; pages say so until it is complete), follows the fire
// and audit streams, and serves HTTP. Stop ends all of it.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	cfg.Listen = cmp.Or(cfg.Listen, DefaultListen)
	cfg.DeadManTolerance = cmp.Or(cfg.DeadManTolerance, time.Minute)
	cfg.AuditWindow = cmp.Or(cfg.AuditWindow, 50_000)
	cfg.LatenessWindow = cmp.Or(cfg.LatenessWindow, time.Hour)
	cfg.PageSize = cmp.Or(cfg.PageSize, 50)
	cfg.Layout = cfg.Layout.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	auth, err := newAuthenticator(cfg.Auth)
	if err != nil {
		return nil, err
	}
	var certs []tls.Certificate
	if cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("console: TLS certificate %s and key %s: %w", cfg.TLSCert, cfg.TLSKey, err)
		}
		certs = append(certs, cert)
	}
	log := cmp.Or(cfg.Logger, slog.New(slog.NewTextHandler(io.Discard, nil))).With("component", "console")
	js := cfg.JetStream
	if js == nil {
		if js, err = jetstream.New(cfg.Conn); err != nil {
			return nil, fmt.Errorf("console: jetstream: %w", err)
		}
	}
	store, err := jsstore.Open(ctx, js, cfg.Layout)
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	shards, err := store.Shards(ctx)
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	hosts, err := newHostAllowList(cfg.Listen, cfg.AllowedHosts)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, store: store, js: js, auth: auth, hosts: hosts, csrf: newCSRFKeys(time.Now), served: make(chan error, 1)}
	s.api = apiClient{nc: cfg.Conn, prefix: cfg.Layout.Prefix + ".api"}
	s.hub = newHub()
	s.index = newIndex(store, shards, log, s.hub.publish)
	s.fires = newFireFollower(js, cfg.Layout, cfg.LatenessWindow, log, s.hub.publish)
	s.audit = newAuditFollower(js, cfg.AuditWindow, log)
	if s.pages, err = newPages(); err != nil {
		return nil, err
	}
	if s.ln, err = net.Listen("tcp", cfg.Listen); err != nil {
		return nil, fmt.Errorf("console: listen on %s: %w", cfg.Listen, err)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	s.index.start(runCtx)
	s.fires.start(runCtx)
	s.audit.start(runCtx)
	s.http = &http.Server{
		Handler:           s.routes(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return runCtx },
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	ln := s.ln
	if certs != nil {
		s.http.TLSConfig = &tls.Config{Certificates: certs, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, s.http.TLSConfig)
	}
	go func() { s.served <- s.http.Serve(ln) }()
	log.Info("console listening", "url", s.URL(), "auth", cfg.Auth.Mode.String(), "read_only", cfg.ReadOnly)
	return s, nil
}

// Addr is the address the console listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the console's base URL, for people to open.
func (s *Server) URL() string {
	scheme := "http"
	if s.cfg.TLSCert != "" {
		scheme = "https"
	}
	return scheme + "://" + s.Addr() + "/"
}

// Stop closes the live streams, shuts the HTTP server down (waiting for
// requests in flight, or until ctx ends) and stops the watches. It is safe
// to call more than once.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return nil
	}
	s.stopped = true
	s.mu.Unlock()
	s.cancel() // ends the SSE streams, whose requests use the base context
	err := s.http.Shutdown(ctx)
	if serr := <-s.served; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = cmp.Or(err, serr)
	}
	s.index.Stop()
	s.fires.Stop()
	s.audit.Stop()
	return err
}
