// Package natsconn turns the connection flags every jetsched command takes
// (--nats-url, --creds, --nkey, --user/--password, --tls-*) into a NATS
// connection, and --js-domain or --js-api-prefix into the JetStream context
// on it.
package natsconn

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/redact"
)

// DefaultURL is where commands look for NATS when no URL is given: the
// embedded server of a `scheduler run` on this machine.
const DefaultURL = "nats://127.0.0.1:4222"

// DefaultPingInterval is how often Connect's connections ping the server
// unless Options.PingInterval says otherwise. nats.go's own default is 2
// minutes: with two pings outstanding allowed, a half-open link (the TCP
// connection stays up, nothing comes back) is noticed only after 4 to 6
// minutes, while the scheduler's leases have long moved and its in-flight
// requests hang. At 10s it is noticed within 20-30s, for one small
// PING/PONG every 10s per connection. docs/reliability.md ("Slow and
// broken links") has the measurements.
const DefaultPingInterval = 10 * time.Second

// Options are the connection settings.
type Options struct {
	// URL is one or more comma-separated server URLs. Default DefaultURL.
	URL string
	// Creds is a credentials file (JWT and nkey seed).
	Creds string
	// NKey is an nkey seed file.
	NKey string
	// User and Password authenticate with a user name.
	User, Password string
	// TLSCA, TLSCert and TLSKey configure TLS: a CA to trust, and a client
	// certificate and key.
	TLSCA, TLSCert, TLSKey string
	// InboxPrefix replaces "_INBOX" in reply subjects. A worker user of
	// natsconf/ may read replies only under its own prefix,
	// "_INBOX_<user>", so that no other user can read its pulled fires.
	InboxPrefix string
	// JSDomain reaches JetStream in that domain (jetstream.NewWithDomain):
	// a hub's JetStream from a leaf node whose own JetStream has another
	// domain. Not with JSAPIPrefix.
	JSDomain string
	// JSAPIPrefix reaches JetStream under that API prefix
	// (jetstream.NewWithAPIPrefix): another account's JetStream API
	// imported under a prefix of its own. Not with JSDomain.
	JSAPIPrefix string
	// PingInterval is how often the client pings the server; after two
	// pings without a pong (nats.go's MaxPingsOut) the connection is
	// stale and reconnects, so a half-open link is noticed within two to
	// three intervals. Default DefaultPingInterval.
	PingInterval time.Duration
	// Name is the connection name shown by the server (`nats server report
	// connections`).
	Name string
	// Logger reports disconnects and reconnects. Default: discard.
	Logger *slog.Logger
}

// StringVar is the flag registration both the standard library's
// flag.FlagSet and pflag's FlagSet provide.
type StringVar func(p *string, name, value, usage string)

// RegisterFlags declares the connection flags every command shares, with
// --nats-url defaulting to defaultURL.
func (o *Options) RegisterFlags(def StringVar, defaultURL string) {
	for _, f := range o.flags() {
		value := ""
		if f.name == "nats-url" {
			value = defaultURL
		}
		def(f.field, f.name, value, f.usage)
	}
}

// Args renders o as the flags that set it, for a child process (the
// bench's fleet runs `scheduler run` this way). A password passed so is
// visible in the local process list.
func (o *Options) Args() []string {
	var out []string
	for _, f := range o.flags() {
		if *f.field != "" {
			out = append(out, "--"+f.name, *f.field)
		}
	}
	return out
}

type flag struct {
	field       *string
	name, usage string
}

// flags are the connection flags and the fields they set.
func (o *Options) flags() []flag {
	return []flag{
		{&o.URL, "nats-url", "NATS server URL(s), comma-separated (env NATS_URL; default " + DefaultURL + ")"},
		{&o.Creds, "creds", "NATS credentials file"},
		{&o.NKey, "nkey", "NATS nkey seed file"},
		{&o.User, "user", "NATS user name"},
		{&o.Password, "password", "NATS password"},
		{&o.TLSCA, "tls-ca", "CA certificate to verify the NATS server"},
		{&o.TLSCert, "tls-cert", "client certificate for NATS TLS"},
		{&o.TLSKey, "tls-key", "client key for NATS TLS"},
		{&o.JSDomain, "js-domain", "JetStream domain of jetsched's buckets and streams (a hub's JetStream, from a leaf node with a domain of its own)"},
		{&o.JSAPIPrefix, "js-api-prefix", "JetStream API prefix of jetsched's buckets and streams (another account's JetStream API imported under that prefix)"},
		{&o.InboxPrefix, "inbox-prefix", "prefix of reply subjects instead of _INBOX (a worker account of natsconf/ reads replies only on _INBOX_<user>)"},
	}
}

// Validate reports contradictory options before any connection attempt.
func (o Options) Validate() error {
	switch {
	case o.Creds != "" && o.NKey != "":
		return errors.New("--creds and --nkey are mutually exclusive")
	case o.Password != "" && o.User == "":
		return errors.New("--password needs --user")
	case (o.TLSCert == "") != (o.TLSKey == ""):
		return errors.New("--tls-cert and --tls-key go together")
	case strings.ContainsAny(o.InboxPrefix, "*> \t") || strings.HasSuffix(o.InboxPrefix, "."):
		return fmt.Errorf("--inbox-prefix %q: a subject prefix without wildcards, spaces or a trailing '.'", o.InboxPrefix)
	case o.JSDomain != "" && o.JSAPIPrefix != "":
		return errors.New("--js-domain and --js-api-prefix are mutually exclusive (a domain is the API prefix $JS.<domain>.API)")
	case strings.ContainsAny(o.JSDomain, ".*> \t\r\n"):
		return fmt.Errorf("--js-domain %q: a domain is one subject token, without '.', wildcards or spaces", o.JSDomain)
	case o.JSAPIPrefix != "" && !validPrefix(strings.TrimSuffix(o.JSAPIPrefix, ".")):
		return fmt.Errorf("--js-api-prefix %q: a subject prefix such as JS.acme.API, without wildcards, spaces or empty tokens", o.JSAPIPrefix)
	}
	return nil
}

// validPrefix reports whether p is a literal subject: tokens separated by
// '.', none empty, without wildcards or spaces.
func validPrefix(p string) bool {
	if strings.ContainsAny(p, "*> \t\r\n") {
		return false
	}
	for tok := range strings.SplitSeq(p, ".") {
		if tok == "" {
			return false
		}
	}
	return true
}

// JetStream is the JetStream context on nc that o names: in the domain
// JSDomain (jetstream.NewWithDomain), under the API prefix JSAPIPrefix
// (jetstream.NewWithAPIPrefix), else the connected account's own
// (jetstream.New). Every jetstream.JetStream a command makes comes from
// here, so that the flags reach every bucket and stream it uses.
func JetStream(nc *nats.Conn, o Options, opts ...jetstream.JetStreamOpt) (jetstream.JetStream, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	var (
		js  jetstream.JetStream
		err error
	)
	switch {
	case o.JSDomain != "":
		js, err = jetstream.NewWithDomain(nc, o.JSDomain, opts...)
	case o.JSAPIPrefix != "":
		js, err = jetstream.NewWithAPIPrefix(nc, o.JSAPIPrefix, opts...)
	default:
		js, err = jetstream.New(nc, opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	return js, nil
}

// LogOptions log a connection's disconnects and reconnects, and the errors
// the server sends asynchronously, such as a permissions violation (which
// otherwise only shows as a request timing out).
func LogOptions(log *slog.Logger) []nats.Option {
	return []nats.Option{
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("disconnected from NATS", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("reconnected to NATS", "url", ConnectedURL(nc))
		}),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			if sub != nil {
				log.Warn("NATS error", "err", err, "subscription", sub.Subject)
				return
			}
			log.Warn("NATS error", "err", err)
		}),
	}
}

// HasCredentials reports whether o says who connects (a user, an nkey or
// credentials).
func (o Options) HasCredentials() bool { return o.User != "" || o.NKey != "" || o.Creds != "" }

// AuthOptions are the options that say who connects: credentials, nkey,
// user and password, and the inbox prefix. Connect uses them; so does the
// scheduler's in-process connection to its embedded server.
func (o Options) AuthOptions() ([]nats.Option, error) {
	var opts []nats.Option
	if o.Creds != "" {
		opts = append(opts, nats.UserCredentials(o.Creds))
	}
	if o.NKey != "" {
		opt, err := nats.NkeyOptionFromSeed(o.NKey)
		if err != nil {
			return nil, fmt.Errorf("nkey seed file %q: %w", o.NKey, err)
		}
		opts = append(opts, opt)
	}
	if o.User != "" {
		opts = append(opts, nats.UserInfo(o.User, o.Password))
	}
	if o.InboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(o.InboxPrefix))
	}
	return opts, nil
}

// Connect connects with reconnects enabled forever: a scheduler rides out
// server restarts and elections instead of exiting.
func Connect(o Options) (*nats.Conn, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	url := cmp.Or(o.URL, DefaultURL)
	opts := []nats.Option{
		nats.Name(cmp.Or(o.Name, "jetsched")),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.Timeout(5 * time.Second),
		nats.PingInterval(cmp.Or(o.PingInterval, DefaultPingInterval)),
	}
	if o.Logger != nil {
		opts = append(opts, LogOptions(o.Logger)...)
	}
	auth, err := o.AuthOptions()
	if err != nil {
		return nil, err
	}
	opts = append(opts, auth...)
	if o.TLSCA != "" {
		opts = append(opts, nats.RootCAs(o.TLSCA))
	}
	if o.TLSCert != "" {
		opts = append(opts, nats.ClientCert(o.TLSCert, o.TLSKey))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		// nats.go and net/url quote the URL in their errors.
		return nil, fmt.Errorf("connect to NATS at %s: %w (is a server running there? `scheduler run` starts one)", redact.URL(url), redact.Error(err, url))
	}
	return nc, nil
}
