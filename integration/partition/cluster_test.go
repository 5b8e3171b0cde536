package partition

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Timing of every scheduler process: the fault tests' claim and lease TTLs
// (integration/harness_test.go), so that takeovers happen within a nemesis.
// JETSCHED_PARTITION_LEASE_TTL sets another lease TTL (the default of
// `scheduler run` is 10s).
const (
	claimTTL        = 3 * time.Second
	defaultLeaseTTL = 2 * time.Second
)

// binaries are built once per run.
type binaries struct{ natsServer, scheduler string }

// buildBinaries builds nats-server (a dependency of this module, so the
// version in go.mod) and cmd/scheduler.
func buildBinaries(t *testing.T) binaries {
	t.Helper()
	dir := t.TempDir()
	b := binaries{natsServer: filepath.Join(dir, "nats-server"), scheduler: filepath.Join(dir, "scheduler")}
	for pkg, out := range map[string]string{
		"github.com/nats-io/nats-server/v2":          b.natsServer,
		"github.com/jetsched/jetsched/cmd/scheduler": b.scheduler,
	} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Env = append(os.Environ(), "GOFLAGS=")
		if o, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, o)
		}
	}
	return b
}

// node is one namespace: its nats-server and its scheduler.
type node struct {
	index    int
	host     *host
	cfg      serverConfig
	server   *proc
	sched    *proc
	instance string // the scheduler's --instance
}

func (n *node) clientAddr() string {
	return netip.AddrPortFrom(n.host.addr, uint16(n.cfg.clientPort)).String()
}

// cluster is the three nodes and what the harness needs to reach them.
type cluster struct {
	t     *testing.T
	nw    *network
	bins  binaries
	cfgs  clusterConfigs
	nodes []*node
	// leaseTTL is every scheduler's --lease-ttl.
	leaseTTL time.Duration
}

// startCluster renders the configs, starts one nats-server per namespace
// and waits until every node reports healthy (/healthz: JetStream current).
func startCluster(t *testing.T, nw *network, bins binaries, dir string, tune tuning, leaseTTL time.Duration) *cluster {
	t.Helper()
	var addrs []netip.Addr
	for _, h := range nw.hosts {
		addrs = append(addrs, h.addr)
	}
	pw := make([]byte, 12)
	_, _ = rand.Read(pw)
	cfgs, err := renderConfigs(filepath.Join("..", "..", "natsconf"), dir, addrs, hex.EncodeToString(pw), tune)
	if err != nil {
		t.Fatalf("render cluster configs: %v", err)
	}
	c := &cluster{t: t, nw: nw, bins: bins, cfgs: cfgs, leaseTTL: leaseTTL}
	for i, h := range nw.hosts {
		sc := cfgs.servers[i]
		n := &node{index: i, host: h, cfg: sc, instance: fmt.Sprintf("s%d", i+1)}
		n.server = newProc(t, sc.name, h.ns, bins.natsServer, filepath.Join(dir, sc.name+".log"),
			"Server is ready", []string{"-c", sc.path})
		c.nodes = append(c.nodes, n)
	}
	for _, n := range c.nodes {
		if err := n.server.Start(30 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.waitHealthy(90 * time.Second); err != nil {
		t.Fatalf("cluster not healthy after start: %v", err)
	}
	return c
}

// schedulerArgs is a scheduler's command line: connected to its own
// node's server only, R3, the fault tests' TTLs, JSON logs.
func (c *cluster) schedulerArgs(n *node, extra ...string) []string {
	url := fmt.Sprintf("nats://%s:%s@%s", schedulerUser, c.cfgs.schedulerPassword, n.clientAddr())
	args := []string{"run", "--nats-url", url, "--replicas", "3", "--instance", n.instance,
		"--claim-ttl", claimTTL.String(), "--lease-ttl", c.leaseTTL.String(), "--log-format", "json"}
	return append(args, extra...)
}

// startSchedulers starts one scheduler per node, one after the other.
func (c *cluster) startSchedulers() {
	c.t.Helper()
	for _, n := range c.nodes {
		n.sched = newProc(c.t, "scheduler "+n.instance, n.host.ns, c.bins.scheduler,
			filepath.Join(filepath.Dir(n.cfg.path), n.instance+".log"), `"msg":"scheduler started"`, c.schedulerArgs(n))
		if err := n.sched.Start(60 * time.Second); err != nil {
			c.t.Fatal(err)
		}
	}
}

// connect opens a harness connection to node i's server only (no
// discovered servers), dialed inside its namespace: it never crosses the
// bridge, so it sees what that server sees. It reconnects forever and is
// closed when the test ends.
func (c *cluster) connect(i int) (*nats.Conn, jetstream.JetStream, error) {
	n := c.nodes[i]
	url := fmt.Sprintf("nats://%s:%s@%s", harnessUser, c.cfgs.harnessPassword, n.clientAddr())
	nc, err := nats.Connect(url,
		nats.SetCustomDialer(nsDialer{ns: n.host.ns}),
		nats.IgnoreDiscoveredServers(),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond),
		nats.Name("partition harness via "+n.cfg.name),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", n.cfg.name, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// index is the node of a server name, or -1.
func (c *cluster) index(serverName string) int {
	for _, n := range c.nodes {
		if n.cfg.name == serverName {
			return n.index
		}
	}
	return -1
}

// byInstance is the node of a scheduler instance, or -1.
func (c *cluster) byInstance(instance string) int {
	for _, n := range c.nodes {
		if n.instance == instance {
			return n.index
		}
	}
	return -1
}

// monitor GETs a monitoring endpoint of node i (from inside its
// namespace) and returns the status and body.
func (c *cluster) monitor(i int, path string) (int, []byte, error) {
	n := c.nodes[i]
	client := nsDialer{ns: n.host.ns}.httpClient()
	defer client.CloseIdleConnections()
	resp, err := client.Get(fmt.Sprintf("http://%s%s", netip.AddrPortFrom(n.host.addr, monitorPort), path))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// healthy reports nil when node i's /healthz says ok: the server runs,
// JetStream is enabled, the meta group has a leader and every stream and
// consumer on it is current.
func (c *cluster) healthy(i int) error {
	code, body, err := c.monitor(i, "/healthz")
	if err != nil {
		return fmt.Errorf("%s /healthz: %w", c.nodes[i].cfg.name, err)
	}
	if code != 200 {
		return fmt.Errorf("%s /healthz: %d %s", c.nodes[i].cfg.name, code, strings.TrimSpace(string(body)))
	}
	return nil
}

// waitHealthy polls every node's /healthz until all are ok.
func (c *cluster) waitHealthy(timeout time.Duration) error {
	return testwait.Until(timeout, "every node healthy", func() error {
		var errs []error
		for i := range c.nodes {
			errs = append(errs, c.healthy(i))
		}
		return errors.Join(errs...)
	})
}

// metaLeader is the JetStream meta leader as node i sees it (/jsz).
func (c *cluster) metaLeader(i int) (string, error) {
	code, body, err := c.monitor(i, "/jsz")
	if err != nil {
		return "", err
	}
	var jsz struct {
		Meta *struct {
			Leader string `json:"leader"`
		} `json:"meta_cluster"`
	}
	if code != 200 || json.Unmarshal(body, &jsz) != nil || jsz.Meta == nil || jsz.Meta.Leader == "" {
		return "", fmt.Errorf("%s /jsz: no meta leader (status %d): %.200s", c.nodes[i].cfg.name, code, body)
	}
	return jsz.Meta.Leader, nil
}

// streamLeader is the server leading a stream.
func streamLeader(js jetstream.JetStream, stream string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return "", fmt.Errorf("stream %s: %w", stream, err)
	}
	info := s.CachedInfo()
	if info.Cluster == nil || info.Cluster.Leader == "" {
		return "", fmt.Errorf("stream %s has no leader", stream)
	}
	return info.Cluster.Leader, nil
}

// moveLeader asks a stream's leader to step down in favour of server
// (JetStream's preferred placement, server 2.11+), and waits until server
// leads it. After each request it waits for the election the request
// started (the leader changes) before looking again.
func moveLeader(nc *nats.Conn, js jetstream.JetStream, stream, server string) error {
	deadline := time.Now().Add(30 * time.Second)
	var lastErr error
	for {
		var leader string
		if err := testwait.Until(10*time.Second, stream+" has a leader", func() (err error) {
			leader, err = streamLeader(js, stream)
			return err
		}); err != nil {
			return err
		}
		if leader == server {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after 30s: %s led by %s, not %s (last step-down: %v)", stream, leader, server, lastErr)
		}
		lastErr = stepDown(nc, stream, server)
		// The election the step-down started: a different leader (or the
		// same one again, elected anew, which the next round asks again).
		_ = testwait.Until(10*time.Second, stream+" leaves "+leader, func() error {
			l, err := streamLeader(js, stream)
			if err != nil {
				return err
			}
			if l == leader {
				return fmt.Errorf("still led by %s", l)
			}
			return nil
		})
	}
}

// stepDown asks stream's leader to step down in favour of server; the
// server may refuse (a replica not caught up yet), and moveLeader asks
// again after the next election or its wait.
func stepDown(nc *nats.Conn, stream, server string) error {
	body, _ := json.Marshal(map[string]any{"placement": map[string]string{"preferred": server}})
	msg, err := nc.Request("$JS.API.STREAM.LEADER.STEPDOWN."+stream, body, 5*time.Second)
	if err != nil {
		return fmt.Errorf("step down %s: %w", stream, err)
	}
	var resp struct {
		Error *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if json.Unmarshal(msg.Data, &resp) == nil && resp.Error != nil {
		return fmt.Errorf("step down %s: %s", stream, resp.Error.Description)
	}
	return nil
}

// shardOwners counts the shard leases each scheduler instance holds.
func shardOwners(owners map[int]string) map[string]int {
	out := map[string]int{}
	for _, o := range owners {
		out[o]++
	}
	return out
}

// restartServer kill -9s node i's server (if running) and starts it again
// on its store.
func (c *cluster) killServer(i int) { c.nodes[i].server.Kill() }

func (c *cluster) restartServer(i int) error {
	return c.nodes[i].server.Start(60 * time.Second)
}

// restartScheduler stops node i's scheduler gracefully and starts it with
// extra flags.
func (c *cluster) restartScheduler(i int, extra ...string) error {
	n := c.nodes[i]
	n.sched.Stop()
	n.sched.setArgs(c.schedulerArgs(n, extra...))
	return n.sched.Start(60 * time.Second)
}

// strconvDur formats a duration for a FAULT line: seconds, two decimals.
func strconvDur(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
}
