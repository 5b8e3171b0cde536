package partition

// The servers' configs are natsconf/cluster-n1..3.conf and accounts.conf,
// as shipped, with only what a namespace needs changed: every 127.0.0.1
// address becomes the address of the node that listens on that port, the
// store directory is the test's, a monitoring port is added (/healthz and
// /jsz, for leaders and health), and accounts.conf gets one more user in
// the JETSCHED account for the harness (the checker reads the fire stream
// and watches claim subjects with it). The result is parsed back with
// nats-server's own parser and checked.

import (
	"cmp"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

const (
	// harnessUser is the user added for the checker (no permissions: all).
	harnessUser = "partition-harness"
	// monitorPort is every node's HTTP monitoring port (on its own address).
	monitorPort = 8222
	// schedulerUser is natsconf's user for the scheduler processes.
	schedulerUser = "scheduler"
)

// serverConfig is one node's generated config.
type serverConfig struct {
	path        string
	name        string // server_name
	addr        netip.Addr
	clientPort  int
	clusterPort int
	storeDir    string
}

// clusterConfigs is what renderConfigs produced.
type clusterConfigs struct {
	servers []serverConfig
	// harnessPassword and schedulerPassword authenticate harnessUser and
	// schedulerUser.
	harnessPassword, schedulerPassword string
}

var (
	loopbackAddr = regexp.MustCompile(`127\.0\.0\.1:(\d+)`)
	storeDirLine = regexp.MustCompile(`(?m)^(\s*store_dir:\s*).*$`)
	serverName   = regexp.MustCompile(`(?m)^server_name:.*$`)
	jetstreamBlk = regexp.MustCompile(`(?m)^jetstream\s*\{\s*$`)
	clusterBlk   = regexp.MustCompile(`(?m)^cluster\s*\{\s*$`)
	accountUsers = regexp.MustCompile(`(?s)JETSCHED\s*\{.*?users:\s*\[`)
)

// tuning is what a run may change in the shipped configs, to measure the
// settings docs/reliability.md recommends; the zero value keeps them.
type tuning struct {
	// sync is the jetstream sync_interval ("always", "1s", ...); empty:
	// the server's default (2m). From JETSCHED_PARTITION_SYNC.
	sync string
	// routePing is the cluster's ping_interval, with ping_max 2: how soon
	// a server drops a silent route (default 2m, capped at 30s for routes,
	// ping_max 2). From JETSCHED_PARTITION_ROUTE_PING.
	routePing string
}

func (tu tuning) String() string {
	return fmt.Sprintf("sync_interval %s, cluster ping_interval %s",
		cmp.Or(tu.sync, "default (2m)"), cmp.Or(tu.routePing, "default (30s for routes, ping_max 2)"))
}

// renderConfigs writes the configs of len(addrs) nodes into dir, from the
// natsconf directory src: node i listens on addrs[i].
func renderConfigs(src, dir string, addrs []netip.Addr, harnessPassword string, tune tuning) (clusterConfigs, error) {
	out := clusterConfigs{harnessPassword: harnessPassword}
	// The ports each shipped config listens on decide which node an
	// address in any config belongs to.
	owner := map[int]int{}
	var shipped []*server.Options
	for i := range addrs {
		path := filepath.Join(src, fmt.Sprintf("cluster-n%d.conf", i+1))
		o, err := server.ProcessConfigFile(path)
		if err != nil {
			return out, fmt.Errorf("parse %s: %w", path, err)
		}
		shipped = append(shipped, o)
		owner[o.Port], owner[o.Cluster.Port] = i, i
	}
	for _, u := range shipped[0].Users {
		if u.Username == schedulerUser {
			out.schedulerPassword = u.Password
		}
	}
	if out.schedulerPassword == "" {
		return out, fmt.Errorf("%s/accounts.conf has no user %q with a password", src, schedulerUser)
	}

	accounts, err := os.ReadFile(filepath.Join(src, "accounts.conf"))
	if err != nil {
		return out, err
	}
	loc := accountUsers.FindIndex(accounts)
	if loc == nil {
		return out, fmt.Errorf("%s/accounts.conf: no users list in account JETSCHED to add the harness user to", src)
	}
	patched := slices.Concat(accounts[:loc[1]],
		[]byte(fmt.Sprintf("\n      # Added by the partition harness (integration/partition), not shipped.\n      { user: %q, password: %q }\n", harnessUser, harnessPassword)),
		accounts[loc[1]:])
	if err := os.WriteFile(filepath.Join(dir, "accounts.conf"), patched, 0o600); err != nil {
		return out, err
	}

	for i, addr := range addrs {
		name := fmt.Sprintf("cluster-n%d.conf", i+1)
		text, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			return out, err
		}
		var bad error
		s := loopbackAddr.ReplaceAllStringFunc(string(text), func(m string) string {
			port, _ := strconv.Atoi(loopbackAddr.FindStringSubmatch(m)[1])
			n, ok := owner[port]
			if !ok {
				bad = fmt.Errorf("%s: %s is no node's client or cluster port", name, m)
				return m
			}
			return netip.AddrPortFrom(addrs[n], uint16(port)).String()
		})
		if bad != nil {
			return out, bad
		}
		store := filepath.Join(dir, fmt.Sprintf("store-n%d", i+1))
		if !storeDirLine.MatchString(s) {
			return out, fmt.Errorf("%s: no store_dir line", name)
		}
		s = storeDirLine.ReplaceAllString(s, "${1}"+strconv.Quote(store))
		if !serverName.MatchString(s) {
			return out, fmt.Errorf("%s: no server_name line", name)
		}
		s = serverName.ReplaceAllStringFunc(s, func(m string) string {
			return m + "\n# Added by the partition harness: monitoring for /healthz and /jsz.\nhttp: " +
				strconv.Quote(netip.AddrPortFrom(addr, monitorPort).String())
		})
		if tune.sync != "" {
			if !jetstreamBlk.MatchString(s) {
				return out, fmt.Errorf("%s: no jetstream block for sync_interval", name)
			}
			s = jetstreamBlk.ReplaceAllStringFunc(s, func(m string) string {
				return m + "\n  sync_interval: " + strconv.Quote(tune.sync)
			})
		}
		if tune.routePing != "" {
			if !clusterBlk.MatchString(s) {
				return out, fmt.Errorf("%s: no cluster block for ping_interval", name)
			}
			s = clusterBlk.ReplaceAllStringFunc(s, func(m string) string {
				return m + "\n  ping_interval: " + strconv.Quote(tune.routePing) + "\n  ping_max: 2"
			})
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			return out, err
		}
		sc, err := checkConfig(path, addr, addrs, store)
		if err != nil {
			return out, err
		}
		out.servers = append(out.servers, sc)
	}
	return out, nil
}

// checkConfig parses a generated config with nats-server's parser and
// checks that it listens, routes and stores where the harness needs.
func checkConfig(path string, addr netip.Addr, all []netip.Addr, store string) (serverConfig, error) {
	o, err := server.ProcessConfigFile(path)
	if err != nil {
		return serverConfig{}, fmt.Errorf("generated %s does not parse: %w", path, err)
	}
	var problems []string
	if o.Host != addr.String() || o.Cluster.Host != addr.String() || o.HTTPHost != addr.String() {
		problems = append(problems, fmt.Sprintf("listens on %s, cluster %s, http %s; want %s", o.Host, o.Cluster.Host, o.HTTPHost, addr))
	}
	if o.StoreDir != store {
		problems = append(problems, fmt.Sprintf("store_dir %q, want %q", o.StoreDir, store))
	}
	if len(o.Routes) != len(all) {
		problems = append(problems, fmt.Sprintf("%d routes, want %d", len(o.Routes), len(all)))
	}
	for _, r := range o.Routes {
		if a, err := netip.ParseAddr(r.Hostname()); err != nil || !slices.Contains(all, a) {
			problems = append(problems, "route "+r.String()+" is not to a node")
		}
	}
	if !slices.ContainsFunc(o.Users, func(u *server.User) bool { return u.Username == harnessUser }) {
		problems = append(problems, "no user "+harnessUser)
	}
	if len(problems) > 0 {
		return serverConfig{}, fmt.Errorf("generated %s: %s", path, strings.Join(problems, "; "))
	}
	return serverConfig{path: path, name: o.ServerName, addr: addr, clientPort: o.Port, clusterPort: o.Cluster.Port, storeDir: store}, nil
}
