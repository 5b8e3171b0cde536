package worker_test

import (
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/pkg/worker"
)

// TestConfigDomain: Config.Domain binds the worker to a JetStream domain;
// a JetStream bound to that domain already needs none, and one bound
// elsewhere is refused naming the field. (integration's leaf-node test
// has a worker receive fires through a domain.)
func TestConfigDomain(t *testing.T) {
	e := newEnv(t)
	hub, err := jetstream.NewWithDomain(e.nc, "hub")
	if err != nil {
		t.Fatal(err)
	}
	prefixed, err := jetstream.NewWithAPIPrefix(e.nc, "JS.acme.API")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  worker.Config
		want string // "" for valid
	}{
		{"a plain JetStream and a domain", worker.Config{JetStream: e.js, Domain: "hub"}, ""},
		{"a JetStream in the domain, no Domain", worker.Config{JetStream: hub}, ""},
		{"a JetStream in the domain, the same Domain", worker.Config{JetStream: hub, Domain: "hub"}, ""},
		{"a JetStream in another domain", worker.Config{JetStream: hub, Domain: "edge"}, `Config.Domain "edge": the JetStream passed in is bound to domain "hub"`},
		{"a JetStream with an API prefix", worker.Config{JetStream: prefixed, Domain: "hub"}, `Config.Domain "hub": the JetStream passed in has the API prefix`},
	} {
		_, err := worker.New(tc.cfg)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: New: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: New: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}
