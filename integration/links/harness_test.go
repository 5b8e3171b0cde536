package links

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/jetsched/jetsched/internal/faulttest"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Timing of every scheduler process: the fault tests' claim and lease TTLs
// (integration/harness_test.go), so that takeovers happen within a nemesis.
const (
	claimTTL = "3s"
	leaseTTL = 2 * time.Second
	// guardLimit is the latest a cut-off scheduler may still send a state
	// write after its link broke: the lease guard (90% of the TTL) plus a
	// second for a claim begun just before it closed (as the partition
	// tests allow).
	guardLimit = leaseTTL*9/10 + time.Second
)

// buildScheduler builds cmd/scheduler into a directory of t.
func buildScheduler(t *testing.T) string {
	t.Helper()
	return faulttest.BuildScheduler(t)
}

// logDir is where the schedulers' logs go: a directory of the test, or
// under $JETSCHED_LINKS_LOGS (kept after the run) when set.
func logDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("JETSCHED_LINKS_LOGS")
	if root == "" {
		return t.TempDir()
	}
	dir := filepath.Join(root, strings.ReplaceAll(t.Name(), "/", "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// member is one scheduler process and its way to the server: a tap, then a
// proxy of its own.
type member struct {
	name  string
	proc  *faulttest.Proc
	tap   *tap
	proxy *toxiproxy.Proxy
}

// fleet is a nats-server, scheduler processes each behind its own proxy,
// and a checker connected directly to the server.
type fleet struct {
	t       *testing.T
	members []*member
	server  string // the server's host:port, for a healed link
	js      jetstream.JetStream
	store   *jsstore.Store
	fires   *fireLog
}

// startFleet starts a server and n schedulers (s1, s2, ...), each run with
// the fault tests' flags plus extra, through tap -> proxy -> server.
func startFleet(t *testing.T, bin string, n int, extra ...string) *fleet {
	t.Helper()
	srv := natstest.Start(t)
	u, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	toxics := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	f := &fleet{t: t, server: u.Host}
	for i := range n {
		m := &member{name: fmt.Sprintf("s%d", i+1)}
		m.proxy = toxiproxy.NewProxy(toxics, m.name, "127.0.0.1:0", u.Host)
		if err := m.proxy.Start(); err != nil {
			t.Fatalf("proxy %s: %v", m.name, err)
		}
		t.Cleanup(m.proxy.Stop)
		if m.tap, err = newTap(m.proxy.Listen); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.tap.close)
		args := append([]string{"run", "--nats-url", "nats://" + m.tap.addr(), "--instance", m.name,
			"--claim-ttl", claimTTL, "--lease-ttl", leaseTTL.String(), "--log-format", "json"}, extra...)
		logPath := filepath.Join(logDir(t), m.name+".log")
		m.proc = faulttest.NewProc(m.name, logPath, `"msg":"scheduler started"`, append([]string{bin}, args...))
		t.Cleanup(func() {
			m.proc.Kill()
			if t.Failed() {
				t.Logf("---- scheduler %s: %s ----\n%s\n---- end of %s ----", m.name, logPath, faulttest.Tail(logPath, 0, 16<<10), m.name)
			}
		})
		if err := m.proc.Start(30 * time.Second); err != nil {
			t.Fatal(err)
		}
		f.members = append(f.members, m)
	}
	_, js := srv.Connect(t)
	f.js = js
	err = testwait.Until(30*time.Second, "the jetsched buckets", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		f.store, err = jsstore.Open(ctx, js, kvstore.Layout{})
		return err
	})
	if err != nil {
		t.Fatalf("open the buckets: %v", err)
	}
	f.fires = newFireLog(js)
	return f
}

// register writes n schedules every second with fire_all and a 2s misfire
// threshold (the fault tests' spec): an outage makes slots late, and every
// one must still fire.
func (f *fleet) register(n int) []string {
	f.t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("link-%04d", i)
		spec := kvstore.Spec{Workflow: fmt.Sprintf("links%d", i%4), Every: "1s",
			Misfire: kvstore.MisfireFireAll, CatchupWindow: "10m", MisfireThreshold: "2s"}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := f.store.PutSpec(ctx, ids[i], spec)
		cancel()
		if err != nil {
			f.t.Fatalf("put spec %s: %v", ids[i], err)
		}
	}
	return ids
}

// shards is the number of shard leases each instance holds.
func (f *fleet) shards() map[string]int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out := map[string]int{}
	for _, o := range f.store.LeaseOwners(ctx) {
		out[o]++
	}
	return out
}

// waitSteady waits until every scheduler runs and holds a shard, and
// every schedule has fired a slot at or after since.
func (f *fleet) waitSteady(ids []string, since time.Time, timeout time.Duration) error {
	err := testwait.Until(timeout, "a shard lease for every scheduler", func() error {
		owners := f.shards()
		for _, m := range f.members {
			if !m.proc.Running() {
				return fmt.Errorf("scheduler %s: %s", m.name, m.proc.ExitStatus())
			}
			if owners[m.name] == 0 {
				return fmt.Errorf("scheduler %s holds no shard yet (leases: %v)", m.name, owners)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return testwait.Until(timeout, "every schedule firing", func() error {
		if err := f.fires.sync(); err != nil {
			return err
		}
		if miss := f.fires.missing(ids, since.Add(-time.Second), since); len(miss) > 0 {
			return fmt.Errorf("%d schedules have not fired at %s yet", len(miss), since.Format(time.TimeOnly))
		}
		return nil
	})
}

// mostShards is the member holding the most shard leases.
func (f *fleet) mostShards() (*member, int) {
	owners := f.shards()
	best := f.members[0]
	for _, m := range f.members[1:] {
		if owners[m.name] > owners[best.name] {
			best = m
		}
	}
	return best, owners[best.name]
}

// ---------------------------------------------------------------------------
// The fire stream.

// slotKey names a slot: schedule id and slot time.
type slotKey struct {
	id string
	ms int64
}

// fireLog keeps, per slot, when the stream stored each of its fires. Used
// from the test's goroutine only.
type fireLog struct {
	stream *faulttest.FireReader
	stored map[slotKey][]time.Time
	bad    []string // messages that are not well-formed fires
}

func newFireLog(js jetstream.JetStream) *fireLog {
	return &fireLog{stream: faulttest.NewFireReader(js, "SCHED_FIRES"), stored: map[slotKey][]time.Time{}}
}

// sync reads every message stored up to now.
func (l *fireLog) sync() error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return l.stream.Sync(ctx, func(h nats.Header, md *jetstream.MsgMetadata) {
		id := h.Get(kvstore.HeaderScheduleID)
		sid, slot, err := kvstore.ParseSlotID(h.Get(kvstore.HeaderMsgID))
		if err != nil || sid != id {
			l.bad = append(l.bad, fmt.Sprintf("msg-id %q schedule %q: %v", h.Get(kvstore.HeaderMsgID), id, err))
			return
		}
		k := slotKey{id, slot.UnixMilli()}
		l.stored[k] = append(l.stored[k], md.Timestamp)
	})
}

// slots are the whole seconds in [from, to), as unix milliseconds: the
// slots of an "every 1s" schedule.
func slots(from, to time.Time) []int64 {
	var out []int64
	for s := from.Truncate(time.Second); s.Before(to); s = s.Add(time.Second) {
		if !s.Before(from) {
			out = append(out, s.UnixMilli())
		}
	}
	return out
}

// missing lists the slots of ids in [from, to) with no fire.
func (l *fireLog) missing(ids []string, from, to time.Time) []string {
	var out []string
	for _, id := range ids {
		for _, ms := range slots(from, to) {
			if len(l.stored[slotKey{id, ms}]) == 0 {
				out = append(out, kvstore.SlotID(id, time.UnixMilli(ms)))
			}
		}
	}
	return out
}

// waitFired syncs until every slot of ids in [from, to) has fired, or
// timeout passes; it returns the slots still missing.
func (l *fireLog) waitFired(ids []string, from, to time.Time, timeout time.Duration) []string {
	var miss []string
	_ = testwait.Until(timeout, "every slot fired", func() error {
		err := l.sync()
		miss = l.missing(ids, from, to)
		if err != nil {
			return err
		}
		if len(miss) > 0 {
			return fmt.Errorf("%d slots not fired yet", len(miss))
		}
		return nil
	})
	return miss
}

// window is one nemesis in time: the fault from start to heal, then the
// recovery until end.
type window struct{ start, heal, end time.Time }

// figures are what the slots of a window did.
type figures struct {
	Schedules, Expected, Fired, Duplicates, Lost int
	// Lateness (stored minus slot time), over the window and for the slots
	// due during the fault and after the heal: 99th percentile and worst.
	P99, Max, P99During, MaxDuring, P99After, MaxAfter time.Duration

	lost, dups []string
}

// account counts the slots of ids in the window; duplicates count over
// every slot read, in the window or not.
func (l *fireLog) account(ids []string, w window) figures {
	f := figures{Schedules: len(ids)}
	var all, during, after []time.Duration
	for _, id := range ids {
		for _, ms := range slots(w.start, w.end) {
			f.Expected++
			stored := l.stored[slotKey{id, ms}]
			if len(stored) == 0 {
				f.Lost++
				f.lost = append(f.lost, kvstore.SlotID(id, time.UnixMilli(ms)))
				continue
			}
			f.Fired++
			slot := time.UnixMilli(ms)
			late := slices.MinFunc(stored, time.Time.Compare).Sub(slot)
			all = append(all, late)
			if slot.Before(w.heal) {
				during = append(during, late)
			} else {
				after = append(after, late)
			}
		}
	}
	for k, stored := range l.stored {
		if len(stored) > 1 {
			f.Duplicates += len(stored) - 1
			f.dups = append(f.dups, fmt.Sprintf("%s x%d", kvstore.SlotID(k.id, time.UnixMilli(k.ms)), len(stored)))
		}
	}
	f.P99, f.Max = p99(all), slices.Max(append(all, 0))
	f.P99During, f.MaxDuring = p99(during), slices.Max(append(during, 0))
	f.P99After, f.MaxAfter = p99(after), slices.Max(append(after, 0))
	slices.Sort(f.lost)
	slices.Sort(f.dups)
	return f
}

// p99 is the 99th percentile (nearest rank); 0 for none.
func p99(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	d = slices.Clone(d)
	slices.Sort(d)
	return d[(len(d)*99+99)/100-1]
}

// line is the FAULT summary line, in the fault tests' format with the
// lateness after it, and extra figures of the nemesis.
func (f figures) line(name string, extra ...string) string {
	return strings.Join(append([]string{fmt.Sprintf(
		"FAULT links-%s: schedules=%d slots expected=%d fired=%d duplicates=%d lost=%d lateness_p99=%s max=%s during_p99=%s during_max=%s after_p99=%s after_max=%s",
		name, f.Schedules, f.Expected, f.Fired, f.Duplicates, f.Lost, ms(f.P99), ms(f.Max),
		ms(f.P99During), ms(f.MaxDuring), ms(f.P99After), ms(f.MaxAfter))}, extra...), " ")
}

// ms renders a duration to the millisecond ("none" when negative).
func ms(d time.Duration) string {
	if d < 0 {
		return "none"
	}
	return d.Round(time.Millisecond).String()
}

// logCount counts the lines of a log from off that contain needle.
func logCount(path string, off int64, needle string) int {
	b, err := os.ReadFile(path)
	if err != nil || off > int64(len(b)) {
		return 0
	}
	return strings.Count(string(b[off:]), needle)
}

// errToxic wraps a toxiproxy error with the toxic it was about.
func errToxic(proxy, toxic string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("proxy %s, toxic %s: %w", proxy, toxic, err)
}
