package natsconn

import (
	"slices"
	"testing"
)

// TestArgsRoundTrip: Args renders exactly the set options as the flags
// RegisterFlags declares.
func TestArgsRoundTrip(t *testing.T) {
	o := Options{URL: "nats://h:4222", Creds: "/c.creds", TLSCA: "/ca.pem", JSDomain: "hub"}
	want := []string{"--nats-url", "nats://h:4222", "--creds", "/c.creds", "--tls-ca", "/ca.pem", "--js-domain", "hub"}
	if got := o.Args(); !slices.Equal(got, want) {
		t.Fatalf("Args = %q, want %q", got, want)
	}
	declared := map[string]bool{}
	var back Options
	back.RegisterFlags(func(p *string, name, value, _ string) {
		declared[name] = true
		*p = value
	}, "")
	for i := 0; i < len(want); i += 2 {
		if !declared[want[i][2:]] {
			t.Errorf("Args renders %s, which RegisterFlags does not declare", want[i])
		}
	}
	p := Options{JSAPIPrefix: "JS.acme.API"}
	if got, want := p.Args(), []string{"--js-api-prefix", "JS.acme.API"}; !slices.Equal(got, want) {
		t.Fatalf("Args = %q, want %q", got, want)
	}
}
