// Package natsembed runs a nats-server with JetStream inside the current
// process, so that jetsched works on a fresh machine with nothing installed,
// and so that tests talk to a real server instead of a mock.
package natsembed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/jetsched/jetsched/internal/regfile"
)

// ErrNotReady is returned by Start when the server did not accept client
// connections within Config.ReadyTimeout.
var ErrNotReady = errors.New("natsembed: server not ready for connections")

// ErrAddrInUse is wrapped by Start's error when the client address is
// taken (another NATS server, or another scheduler, listens there): Start
// says so at once instead of waiting for a server that cannot start.
var ErrAddrInUse = errors.New("address already in use")

// Config describes an embedded server. The zero value is not useful: StoreDir
// is required.
type Config struct {
	// Base, when set, is a loaded nats-server configuration file (see
	// LoadConfigFile): its accounts, authorization, TLS, monitoring and
	// cluster settings apply, and the fields below are set on top of it
	// (Name only when the file names no server). Nil: a bare server.
	Base *server.Options
	// Name is the server name. Default "jetsched".
	Name string
	// Host is the address clients connect to. Default "127.0.0.1".
	Host string
	// Port is the client port; 0 or -1 picks a free port. Note that the zero
	// value picks a free port, not 4222: callers that want the standard port
	// set it.
	Port int
	// StoreDir is where JetStream keeps its files. Required.
	StoreDir string
	// ReadyTimeout bounds how long Start waits for the server to accept
	// clients. Default 10s.
	ReadyTimeout time.Duration
	// Cluster, when set, makes this server a member of a JetStream cluster.
	Cluster *ClusterConfig
	// Logger receives the server's log lines. Default: discard.
	Logger *slog.Logger
	// Debug enables the server's debug log lines.
	Debug bool
}

// ClusterConfig joins the server to a JetStream cluster.
type ClusterConfig struct {
	// Name is the cluster name, the same on every member. Required.
	Name string
	// Host and Port are the route listener. Port must be fixed so that
	// members can find each other after restarts.
	Host string
	Port int
	// Routes are the route URLs of all members, e.g. "nats://127.0.0.1:7022".
	Routes []string
}

// LoadConfigFile reads a nats-server configuration file, as `nats-server
// -c FILE` would, for Config.Base.
func LoadConfigFile(path string) (*server.Options, error) {
	// nats-server's loader reads the file whole, whatever it is: a FIFO
	// would block it, /dev/zero never end.
	if err := regfile.Check(path); err != nil {
		return nil, fmt.Errorf("natsembed: server config: %w", err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		return nil, fmt.Errorf("natsembed: server config %q: %w", path, err)
	}
	return opts, nil
}

// RequiresAuth reports whether a loaded configuration makes clients
// authenticate (users, nkeys, a token, operators or auth callout), so that
// an in-process connection needs credentials too.
func RequiresAuth(opts *server.Options) bool {
	return opts != nil && (len(opts.Users) > 0 || len(opts.Nkeys) > 0 || opts.Username != "" || opts.Authorization != "" ||
		len(opts.TrustedOperators) > 0 || len(opts.TrustedKeys) > 0 || opts.AuthCallout != nil)
}

// Listen splits a "host:port" address for Config.Host and Config.Port.
func Listen(addr string) (host string, port int, err error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("natsembed: listen address %q: %w", addr, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || n > 65535 {
		return "", 0, fmt.Errorf("natsembed: listen address %q: port must be 0-65535", addr)
	}
	return h, n, nil
}

// Server is a running embedded nats-server.
type Server struct {
	srv  *server.Server
	lock *storeLock
}

// Start starts the server and waits until it accepts client connections.
// The server runs without the accounts' shared subject match cache
// (disable_sublist_cache), whatever Config.Base says: the scheduler's
// traffic uses a different subject nearly every message.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.StoreDir == "" {
		return nil, errors.New("natsembed: Config.StoreDir is required")
	}
	if err := os.MkdirAll(cfg.StoreDir, 0o750); err != nil {
		return nil, fmt.Errorf("natsembed: store dir %q: %w", cfg.StoreDir, err)
	}
	// One server per store: a second one would corrupt its files.
	lock, err := lockStore(cfg.StoreDir)
	if err != nil {
		return nil, err
	}
	srv, err := newServer(ctx, cfg)
	if err != nil {
		lock.release()
		return nil, err
	}
	return &Server{srv: srv, lock: lock}, nil
}

// newServer starts the server of cfg and waits until it accepts clients.
func newServer(ctx context.Context, cfg Config) (*server.Server, error) {
	port := cfg.Port
	if port == 0 {
		port = server.RANDOM_PORT
	}
	opts := &server.Options{}
	if cfg.Base != nil {
		opts = cfg.Base.Clone()
	}
	opts.ServerName = cmp.Or(opts.ServerName, cfg.Name, "jetsched")
	opts.Host, opts.Port = cmp.Or(cfg.Host, "127.0.0.1"), port
	opts.JetStream, opts.StoreDir = true, cfg.StoreDir
	// Every fire has a subject of its own (sched.fire.<workflow>.<id>) and
	// every acknowledgement a reply subject of its own, so the accounts'
	// shared match cache (1,024 subjects, swept at random when full)
	// would miss on nearly every message and take a write lock to add
	// each one. Off, a miss is a read-locked walk of the subscription
	// tree (disable_sublist_cache in a server's config file).
	opts.NoSublistCache = true
	opts.NoSigs, opts.NoLog, opts.Debug = true, cfg.Logger == nil, cfg.Debug
	if c := cfg.Cluster; c != nil {
		opts.Cluster.Name = c.Name
		opts.Cluster.Host = cmp.Or(c.Host, "127.0.0.1")
		opts.Cluster.Port = c.Port
		opts.Routes = server.RoutesFromStr(strings.Join(c.Routes, ","))
	}
	if err := checkListen(opts.Host, opts.Port); err != nil {
		return nil, err
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("natsembed: configure server: %w", err)
	}
	if cfg.Logger != nil {
		srv.SetLoggerV2(&slogAdapter{log: cfg.Logger}, cfg.Debug, false, false)
	}
	go srv.Start()

	wait := cmp.Or(cfg.ReadyTimeout, 10*time.Second)
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl))
	}
	if !srv.ReadyForConnections(wait) {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, fmt.Errorf("%w after %s (store %q)", ErrNotReady, wait, cfg.StoreDir)
	}
	return srv, nil
}

// checkListen reports whether the client address host:port is taken,
// by listening on it for a moment: the server itself would log the
// failure and leave Start waiting for readiness until its timeout. A
// random port (-1) is never taken.
func checkListen(host string, port int) error {
	if port <= 0 {
		return nil
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("listen %s: %w", addr, ErrAddrInUse)
	}
	if err != nil {
		return fmt.Errorf("natsembed: listen %s: %w", addr, err)
	}
	return l.Close()
}

// ClientURL is the URL clients connect to, e.g. "nats://127.0.0.1:4222".
func (s *Server) ClientURL() string { return s.srv.ClientURL() }

// Server exposes the underlying nats-server for tests that need its
// internals (JetStream leaders, in-process connections).
func (s *Server) Server() *server.Server { return s.srv }

// Shutdown stops the server, waits until it has stopped and releases its
// store directory's lock. It is safe to call more than once.
func (s *Server) Shutdown() {
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
	s.lock.release()
}

// slogAdapter forwards nats-server log lines to slog. The server's notices
// (its start-up banner, mostly) go to debug, so that a scheduler's info log
// stays about schedules; warnings and errors keep their level.
type slogAdapter struct{ log *slog.Logger }

func (a *slogAdapter) Noticef(format string, v ...any) { a.log.Debug(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Warnf(format string, v ...any)   { a.log.Warn(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Fatalf(format string, v ...any)  { a.log.Error(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Errorf(format string, v ...any)  { a.log.Error(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Debugf(format string, v ...any)  { a.log.Debug(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Tracef(format string, v ...any)  { a.log.Debug(fmt.Sprintf(format, v...)) }
