package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/jetsched/jetsched/internal/daemon/daemontest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/cli"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/natsembed"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/client"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/worker"
)

// TestLeafNodeDomains: the edge layout many NATS fleets run. A hub server
// with JetStream domain "hub" and a leaf node with a JetStream of its own
// (domain "leaf") connected to it. jetsched's buckets and streams live in
// the hub. One scheduler runs on the hub, a second one on the leaf
// reaching the hub's JetStream with --js-domain hub (its claims, pipelined
// writes and leases go through the domain); a worker on the leaf consumes
// the hub's fire stream through Config.Domain; the CLI on the leaf adds a
// schedule through the admin API and verifies the audit trail through
// --js-domain; pkg/client on the leaf writes to the hub's buckets with
// WithDomain. Nothing of jetsched lands in the leaf's own JetStream.
func TestLeafNodeDomains(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	leafPort := freePort(t, map[int]bool{})
	hub, err := natsembed.Start(ctx, natsembed.Config{Name: "hub", StoreDir: t.TempDir(), Base: &server.Options{
		JetStreamDomain: "hub",
		LeafNode:        server.LeafNodeOpts{Host: "127.0.0.1", Port: leafPort},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Shutdown)
	remote, _ := url.Parse(fmt.Sprintf("nats-leaf://127.0.0.1:%d", leafPort))
	leaf, err := natsembed.Start(ctx, natsembed.Config{Name: "leaf", StoreDir: t.TempDir(), Base: &server.Options{
		JetStreamDomain: "leaf",
		LeafNode:        server.LeafNodeOpts{Remotes: []*server.RemoteLeafOpts{{URLs: []*url.URL{remote}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(leaf.Shutdown)
	testwait.Eventually(t, 10*time.Second, "the leaf node connected to the hub", func() bool {
		return hub.Server().NumLeafNodes() == 1
	})

	// The scheduler on the hub, with the hub's own JetStream; a second one
	// on the leaf, through the domain.
	onHub := startConnected(t, daemon.Config{Conn: natsconn.Options{URL: hub.ClientURL()}, Fire: fires.Config{Instance: "hub-1"}})
	onLeaf := startConnected(t, daemon.Config{Conn: natsconn.Options{URL: leaf.ClientURL(), JSDomain: "hub"}, Fire: fires.Config{Instance: "leaf-1"}})

	// Both hold shard leases (the leaf's through the domain).
	testwait.Eventually(t, 20*time.Second, "both schedulers hold shard leases", func() bool {
		return onHub.Engine().LeasesHeld() > 0 && onLeaf.Engine().LeasesHeld() > 0
	})

	// A worker on the leaf consumes the hub's fire stream.
	lnc, err := nats.Connect(leaf.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lnc.Close)
	ljs, err := jetstream.New(lnc) // the leaf's own JetStream: the worker is told the domain
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(worker.Config{JetStream: ljs, Domain: "hub", Name: "edge"})
	if err != nil {
		t.Fatal(err)
	}
	fired := make(chan kvstore.FireMeta, 256)
	if err := w.Handle("edge", func(_ context.Context, f worker.Fire) error {
		select {
		case fired <- f.FireMeta:
		default:
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Stop(context.Background()) })

	// The CLI on the leaf: the admin API is core NATS and crosses the leaf
	// connection as it is.
	run := func(args ...string) (int, string, string) {
		var out, errOut strings.Builder
		code := cli.Main(ctx, append(args, "--nats-url", leaf.ClientURL(), "--js-domain", "hub"), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, _, stderr := run("schedule", "add", "--id", "cli-edge", "--workflow", "edge", "--every", "1s"); code != 0 {
		t.Fatalf("schedule add from the leaf: exit %d: %s", code, stderr)
	}
	// pkg/client on the leaf writes the hub's buckets directly.
	c, err := client.New(ctx, ljs, client.WithDomain("hub"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 16 { // enough that both schedulers own some
		id := fmt.Sprintf("kv-edge-%02d", i)
		if _, err := c.Schedule(ctx, "edge", nil, client.Every(time.Second), client.WithKey(id)); err != nil {
			t.Fatalf("client on the leaf, WithDomain(hub): %v", err)
		}
		ids = append(ids, id)
	}
	ids = append(ids, "cli-edge")

	// Every schedule fires, through whichever scheduler owns it, into the
	// worker on the leaf.
	// Each scheduler fires some of them: the leaf's claims, publishes and
	// records through the domain.
	seen, byInstance := map[string]bool{}, map[string]int{}
	testwait.Eventually(t, 30*time.Second, "every schedule fired into the leaf's worker, by both schedulers", func() bool {
		for {
			select {
			case m := <-fired:
				seen[m.ScheduleID] = true
				byInstance[m.Instance]++
			default:
				return len(seen) == len(ids) && byInstance["hub-1"] > 0 && byInstance["leaf-1"] > 0
			}
		}
	})

	// The CLI on the leaf lists every schedule.
	code, out, stderr := run("schedule", "ls", "--json")
	if code != 0 {
		t.Fatalf("schedule ls from the leaf: exit %d: %s", code, stderr)
	}
	var listed struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed.Items) != len(ids) {
		t.Fatalf("schedule ls --json from the leaf: %d schedules (%v), want %d", len(listed.Items), err, len(ids))
	}

	// Nothing of jetsched in the leaf's own JetStream.
	for name := range ljs.StreamNames(ctx).Name() {
		if strings.HasPrefix(name, "SCHED_") || strings.HasPrefix(name, "KV_sched") {
			t.Errorf("stream %s was created in the leaf's own JetStream", name)
		}
	}
	hjs, err := jetstream.NewWithDomain(lnc, "hub")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hjs.Stream(ctx, kvstore.Layout{}.WithDefaults().FiresStream); err != nil {
		t.Errorf("the fire stream is not in the hub: %v", err)
	}
}

// startConnected runs a scheduler connected to an existing server (cfg.Conn)
// until the test ends.
func startConnected(t *testing.T, cfg daemon.Config) *daemon.Daemon {
	t.Helper()
	d, err := daemon.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	daemontest.Cleanup(t, d)
	return d
}
