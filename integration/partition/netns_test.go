package partition

// The test's own network: one namespace per node and a fourth holding a
// bridge, joined by veth pairs, with addresses in a private /24 chosen per
// run. Nothing is routed out: the namespaces have no default route and the
// bridge no uplink, so the root namespace and the machine's network never
// see the traffic. Nemeses act on the bridge's ports (tc clsact + cls_bpf
// filters, and netem when the kernel has it).

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/testwait"
)

// nsPrefix starts the name of every namespace the harness makes:
// jsp-<pid of the test process>-<random>-<role>. The pid lets a later run
// remove what a crashed run left, and only that.
const nsPrefix = "jsp-"

// host is one node's namespace.
type host struct {
	index int
	ns    string     // namespace name
	addr  netip.Addr // its address on the bridge
	port  string     // its veth's name in the bridge namespace
}

// network is the bridge and the hosts.
type network struct {
	t        *testing.T
	id       string // jsp-<pid>-<random>
	bridgeNS string
	hosts    []*host
	// netem is "" when the kernel can run tc netem, else why it cannot.
	netem string
}

// ipCmd runs ip or tc with args and returns its error with its output.
func ipCmd(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// netnsSupport says why this test cannot make namespaces ("" when it can).
func netnsSupport() string {
	if uid := os.Geteuid(); uid != 0 {
		return fmt.Sprintf("the partition harness needs root for ip netns and tc (CI runs as root); running as uid %d", uid)
	}
	for _, bin := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Sprintf("%s (iproute2) is not installed: %v (test.sh installs iproute2 when it runs as root)", bin, err)
		}
	}
	probe := fmt.Sprintf("%s%d-probe-%d", nsPrefix, os.Getpid(), rand.IntN(1e6))
	if err := ipCmd("ip", "netns", "add", probe); err != nil {
		return fmt.Sprintf("ip netns is not possible here: %v", err)
	}
	_ = ipCmd("ip", "netns", "del", probe)
	return ""
}

// sweepNamespaces removes namespaces a previous run left behind: ours by
// prefix, whose test process is gone. Processes still inside them (nats-
// servers, schedulers of that run) are killed first, by pid.
func sweepNamespaces(t *testing.T) {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatalf("ip netns list: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		if !strings.HasPrefix(name, nsPrefix) {
			continue
		}
		pidStr, _, _ := strings.Cut(strings.TrimPrefix(name, nsPrefix), "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			continue // its test is still running
		}
		killNamespaceProcs(name)
		if err := ipCmd("ip", "netns", "del", name); err != nil {
			t.Logf("sweep: %v", err)
		} else {
			t.Logf("sweep: removed namespace %s left by a previous run (pid %d)", name, pid)
		}
	}
}

// killNamespaceProcs SIGKILLs the processes inside a namespace of ours.
func killNamespaceProcs(ns string) {
	out, err := exec.Command("ip", "netns", "pids", ns).Output()
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// newNetwork makes the bridge namespace and n host namespaces, each with
// a veth into the bridge and an address in a random 10.x.y.0/24. It is
// torn down when the test ends, whatever happened.
func newNetwork(t *testing.T, n int) *network {
	t.Helper()
	nw := &network{t: t, id: fmt.Sprintf("%s%d-%04x", nsPrefix, os.Getpid(), rand.IntN(1<<16))}
	nw.bridgeNS = nw.id + "-br"
	t.Cleanup(nw.teardown)
	subnet := [3]byte{10, byte(16 + rand.IntN(200)), byte(rand.IntN(256))}
	must := func(name string, args ...string) {
		t.Helper()
		if err := ipCmd(name, args...); err != nil {
			t.Fatal(err)
		}
	}
	must("ip", "netns", "add", nw.bridgeNS)
	must("ip", "-n", nw.bridgeNS, "link", "add", "br0", "type", "bridge")
	must("ip", "-n", nw.bridgeNS, "link", "set", "br0", "up")
	for i := range n {
		h := &host{index: i, ns: fmt.Sprintf("%s-n%d", nw.id, i+1),
			addr: netip.AddrFrom4([4]byte{subnet[0], subnet[1], subnet[2], byte(i + 1)}),
			port: fmt.Sprintf("p%d", i+1)}
		must("ip", "netns", "add", h.ns)
		// The pair is made in the bridge namespace with its peer placed in
		// the host's, so no name ever appears in the root namespace.
		must("ip", "-n", nw.bridgeNS, "link", "add", h.port, "type", "veth", "peer", "name", "eth0", "netns", h.ns)
		must("ip", "-n", nw.bridgeNS, "link", "set", h.port, "master", "br0")
		must("ip", "-n", nw.bridgeNS, "link", "set", h.port, "up")
		must("ip", "-n", h.ns, "addr", "add", h.addr.String()+"/24", "dev", "eth0")
		must("ip", "-n", h.ns, "link", "set", "eth0", "up")
		must("ip", "-n", h.ns, "link", "set", "lo", "up")
		// Every port gets a clsact qdisc now: the nemeses only add and
		// remove filters on it.
		must("tc", "-n", nw.bridgeNS, "qdisc", "add", "dev", h.port, "clsact")
		nw.hosts = append(nw.hosts, h)
	}
	nw.netem = nw.probeNetem()
	t.Logf("network %s: bridge namespace %s, hosts %s; netem: %s", nw.id, nw.bridgeNS, nw.describe(), cmp.Or(nw.netem, "available"))
	return nw
}

func (nw *network) describe() string {
	var s []string
	for _, h := range nw.hosts {
		s = append(s, h.ns+"="+h.addr.String())
	}
	return strings.Join(s, " ")
}

// probeNetem tries a netem qdisc on the bridge and says why it failed.
func (nw *network) probeNetem() string {
	err := ipCmd("tc", "-n", nw.bridgeNS, "qdisc", "add", "dev", "br0", "root", "netem", "delay", "1ms")
	if err != nil {
		return "the kernel cannot run tc netem (sch_netem missing: CONFIG_NET_SCH_NETEM not set or the module not loadable): " + err.Error()
	}
	_ = ipCmd("tc", "-n", nw.bridgeNS, "qdisc", "del", "dev", "br0", "root")
	return ""
}

// teardown kills what still runs in the namespaces and deletes them
// (deleting a namespace deletes its veth ends, and so the pairs).
func (nw *network) teardown() {
	for _, h := range nw.hosts {
		killNamespaceProcs(h.ns)
		if err := ipCmd("ip", "netns", "del", h.ns); err != nil {
			nw.t.Errorf("teardown: %v", err)
		}
	}
	if err := ipCmd("ip", "netns", "del", nw.bridgeNS); err != nil && !strings.Contains(err.Error(), "No such file") {
		nw.t.Errorf("teardown: %v", err)
	}
}

// filter replaces the filters of a port in one direction ("egress": to
// the host, "ingress": from it) with f; a zero f leaves none.
func (nw *network) filter(h *host, dir string, f dropFilter) error {
	_ = ipCmd("tc", "-n", nw.bridgeNS, "filter", "del", "dev", h.port, dir)
	if len(f.from) == 0 && f.loss == 0 {
		return nil
	}
	p, err := f.program()
	if err != nil {
		return err
	}
	return ipCmd("tc", "-n", nw.bridgeNS, "filter", "add", "dev", h.port, dir, "bpf", "da", "bytecode", bytecode(p))
}

// cut drops every packet between the two sides of each pair of hosts, in
// both directions: each port drops what comes from the hosts cut from it.
// It replaces any earlier cut.
func (nw *network) cut(pairs [][2]int) error {
	from := make([][]netip.Addr, len(nw.hosts))
	for _, p := range pairs {
		a, b := nw.hosts[p[0]], nw.hosts[p[1]]
		from[a.index] = append(from[a.index], b.addr)
		from[b.index] = append(from[b.index], a.addr)
	}
	for _, h := range nw.hosts {
		if err := nw.filter(h, "egress", dropFilter{from: from[h.index]}); err != nil {
			return err
		}
	}
	return nil
}

// isolate cuts host i from every other.
func (nw *network) isolate(i int) error {
	var pairs [][2]int
	for _, h := range nw.hosts {
		if h.index != i {
			pairs = append(pairs, [2]int{i, h.index})
		}
	}
	return nw.cut(pairs)
}

// lossy drops a random share of the packets on the links of the hosts in
// idx, so that a packet between them meets the loss once: on its way to
// each host (its port's egress) and, unless every host is lossy (then its
// destination's port drops it), on its way from it (ingress).
func (nw *network) lossy(idx []int, loss float64) error {
	dirs := []string{"egress", "ingress"}
	if len(idx) == len(nw.hosts) {
		dirs = dirs[:1]
	}
	for _, i := range idx {
		for _, dir := range dirs {
			if err := nw.filter(nw.hosts[i], dir, dropFilter{loss: loss}); err != nil {
				return err
			}
		}
	}
	return nil
}

// netemOn puts a netem qdisc (args such as "loss 20% delay 200ms 100ms")
// on the links of the hosts in idx, each packet meeting it once as in
// lossy: on the host's eth0 (from it) and, unless every host gets it, on
// its bridge port (to it).
func (nw *network) netemOn(idx []int, args ...string) error {
	if nw.netem != "" {
		return errors.New(nw.netem)
	}
	for _, i := range idx {
		h := nw.hosts[i]
		if err := ipCmd("tc", append([]string{"-n", h.ns, "qdisc", "add", "dev", "eth0", "root", "netem"}, args...)...); err != nil {
			return err
		}
		if len(idx) == len(nw.hosts) {
			continue
		}
		if err := ipCmd("tc", append([]string{"-n", nw.bridgeNS, "qdisc", "add", "dev", h.port, "root", "netem"}, args...)...); err != nil {
			return err
		}
	}
	return nil
}

// heal removes every filter and netem qdisc: the network is whole again.
func (nw *network) heal() error {
	var errs []error
	for _, h := range nw.hosts {
		for _, dir := range []string{"egress", "ingress"} {
			if err := nw.filter(h, dir, dropFilter{}); err != nil {
				errs = append(errs, err)
			}
		}
		if nw.netem == "" {
			// Absent qdiscs are fine: only a nemesis with netem added them.
			_ = ipCmd("tc", "-n", h.ns, "qdisc", "del", "dev", "eth0", "root")
			_ = ipCmd("tc", "-n", nw.bridgeNS, "qdisc", "del", "dev", h.port, "root")
		}
	}
	return errors.Join(errs...)
}

// filtersClear reports whether no port has a filter left (a heal check).
func (nw *network) filtersClear() error {
	for _, h := range nw.hosts {
		for _, dir := range []string{"egress", "ingress"} {
			out, err := exec.Command("tc", "-n", nw.bridgeNS, "filter", "show", "dev", h.port, dir).CombinedOutput()
			if err != nil {
				return fmt.Errorf("tc filter show dev %s %s: %w: %s", h.port, dir, err, out)
			}
			if len(bytes.TrimSpace(out)) > 0 {
				return fmt.Errorf("port %s %s still has filters: %s", h.port, dir, out)
			}
		}
	}
	return nil
}

// waitReachable polls a TCP connect from host a to b's addr:port until it
// succeeds (or until timeout), from inside a's namespace.
func (nw *network) waitReachable(a, b int, port int, timeout time.Duration) error {
	d := nsDialer{ns: nw.hosts[a].ns}
	addr := netip.AddrPortFrom(nw.hosts[b].addr, uint16(port)).String()
	return testwait.Until(timeout, nw.hosts[a].ns+" reaching "+addr, func() error {
		c, err := d.dialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err
	})
}
