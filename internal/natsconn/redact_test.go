package natsconn

import (
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/redact"
)

// TestConnectErrorsRedactTheURL: Connect's errors name the URL without its
// password or token, whatever failed: the URL's parse, or the connection.
// (A host part that is no host:port is hidden whole.)
func TestConnectErrorsRedactTheURL(t *testing.T) {
	for _, url := range []string{
		"nats://user:PASSWORD@127.0.0.1:1",
		"nats://user:PASSWORD@127.0.0.1:notaport",
		"nats://TOKENSECRET@127.0.0.1:1",
		"user:PASSWORD@127.0.0.1:1",
		"nats://127.0.0.1:1?password=PASSWORD",
	} {
		nc, err := Connect(Options{URL: url})
		if err == nil {
			nc.Close()
			t.Fatalf("Connect(%q) connected", url)
		}
		for _, secret := range []string{"PASSWORD", "TOKENSECRET"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("Connect(%q): the error shows the secret: %v", url, err)
			}
		}
		if !strings.Contains(url, "notaport") && !strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("Connect(%q): the error does not name the host: %v", url, err)
		}
	}
	// Errors stay matchable.
	_, err := Connect(Options{URL: "nats://u:PASSWORD@127.0.0.1:1"})
	if !errors.Is(err, nats.ErrNoServers) {
		t.Errorf("Connect to nothing: %v; want it to match nats.ErrNoServers", err)
	}
}

// TestConnectedURLHidesATokenURL: the URL a connection reports for logs
// hides a token, which nats.go's ConnectedUrlRedacted shows.
func TestConnectedURLHidesATokenURL(t *testing.T) {
	srv := natstest.Start(t)
	url := strings.Replace(srv.URL(), "nats://", "nats://TOKENSECRET@", 1)
	nc, err := Connect(Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if got := ConnectedURL(nc); strings.Contains(got, "TOKENSECRET") || !strings.Contains(got, redact.Redacted) {
		t.Errorf("ConnectedURL = %q, want the token redacted", got)
	}
}
