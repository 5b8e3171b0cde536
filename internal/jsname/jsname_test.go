package jsname_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/jsname"
	"github.com/jetsched/jetsched/internal/natstest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSubjectsFollowTheContext(t *testing.T) {
	t.Parallel()
	nc, _ := natstest.Start(t).Connect(t)
	plain, _ := jetstream.New(nc)
	hub, _ := jetstream.NewWithDomain(nc, "hub")
	pre, _ := jetstream.NewWithAPIPrefix(nc, "$JS.acme.API")
	for _, tc := range []struct {
		js      jetstream.JetStream
		kv, api string
	}{
		{plain, "$KV.b.k", "$JS.API.DIRECT.GET.S"},
		{hub, "$JS.hub.API.$KV.b.k", "$JS.hub.API.DIRECT.GET.S"},
		{pre, "$JS.acme.API.$KV.b.k", "$JS.acme.API.DIRECT.GET.S"},
	} {
		if got := jsname.KV(tc.js, "b", "k"); got != tc.kv {
			t.Errorf("KV = %q, want %q", got, tc.kv)
		}
		if got := jsname.API(tc.js, "DIRECT.GET.S"); got != tc.api {
			t.Errorf("API = %q, want %q", got, tc.api)
		}
	}
}

// TestInDomain: a context is rebound to a domain unless it is in it
// already; one bound elsewhere is refused.
func TestInDomain(t *testing.T) {
	t.Parallel()
	nc, _ := natstest.Start(t).Connect(t)
	plain, _ := jetstream.New(nc, jetstream.WithDefaultTimeout(7*time.Second))
	hub, _ := jetstream.NewWithDomain(nc, "hub")
	pre, _ := jetstream.NewWithAPIPrefix(nc, "$JS.acme.API")
	if js, err := jsname.InDomain(plain, ""); err != nil || js != plain {
		t.Errorf("no domain: %v, %v; want the context passed in", js, err)
	}
	if js, err := jsname.InDomain(hub, "hub"); err != nil || js != hub {
		t.Errorf("the same domain: %v, %v; want the context passed in", js, err)
	}
	js, err := jsname.InDomain(plain, "hub")
	if err != nil {
		t.Fatal(err)
	}
	if o := js.Options(); o.Domain != "hub" || o.DefaultTimeout != 7*time.Second {
		t.Errorf("rebound: domain %q, timeout %s; want hub and the passed context's 7s", o.Domain, o.DefaultTimeout)
	}
	if _, err := jsname.InDomain(hub, "edge"); err == nil || !strings.Contains(err.Error(), `bound to domain "hub"`) {
		t.Errorf("another domain: %v", err)
	}
	if _, err := jsname.InDomain(pre, "hub"); err == nil || !strings.Contains(err.Error(), "API prefix") {
		t.Errorf("an API prefix: %v", err)
	}
}
