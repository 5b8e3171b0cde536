package jsname_test

import (
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/jsname"
	"github.com/jetsched/jetsched/internal/natstest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSubjectsFollowTheContext(t *testing.T) {
	srv := natstest.Start(t)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
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
