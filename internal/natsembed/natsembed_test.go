package natsembed

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// TestStartRunsWithoutTheSharedMatchCache publishes to many subjects, as
// fires (one subject per schedule) and acknowledgements (one reply
// subject each) do, and checks that the server matched them without
// filling the accounts' shared cache.
func TestStartRunsWithoutTheSharedMatchCache(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Start(ctx, Config{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("fire.>")
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000 // more than the cache's 1,024 subjects
	for i := range n {
		if err := nc.Publish("fire.w."+strconv.Itoa(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if _, err := sub.NextMsg(10 * time.Second); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	sz, err := s.Server().Subsz(&server.SubszOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sz.NumMatches < n {
		t.Fatalf("the server matched %d subjects, want at least %d", sz.NumMatches, n)
	}
	if sz.NumCache != 0 {
		t.Fatalf("the shared match cache holds %d subjects, want 0 (disabled)", sz.NumCache)
	}
}

// TestStartOnTakenAddress: a taken client address fails Start at once
// with ErrAddrInUse naming it, and leaves the store unlocked.
func TestStartOnTakenAddress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	_, err = Start(context.Background(), Config{Host: "127.0.0.1", Port: port, StoreDir: dir})
	if !errors.Is(err, ErrAddrInUse) || !strings.Contains(err.Error(), l.Addr().String()) {
		t.Fatalf("Start on a taken port: %v; want ErrAddrInUse naming %s", err, l.Addr())
	}
	srv, err := Start(context.Background(), Config{StoreDir: dir})
	if err != nil {
		t.Fatalf("Start on the same store after the failure: %v", err)
	}
	srv.Shutdown()
}
