package integration

import (
	"bytes"
	"context"
	"fmt"
	"github.com/jetsched/jetsched/internal/daemon/daemontest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/cli"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/testwait"
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
	testwait.Eventually(t, 30*time.Second, "the cluster's JetStream", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := js.AccountInfo(ctx)
		return err == nil
	})

	ctx := context.Background()
	var d *daemon.Daemon
	testwait.Eventually(t, 30*time.Second, "the daemon started on the R3 cluster", func() bool { // R3 assets need the cluster settled
		d, err = daemon.Start(ctx, daemon.Config{Conn: natsconn.Options{URL: url, User: "scheduler", Password: "scheduler-secret"},
			Setup: jsstore.SetupConfig{Replicas: 3}})
		return err == nil
	})
	defer daemontest.Stop(t, d)
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
	// The consumer's create request can find no responder while the R3
	// stream's leader settles (seen in CI: "no responders"): asked again
	// until a fire is read, or the deadline.
	err = testwait.Until(30*time.Second, "a fire on the R3 cluster", func() error {
		cons, err := js.OrderedConsumer(ctx, "SCHED_FIRES", jetstream.OrderedConsumerConfig{})
		if err != nil {
			return err
		}
		_, err = cons.Next(jetstream.FetchMaxWait(10 * time.Second))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNatsconfEmbeddedServer: `scheduler run --server-config` loads
// natsconf/single.conf into the embedded server, so its accounts work
// without a separate nats-server: the scheduler connects in process as its
// user, and a worker and an operator connect over TCP as theirs.
func TestNatsconfEmbeddedServer(t *testing.T) {
	dir := t.TempDir()
	conf := natsconfSingle(t, dir)
	keyFile := filepath.Join(dir, "audit.key")
	if err := os.WriteFile(keyFile, []byte(testAuditKey), 0o600); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("nats://127.0.0.1:%d", freePort(t, map[int]bool{}))
	run := []string{"run", "--server-config", conf, "--listen", strings.TrimPrefix(url, "nats://"), "--data-dir", filepath.Join(dir, "js"),
		"--log-format", "json", "--audit-key-file", keyFile}
	ctx := context.Background()

	// Without the scheduler's user, the in-process connection is refused
	// and the error says what to give.
	var out, errOut bytes.Buffer
	if code := cli.Main(ctx, run, &out, &errOut); code != cli.ExitInvalid || !strings.Contains(errOut.String(), "--user and --password") {
		t.Fatalf("run without a user: exit %d: %s", code, errOut.String())
	}

	runCtx, stop := context.WithCancel(ctx)
	exited := make(chan int, 1)
	var daemonErr bytes.Buffer
	go func() {
		var out bytes.Buffer
		exited <- cli.Main(runCtx, append(run, "--user", "scheduler", "--password", "scheduler-secret"), &out, &daemonErr)
	}()
	stopped := false
	stopDaemon := func() int {
		if stopped {
			return cli.ExitOK
		}
		stopped = true
		stop()
		return <-exited
	}
	defer stopDaemon()

	operator := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		args = append(args, "--nats-url", url, "--user", "operator", "--password", "operator-secret", "--audit-key-file", keyFile)
		code := cli.Main(ctx, args, &out, &errOut)
		return code, out.String(), errOut.String()
	}
	testwait.Eventually(t, 30*time.Second, "schedule inv added", func() bool {
		code, _, _ := operator("schedule", "add", "--id", "inv", "--workflow", "invoices", "--every", "1s")
		return code == cli.ExitOK
	})
	billing := connectAs(t, url, "billing-worker", "worker-secret")
	fires, w := startWorker(t, billing.nc, "billing", "invoices", nil)
	nextFire(t, fires)
	if err := w.StopAndCancel(context.Background()); err != nil { // before its server goes
		t.Fatal(err)
	}
	if nc, err := nats.Connect(url); err == nil {
		nc.Close()
		t.Fatal("an anonymous client connected to the embedded server")
	}
	// The operator may read (only read) the audit trail to verify it.
	if code, out, e := operator("audit", "verify", "--from", "1"); code != cli.ExitOK || !strings.Contains(out, "intact") {
		t.Fatalf("operator audit verify: exit %d: %s %s", code, out, e)
	}
	if code := stopDaemon(); code != cli.ExitOK {
		t.Fatalf("run exited %d: %s", code, daemonErr.String())
	}
}

// natsconfSingle writes dir/server.conf: natsconf/single.conf with its
// monitoring port freed (another run may hold 8222). nats-server resolves
// includes relative to the including file.
func natsconfSingle(t *testing.T, dir string) string {
	t.Helper()
	single, err := filepath.Abs(filepath.Join("..", "natsconf", "single.conf"))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dir, single)
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "server.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "include %q\nhttp: \"127.0.0.1:-1\"\n", rel), 0o600); err != nil {
		t.Fatal(err)
	}
	return conf
}

// TestNatsconfDemo: `scheduler demo --server-config` runs the demo, its
// in-process demo worker included, as the scheduler user of natsconf/
// without one permissions violation.
func TestNatsconfDemo(t *testing.T) {
	conf := natsconfSingle(t, t.TempDir())
	var logs bytes.Buffer
	ctx, stop := context.WithCancel(context.Background())
	exited := make(chan int, 1)
	url := fmt.Sprintf("nats://127.0.0.1:%d", freePort(t, map[int]bool{}))
	go func() {
		var out bytes.Buffer
		exited <- cli.Main(ctx, []string{"demo", "--server-config", conf, "--listen", strings.TrimPrefix(url, "nats://"), "--log-format", "json",
			"--user", "scheduler", "--password", "scheduler-secret"}, &out, &lockedWriter{w: &logs})
	}()
	var once sync.Once
	code := -1
	finish := func() int { once.Do(func() { stop(); code = <-exited }); return code }
	t.Cleanup(func() { finish() })

	// The demo worker's completion report, published on the scheduler's
	// connection, passes its permissions: it reaches a subscriber.
	testwait.Eventually(t, 20*time.Second, "the scheduler's connection", func() bool {
		nc, err := nats.Connect(url, nats.UserInfo("scheduler", "scheduler-secret"))
		if err == nil {
			nc.Close()
		}
		return err == nil
	})
	sched := connectAs(t, url, "scheduler", "scheduler-secret")
	reports, err := sched.nc.SubscribeSync("sched.done.>")
	if err != nil {
		t.Fatal(err)
	}
	_, err = reports.NextMsg(20 * time.Second)
	sched.nc.Close()
	if code := finish(); err != nil || code != cli.ExitOK {
		t.Fatalf("completion report from the demo worker: %v; demo exited %d:\n%s", err, code, logs.String())
	}
	if strings.Contains(logs.String(), "NATS error") {
		t.Fatalf("the demo hit a NATS error (a permissions violation?):\n%s", logs.String())
	}
}
