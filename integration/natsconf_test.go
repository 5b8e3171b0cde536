package integration

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/cli"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestClusterConfigs runs natsconf/cluster-n{1,2,3}.conf (ports moved to
// free ones): a scheduler with the scheduler user's permissions and
// --replicas 3 fires, and an operator with only the API rights manages it.
func TestClusterConfigs(t *testing.T) {
	taken := map[int]bool{}
	var routes []string
	routePorts := make([]int, 3)
	for i := range routePorts {
		routePorts[i] = freePort(t, taken)
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", routePorts[i]))
	}
	var urls []string
	for i := range 3 {
		opts, err := server.ProcessConfigFile(filepath.Join("..", "natsconf", fmt.Sprintf("cluster-n%d.conf", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		opts.Port, opts.StoreDir, opts.NoSigs, opts.NoLog = freePort(t, taken), t.TempDir(), true, true
		opts.Cluster.Port = routePorts[i]
		opts.Routes = server.RoutesFromStr(strings.Join(routes, ","))
		srv, err := server.NewServer(opts)
		if err != nil {
			t.Fatal(err)
		}
		go srv.Start()
		t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
		if !srv.ReadyForConnections(10 * time.Second) {
			t.Fatal("node not ready")
		}
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", opts.Port))
	}
	url := strings.Join(urls, ",")
	// Wait for a JetStream meta leader.
	nc, err := nats.Connect(url, nats.UserInfo("scheduler", "scheduler-secret"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	waitUntil(t, 30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := js.AccountInfo(ctx)
		return err == nil
	})

	ctx := context.Background()
	var d *daemon.Daemon
	waitUntil(t, 30*time.Second, func() bool { // R3 assets need the cluster settled
		d, err = daemon.Start(ctx, daemon.Config{Conn: natsconn.Options{URL: url, User: "scheduler", Password: "scheduler-secret"},
			Setup: kvstore.SetupConfig{Replicas: 3}})
		return err == nil
	})
	defer d.Stop()
	info, err := js.Stream(ctx, "KV_sched_state")
	if err != nil || info.CachedInfo().Config.Replicas != 3 {
		t.Fatalf("sched_state is not R3: %v", err)
	}

	var out, errOut bytes.Buffer
	args := []string{"schedule", "add", "--id", "r3", "--workflow", "wf", "--every", "1s",
		"--nats-url", url, "--user", "operator", "--password", "operator-secret"}
	if code := cli.Main(ctx, args, &out, &errOut); code != cli.ExitOK {
		t.Fatalf("operator add: %s", errOut.String())
	}
	cons, err := js.OrderedConsumer(ctx, "SCHED_FIRES", jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cons.Next(jetstream.FetchMaxWait(20 * time.Second)); err != nil {
		t.Fatalf("no fire on the R3 cluster: %v", err)
	}
}
