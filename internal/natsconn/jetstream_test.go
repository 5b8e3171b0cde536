package natsconn_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/jsname"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/natstest"
)

// TestValidateJetStreamFlags: a bad --js-domain or --js-api-prefix, or
// both, is refused with the flag named.
func TestValidateJetStreamFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		o    natsconn.Options
		want string // "" for valid
	}{
		{"neither", natsconn.Options{}, ""},
		{"domain", natsconn.Options{JSDomain: "hub"}, ""},
		{"prefix", natsconn.Options{JSAPIPrefix: "JS.acme.API"}, ""},
		{"prefix with a trailing dot", natsconn.Options{JSAPIPrefix: "JS.acme.API."}, ""},
		{"both", natsconn.Options{JSDomain: "hub", JSAPIPrefix: "JS.acme.API"}, "--js-domain and --js-api-prefix are mutually exclusive"},
		{"domain with a dot", natsconn.Options{JSDomain: "hub.eu"}, `--js-domain "hub.eu"`},
		{"domain wildcard", natsconn.Options{JSDomain: "*"}, `--js-domain "*"`},
		{"domain with a space", natsconn.Options{JSDomain: "hub 1"}, `--js-domain "hub 1"`},
		{"prefix wildcard", natsconn.Options{JSAPIPrefix: "JS.*.API"}, `--js-api-prefix "JS.*.API"`},
		{"prefix with an empty token", natsconn.Options{JSAPIPrefix: "JS..API"}, `--js-api-prefix "JS..API"`},
		{"prefix of a dot", natsconn.Options{JSAPIPrefix: "."}, `--js-api-prefix "."`},
	} {
		err := tc.o.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want no error", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// TestJetStreamFollowsTheFlags: the context JetStream makes addresses the
// domain or prefix the options name (the subjects nats.go and jsname
// derive from it), and refuses contradictory options.
func TestJetStreamFollowsTheFlags(t *testing.T) {
	t.Parallel()
	nc, _ := natstest.Start(t).Connect(t)
	for _, tc := range []struct {
		o    natsconn.Options
		want string
	}{
		{natsconn.Options{}, "$JS.API.INFO"},
		{natsconn.Options{JSDomain: "hub"}, "$JS.hub.API.INFO"},
		{natsconn.Options{JSAPIPrefix: "JS.acme.API"}, "JS.acme.API.INFO"},
	} {
		js, err := natsconn.JetStream(nc, tc.o)
		if err != nil {
			t.Fatalf("%+v: %v", tc.o, err)
		}
		if got := jsname.API(js, "INFO"); got != tc.want {
			t.Errorf("%+v: API subject %q, want %q", tc.o, got, tc.want)
		}
	}
	if _, err := natsconn.JetStream(nc, natsconn.Options{JSDomain: "hub", JSAPIPrefix: "x"}); err == nil {
		t.Fatal("JetStream with a domain and a prefix: no error")
	}
}

// TestConnectPingInterval: Connect pings every DefaultPingInterval unless
// PingInterval is set, so that a half-open link is noticed in seconds, not
// after nats.go's 2 minutes times two unanswered pings.
func TestConnectPingInterval(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	for _, tc := range []struct {
		set, want time.Duration
	}{{0, natsconn.DefaultPingInterval}, {3 * time.Second, 3 * time.Second}} {
		nc, err := natsconn.Connect(natsconn.Options{URL: srv.URL(), PingInterval: tc.set})
		if err != nil {
			t.Fatal(err)
		}
		got := nc.Opts.PingInterval
		nc.Close()
		if got != tc.want {
			t.Errorf("PingInterval %s: the connection pings every %s, want %s", tc.set, got, tc.want)
		}
	}
	if natsconn.DefaultPingInterval >= nats.DefaultPingInterval {
		t.Errorf("DefaultPingInterval %s is not shorter than nats.go's %s", natsconn.DefaultPingInterval, nats.DefaultPingInterval)
	}
}
