package partition

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// TestRenderConfigs: the shipped natsconf cluster configs, rendered for
// three addresses, listen and route there, store in the test's directory,
// keep the shipped accounts plus the harness user, and apply the tuning.
func TestRenderConfigs(t *testing.T) {
	addrs := []netip.Addr{netip.MustParseAddr("10.9.8.1"), netip.MustParseAddr("10.9.8.2"), netip.MustParseAddr("10.9.8.3")}
	dir := t.TempDir()
	cfgs, err := renderConfigs(filepath.Join("..", "..", "natsconf"), dir, addrs, "pw", tuning{sync: "always", routePing: "2s"})
	if err != nil {
		t.Fatal(err)
	}
	if cfgs.schedulerPassword == "" || cfgs.harnessPassword != "pw" {
		t.Errorf("passwords: scheduler %q harness %q", cfgs.schedulerPassword, cfgs.harnessPassword)
	}
	if len(cfgs.servers) != 3 {
		t.Fatalf("%d servers", len(cfgs.servers))
	}
	names := map[string]bool{}
	for i, sc := range cfgs.servers {
		o, err := server.ProcessConfigFile(sc.path)
		if err != nil {
			t.Fatal(err)
		}
		names[o.ServerName] = true
		if o.Host != addrs[i].String() || o.Cluster.Host != addrs[i].String() || o.HTTPHost != addrs[i].String() || o.HTTPPort != monitorPort {
			t.Errorf("node %d: client %s:%d cluster %s http %s:%d", i, o.Host, o.Port, o.Cluster.Host, o.HTTPHost, o.HTTPPort)
		}
		if !strings.HasPrefix(o.StoreDir, dir) {
			t.Errorf("node %d: store_dir %s outside %s", i, o.StoreDir, dir)
		}
		for _, r := range o.Routes {
			if !strings.HasPrefix(r.Host, "10.9.8.") {
				t.Errorf("node %d: route %s", i, r)
			}
		}
		if !o.NoSublistCache {
			t.Errorf("node %d: the shared match cache is on (disable_sublist_cache, docs/operations.md)", i)
		}
		if !o.SyncAlways || o.Cluster.PingInterval.String() != "2s" || o.Cluster.MaxPingsOut != 2 {
			t.Errorf("node %d: sync always %v, cluster ping %s max %d", i, o.SyncAlways, o.Cluster.PingInterval, o.Cluster.MaxPingsOut)
		}
		users := map[string]string{}
		for _, u := range o.Users {
			users[u.Username] = u.Account.Name
		}
		for _, u := range []string{schedulerUser, harnessUser} {
			if users[u] != "JETSCHED" {
				t.Errorf("node %d: user %s in account %q", i, u, users[u])
			}
		}
	}
	if len(names) != 3 {
		t.Errorf("server names %v: want three", names)
	}
	// The shipped files are untouched.
	shipped, err := os.ReadFile(filepath.Join("..", "..", "natsconf", "cluster-n1.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(shipped), "127.0.0.1") || strings.Contains(string(shipped), harnessUser) {
		t.Error("natsconf/cluster-n1.conf was changed")
	}
}

// TestRenderConfigsRefusesUnknownAddress: a loopback address on a port
// that is no node's cannot be moved into a namespace.
func TestRenderConfigsRefusesUnknownAddress(t *testing.T) {
	src := t.TempDir()
	for _, f := range []string{"accounts.conf", "cluster-n1.conf", "cluster-n2.conf", "cluster-n3.conf"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "natsconf", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "cluster-n2.conf" {
			b = append(b, []byte("\nleafnodes { listen: 127.0.0.1:7422 }\n")...)
		}
		if err := os.WriteFile(filepath.Join(src, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	addrs := []netip.Addr{netip.MustParseAddr("10.9.8.1"), netip.MustParseAddr("10.9.8.2"), netip.MustParseAddr("10.9.8.3")}
	_, err := renderConfigs(src, t.TempDir(), addrs, "pw", tuning{})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:7422") {
		t.Errorf("error %v, want one naming 127.0.0.1:7422", err)
	}
}
