package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jetsched/jetsched/internal/console"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// consoleFlags are the web console's flags: on `scheduler console` by
// their own names, on run and demo with a "console-" prefix.
type consoleFlags struct {
	flags     *pflag.FlagSet
	prefix    string
	listen    string
	auth      string
	proxies   []string
	operators []string
	hosts     []string
	readOnly  bool
	cert, key string
}

func (f *consoleFlags) register(fl *pflag.FlagSet, prefix, defaultListen, listenUsage string) {
	f.flags, f.prefix = fl, prefix
	fl.StringVar(&f.listen, prefix+"listen", defaultListen, listenUsage)
	fl.StringVar(&f.auth, prefix+"auth", "none", "who may use the console: none (loopback only), token:FILE (lines USER ROLE TOKEN), basic:FILE (lines USER:BCRYPT-HASH[:ROLE], htpasswd -B), or proxy:HEADER (a reverse proxy's user header); roles are viewer and operator")
	fl.StringSliceVar(&f.proxies, prefix+"trusted-proxies", nil, "with --"+prefix+"auth proxy:HEADER: the addresses or CIDR ranges the proxy connects from (others are refused)")
	fl.StringSliceVar(&f.operators, prefix+"operators", nil, "with --"+prefix+"auth proxy:HEADER: the users who may act (everyone else views)")
	fl.StringSliceVar(&f.hosts, prefix+"allowed-hosts", nil, "host names (or addresses), each with an optional :PORT, the console answers to besides localhost, 127.0.0.1, [::1] and its --"+prefix+"listen host (or, listening on every address, the machine's name and addresses); a request under another Host gets 421 (DNS rebinding): give the name people and proxies reach it by")
	fl.BoolVar(&f.readOnly, prefix+"read-only", false, "show no action and refuse every one")
	fl.StringVar(&f.cert, prefix+"https-cert", "", "serve HTTPS with this certificate (PEM; with --"+prefix+"https-key)")
	fl.StringVar(&f.key, prefix+"https-key", "", "the HTTPS certificate's key (PEM)")
}

// config checks the flags and returns the console's configuration
// (without its connection).
func (f *consoleFlags) config() (console.Config, error) {
	auth, err := console.ParseAuth(f.auth)
	if err != nil {
		return console.Config{}, usageError{err}
	}
	auth.TrustedProxies, auth.Operators = f.proxies, f.operators
	cfg := console.Config{Listen: f.listen, Auth: auth, AllowedHosts: f.hosts, ReadOnly: f.readOnly, TLSCert: f.cert, TLSKey: f.key}
	if _, _, err := net.SplitHostPort(f.listen); err != nil {
		return cfg, invalidf("--%slisten %q: want HOST:PORT, such as 127.0.0.1:8090", f.prefix, f.listen)
	}
	if err := cfg.Check(); err != nil {
		// The console's errors name its flags unprefixed.
		return cfg, usageError{errors.New(strings.ReplaceAll(err.Error(), "--", "--"+f.prefix))}
	}
	return cfg, nil
}

func (a *app) consoleCommand() *cobra.Command {
	var f consoleFlags
	var tolerance time.Duration
	cmd := &cobra.Command{
		Use:   "console [--listen 127.0.0.1:8090] [--auth none|token:FILE|basic:FILE|proxy:HEADER] [--read-only]",
		Short: "Serve the web console: schedules, timers, calendars and the fleet in a browser, live",
		Long: `Serve the web console over HTTP. It talks to the system only through the
admin API (sched.api.>) and KV watches, as any client, so it runs anywhere
with NATS credentials (--nats-url, --creds, ...). Pages: schedules
(filtered, sorted by next fire, live), one schedule (spec, next fires
explained, a month view, the ledger, fire headers), timers, calendars (a
year of non-working days) and the fleet (instances, leases, lateness,
overdue schedules). Operators pause, resume, trigger, skip, backfill and
remove schedules and cancel timers; the audit trail names them
console:<user>.

It listens on loopback by default and refuses any other address unless
--auth says who may use it. See docs/console.md.`,
		Example: `  scheduler console
  scheduler console --listen 0.0.0.0:8090 --allowed-hosts console.example.com --auth basic:/etc/jetsched/console.htpasswd --https-cert c.pem --https-key k.pem
  scheduler console --listen 10.0.0.5:8090 --auth proxy:X-Forwarded-User --trusted-proxies 10.0.0.2 --operators alice,bob
  scheduler console hash < password.txt`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.config()
			if err != nil {
				return err
			}
			if tolerance <= 0 {
				return invalidf("--dead-man-tolerance %s: must be positive", tolerance)
			}
			log, err := a.logger()
			if err != nil {
				return err
			}
			if err := a.conn.Validate(); err != nil {
				return usageError{err}
			}
			if err := kvstore.ValidatePrefix(a.namePrefix); err != nil {
				return usageError{err}
			}
			conn := a.conn
			conn.Name, conn.Logger = "jetsched console", log
			nc, err := natsconn.Connect(conn)
			if err != nil {
				return err
			}
			defer nc.Close()
			if cfg.JetStream, err = natsconn.JetStream(nc, conn); err != nil {
				return err
			}
			cfg.Conn, cfg.Layout, cfg.Logger, cfg.DeadManTolerance = nc, kvstore.NamedLayout(a.namePrefix), log, tolerance
			s, err := console.Start(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "console: %s\n", s.URL())
			<-cmd.Context().Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			return s.Stop(ctx)
		},
	}
	f.register(cmd.Flags(), "", console.DefaultListen, "HTTP address; a non-loopback one needs --auth")
	durationVar(cmd.Flags(), &tolerance, "dead-man-tolerance", time.Minute, "the fleet page lists a schedule overdue when its slot is this late (as the schedulers' flag)")
	cmd.AddCommand(a.consoleHashCommand())
	return cmd
}

// consoleHashCommand prints a basic-auth file line's bcrypt hash of the
// password read from stdin.
func (a *app) consoleHashCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "hash [USER [ROLE]]",
		Short: "Read a password on stdin and print its bcrypt hash (a line of --auth basic:FILE with USER and ROLE)",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 2 {
				return invalidf("at most USER and ROLE")
			}
			if len(args) == 2 {
				if _, err := console.ParseRole(args[1]); err != nil {
					return usageError{err}
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
			if err != nil && line == "" {
				return usageError{errors.New("no password on stdin")}
			}
			h, err := console.HashPassword(strings.TrimRight(line, "\r\n"))
			if err != nil {
				return usageError{err}
			}
			if len(args) == 0 {
				_, err = fmt.Fprintln(a.stdout, h)
				return err
			}
			_, err = fmt.Fprintln(a.stdout, strings.Join(append([]string{args[0], h}, args[1:]...), ":"))
			return err
		},
	}
}
