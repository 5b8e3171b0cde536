package integration

// Shared helpers of the fault tests (fault_test.go): scheduler processes
// that can be crashed and restarted, a restartable in-process JetStream
// cluster, schedules, and the reader of SCHED_FIRES that turns the stream
// into the one-line summary every fault test prints.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/faulttest"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natsembed"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Timing every fault test shares: the flags of every scheduler process.
const (
	faultClaimTTL = "3s"
	faultLeaseTTL = "2s"
	// slotStep is the cadence of every fault schedule.
	slotStep = time.Second
)

// ---------------------------------------------------------------------------
// The scheduler binary, built once per test binary.

// builtBinary is a program built once per test binary and copied for
// each test that runs it.
type builtBinary struct {
	once sync.Once
	data []byte
}

var schedulerBin, previousBin builtBinary

// copyFor builds the program with build the first time, and copies it
// into a directory of t as name, so that every test gets its own copy
// without rebuilding and nothing outlives the tests. Call it from a
// test's own goroutine, before starting parallel subtests (writing an
// executable while another goroutine forks risks ETXTBSY).
func (b *builtBinary) copyFor(t *testing.T, name string, build func() string) string {
	t.Helper()
	b.once.Do(func() {
		data, err := os.ReadFile(build())
		if err != nil {
			t.Fatalf("read built %s: %v", name, err)
		}
		b.data = data
	})
	if b.data == nil {
		t.Fatalf("%s did not build (see the first test's failure)", name)
	}
	bin := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(bin, b.data, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// schedulerBinary is cmd/scheduler of this checkout (built with
// buildScheduler from daemon_test.go), a copy for t (see copyFor).
func schedulerBinary(t *testing.T) string {
	t.Helper()
	return schedulerBin.copyFor(t, "scheduler", func() string { return buildScheduler(t) })
}

// ---------------------------------------------------------------------------
// Scheduler processes.

// schedProc is one scheduler process (`scheduler run`), started and
// restarted under the same instance name. Its stdout and stderr, across
// every start, go to one log file in the test's temporary directory; the
// tail of it is printed when the test fails.
type schedProc struct {
	*faulttest.Proc
	t    *testing.T
	name string
}

// schedulerArgs is the command line of a fleet member: the contract's
// `run --nats-url URL --instance NAME --claim-ttl 3s --lease-ttl 2s
// --log-format json`, plus extra flags.
func schedulerArgs(url, instance string, extra ...string) []string {
	args := []string{"run", "--nats-url", url, "--instance", instance,
		"--claim-ttl", faultClaimTTL, "--lease-ttl", faultLeaseTTL, "--log-format", "json"}
	return append(args, extra...)
}

// newSchedProc prepares a process; start runs it. It is killed (SIGKILL)
// when the test ends, and its log tail is printed if the test failed.
func newSchedProc(t *testing.T, bin, name string, args, env []string) *schedProc {
	t.Helper()
	p := &schedProc{t: t, name: name, Proc: faulttest.NewProc(name, filepath.Join(t.TempDir(), name+".log"),
		`"msg":"scheduler started"`, append([]string{bin}, args...))}
	p.Env = env
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			dumpLog(t, "scheduler "+name, p.LogPath)
		}
	})
	return p
}

// start runs the process and waits until it logs "scheduler started". A
// process that exits first (status 2: a flag or option it does not know)
// fails the test with its output.
func (p *schedProc) start() {
	p.t.Helper()
	err := p.Start(30 * time.Second)
	var ee *faulttest.ExitedError
	if errors.As(err, &ee) && ee.Code == 2 {
		p.t.Fatalf("scheduler %s exited with status 2 before starting: it rejected its command line "+
			"(does the binary accept every flag the test passes, such as --lease-ttl?): %s\n%s",
			p.name, strings.Join(p.Argv(), " "), ee.Tail)
	}
	if err != nil {
		p.t.Fatal(err)
	}
}

func (p *schedProc) running() bool { return p.Running() }
func (p *schedProc) kill()         { p.Kill() }
func (p *schedProc) exitCode() int { return p.ExitCode() }

// waitExit waits up to timeout for the process to exit on its own and
// returns its exit status (-1 when killed by a signal).
func (p *schedProc) waitExit(timeout time.Duration) (code int, exited bool) {
	return p.WaitExit(timeout)
}

// crashed waits up to timeout for p, started with JETSCHED_CRASH_AT=spec,
// to exit with status 3, and reports (as a test error) when it does not;
// a process still running is killed.
func crashed(t *testing.T, p *schedProc, spec string, timeout time.Duration) bool {
	t.Helper()
	code, exited := p.waitExit(timeout)
	switch {
	case !exited:
		t.Errorf("JETSCHED_CRASH_AT=%s: the scheduler did not exit within %s (is the step reached, JETSCHED_CRASH_AT wired to the crash hook?)", spec, timeout)
		p.kill()
		return false
	case code != 3:
		t.Errorf("JETSCHED_CRASH_AT=%s: exit status %d, want 3", spec, code)
		return false
	}
	return true
}

// startFleet starts one scheduler process per name against url, one after
// the other, each with the contract's flags plus extra.
func startFleet(t *testing.T, bin, url string, names []string, extra ...string) []*schedProc {
	t.Helper()
	procs := make([]*schedProc, len(names))
	for i, n := range names {
		procs[i] = newSchedProc(t, bin, n, schedulerArgs(url, n, extra...), nil)
		procs[i].start()
	}
	return procs
}

// ---------------------------------------------------------------------------
// Logs.

// dumpLog prints the end of a log: all of a small one, the last 24 KiB of
// a big one.
func dumpLog(t *testing.T, what, path string) {
	t.Logf("---- %s: %s ----\n%s\n---- end of %s ----", what, path, faulttest.Tail(path, 0, 24<<10), what)
}

// fileLogger is a JSON logger writing to a file of the test, for the
// in-process engines; the file is dumped when the test fails.
func fileLogger(t *testing.T, name string) *slog.Logger {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			dumpLog(t, "engine "+name, path)
		}
		_ = f.Close()
	})
	return slog.New(slog.NewJSONHandler(&lockedWriter{w: f}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// ---------------------------------------------------------------------------
// NATS.

// connectURLs opens a test connection to one or more comma-separated URLs
// that reconnects forever (servers go down on purpose), closed at the end.
func connectURLs(t *testing.T, urls string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(urls,
		nats.MaxReconnects(-1),
		nats.ReconnectWait(100*time.Millisecond),
		nats.RetryOnFailedConnect(true),
		nats.Name("fault test "+t.Name()),
	)
	if err != nil {
		t.Fatalf("connect to %s: %v", urls, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// openStore opens jetsched's buckets (faulttest.OpenStore).
func openStore(t *testing.T, js jetstream.JetStream) *jsstore.Store {
	t.Helper()
	return faulttest.OpenStore(t, js)
}

// freePort finds a free TCP port on 127.0.0.1 outside Linux's ephemeral
// range (32768-60999), so that a server restarted on it does not race
// outgoing connections for it.
func freePort(t *testing.T, taken map[int]bool) int {
	t.Helper()
	for range 200 {
		p := 20000 + rand.IntN(10000)
		if taken[p] {
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		_ = ln.Close()
		taken[p] = true
		return p
	}
	t.Fatal("no free port in 20000-29999")
	return 0
}

// ---------------------------------------------------------------------------
// A JetStream cluster in this process.

// cluster is a 3-node JetStream cluster over TCP on loopback whose nodes
// can be shut down and restarted (same ports, same stores).
type cluster struct {
	t     *testing.T
	nodes []*clusterNode
}

type clusterNode struct {
	cfg natsembed.Config
	mu  sync.Mutex
	srv *natsembed.Server
}

func startCluster(t *testing.T, n int) *cluster {
	t.Helper()
	taken := map[int]bool{}
	clientPorts := make([]int, n)
	routePorts := make([]int, n)
	routes := make([]string, n)
	for i := range n {
		clientPorts[i] = freePort(t, taken)
		routePorts[i] = freePort(t, taken)
		routes[i] = fmt.Sprintf("nats://127.0.0.1:%d", routePorts[i])
	}
	c := &cluster{t: t}
	base := t.TempDir()
	for i := range n {
		c.nodes = append(c.nodes, &clusterNode{cfg: natsembed.Config{
			Name:     fmt.Sprintf("n%d", i+1),
			Port:     clientPorts[i],
			StoreDir: filepath.Join(base, fmt.Sprintf("n%d", i+1)),
			Cluster: &natsembed.ClusterConfig{
				Name: "c", Port: routePorts[i], Routes: routes,
			},
			ReadyTimeout: 20 * time.Second,
		}})
	}
	t.Cleanup(func() {
		for _, nd := range c.nodes {
			nd.shutdown()
		}
	})
	for i := range c.nodes {
		c.start(i)
	}
	// Wait for the meta leader: JetStream answers once it is elected.
	_, js := connectURLs(t, c.URLs())
	err := testwait.Until(45*time.Second, "the cluster's JetStream", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := js.AccountInfo(ctx)
		return err
	})
	if err != nil {
		t.Fatalf("cluster JetStream not ready: %v", err)
	}
	return c
}

// URLs is the comma-separated client URLs of every node.
func (c *cluster) URLs() string {
	var u []string
	for _, nd := range c.nodes {
		u = append(u, fmt.Sprintf("nats://127.0.0.1:%d", nd.cfg.Port))
	}
	return strings.Join(u, ",")
}

// index is the node of a server name ("n2" -> 1), or -1.
func (c *cluster) index(name string) int {
	for i, nd := range c.nodes {
		if nd.cfg.Name == name {
			return i
		}
	}
	return -1
}

func (c *cluster) start(i int) {
	c.t.Helper()
	nd := c.nodes[i]
	nd.mu.Lock()
	defer nd.mu.Unlock()
	srv, err := natsembed.Start(context.Background(), nd.cfg)
	if err != nil {
		c.t.Fatalf("start cluster node %s: %v", nd.cfg.Name, err)
	}
	nd.srv = srv
}

func (c *cluster) shutdown(i int) { c.nodes[i].shutdown() }

func (nd *clusterNode) shutdown() {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.srv != nil {
		nd.srv.Shutdown()
		nd.srv = nil
	}
}

// streamLeader is the server name leading a stream.
func streamLeader(js jetstream.JetStream, stream string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return "", err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return "", err
	}
	if info.Cluster == nil || info.Cluster.Leader == "" {
		return "", fmt.Errorf("stream %s has no leader", stream)
	}
	return info.Cluster.Leader, nil
}

// ---------------------------------------------------------------------------
// Schedules.

// faultSpec is every fault schedule: every second, fire_all, a 10 minute
// catch-up window. Its misfire threshold is 2s instead of the scheduler's
// 1m, so that the outages the tests cause (a killed instance's lease and
// claims expiring, a server restart, an election) make slots later than
// the threshold: without fire_all they would be recorded missed, with it
// every one must still fire (Sched-Reason: catchup).
func faultSpec(workflow string) kvstore.Spec {
	return kvstore.Spec{Workflow: workflow, Every: "1s",
		Misfire: kvstore.MisfireFireAll, CatchupWindow: "10m", MisfireThreshold: "2s"}
}

// scheduleIDs is prefix-0000 ... prefix-(n-1).
func scheduleIDs(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	return ids
}

// putSchedules writes a fault spec for every id (workflows spread over a
// few subjects), retrying each while the servers settle.
func putSchedules(t *testing.T, store *jsstore.Store, ids []string) {
	t.Helper()
	for i, id := range ids {
		spec := faultSpec(fmt.Sprintf("fault%d", i%4))
		err := testwait.Until(20*time.Second, "spec "+id+" written", func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := store.PutSpec(ctx, id, spec)
			var fe *kvstore.FieldError
			if errors.As(err, &fe) {
				t.Fatalf("put spec %s: %v", id, err)
			}
			return err
		})
		if err != nil {
			t.Fatalf("put spec %s: %v", id, err)
		}
	}
}

// ---------------------------------------------------------------------------
// The fire stream.

// fireLog reads SCHED_FIRES incrementally (faulttest.FireReader) and
// keeps, per schedule, how many messages each slot has. It is used from
// the test's goroutine only.
type fireLog struct {
	t      *testing.T
	stream *faulttest.FireReader

	slots     map[string]map[int64]int // schedule id -> slot unix ms -> messages
	msgs      int
	reasons   map[string]int // Sched-Reason -> messages ("" for plain fires)
	instances map[string]int // Sched-Instance -> messages
	bad       []string       // messages that are not well-formed fires
	// lateness is each fire's Sched-Dispatched-At minus its slot, with
	// the dispatch time, in stream order.
	lateness []fireLateness
}

// fireLateness is one fire's lateness and when it was dispatched.
type fireLateness struct {
	dispatched time.Time
	late       time.Duration
}

func newFireLog(t *testing.T, js jetstream.JetStream) *fireLog {
	return &fireLog{t: t, stream: faulttest.NewFireReader(js, "SCHED_FIRES"), slots: map[string]map[int64]int{},
		reasons: map[string]int{}, instances: map[string]int{}}
}

// sync reads every message stored up to now. On error the messages read so
// far are kept and the next sync resumes after them.
func (f *fireLog) sync() error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return f.stream.Sync(ctx, func(h nats.Header, _ *jetstream.MsgMetadata) { f.add(h) })
}

func (f *fireLog) add(h nats.Header) {
	f.msgs++
	f.reasons[h.Get(kvstore.HeaderReason)]++
	f.instances[h.Get(kvstore.HeaderInstance)]++
	slotID := h.Get(kvstore.HeaderMsgID)
	id := h.Get(kvstore.HeaderScheduleID)
	sid, slot, err := kvstore.ParseSlotID(slotID)
	if err != nil || id == "" || sid != id {
		f.bad = append(f.bad, fmt.Sprintf("msg-id %q schedule %q: %v", slotID, id, err))
		return
	}
	m := f.slots[id]
	if m == nil {
		m = map[int64]int{}
		f.slots[id] = m
	}
	m[slot.UnixMilli()]++
	if at, err := time.Parse(time.RFC3339Nano, h.Get(kvstore.HeaderDispatchedAt)); err == nil {
		f.lateness = append(f.lateness, fireLateness{dispatched: at, late: at.Sub(slot)})
	}
}

// latenessBetween is the lateness of the fires dispatched in [from, to),
// sorted.
func (f *fireLog) latenessBetween(from, to time.Time) []time.Duration {
	var out []time.Duration
	for _, l := range f.lateness {
		if !l.dispatched.Before(from) && l.dispatched.Before(to) {
			out = append(out, l.late)
		}
	}
	slices.Sort(out)
	return out
}

// syncRetry syncs, retrying for up to timeout (servers may be electing).
func (f *fireLog) syncRetry(timeout time.Duration) error {
	return testwait.Until(timeout, "SCHED_FIRES read", f.sync)
}

// last is the latest slot fired for a schedule (zero if none).
func (f *fireLog) last(id string) time.Time {
	var maxMs int64
	for ms := range f.slots[id] {
		maxMs = max(maxMs, ms)
	}
	if maxMs == 0 {
		return time.Time{}
	}
	return time.UnixMilli(maxMs)
}

// behind lists the schedules whose latest fired slot is before t.
func (f *fireLog) behind(ids []string, t time.Time) []string {
	var out []string
	for _, id := range ids {
		if f.last(id).Before(t) {
			out = append(out, id)
		}
	}
	return out
}

// waitAllReach syncs until every schedule has fired a slot at or after t,
// or timeout passes; it returns the schedules still behind. Every fault
// schedule fires its slots in order, so reaching t means every earlier
// slot has been dealt with.
func (f *fireLog) waitAllReach(ids []string, t time.Time, timeout time.Duration) []string {
	var behind []string
	_ = testwait.Until(timeout, "every schedule fired at "+t.Format(time.TimeOnly), func() error {
		if err := f.sync(); err != nil {
			return err
		}
		if behind = f.behind(ids, t); len(behind) > 0 {
			return fmt.Errorf("%d schedules behind", len(behind))
		}
		return nil
	})
	return behind
}

// faultSummary is what every fault test prints and asserts.
type faultSummary struct {
	Schedules, Expected, Fired, Duplicates, Lost int
	lostSlots, dupSlots, offGrid                 []string
}

func (s faultSummary) String() string {
	return fmt.Sprintf("schedules=%d slots expected=%d fired=%d duplicates=%d lost=%d",
		s.Schedules, s.Expected, s.Fired, s.Duplicates, s.Lost)
}

// summarize computes, per schedule: expected = every 1s slot from its first
// fired slot to tEnd (from notBefore when it never fired), fired = distinct
// slots in that range, duplicates = messages of a slot already seen (at any
// time), lost = expected slots missing.
func (f *fireLog) summarize(ids []string, tEnd, notBefore time.Time) faultSummary {
	s := faultSummary{Schedules: len(ids)}
	endMs := tEnd.UnixMilli()
	stepMs := slotStep.Milliseconds()
	for _, id := range ids {
		slots := f.slots[id]
		firstMs := int64(0)
		for ms, n := range slots {
			if n > 1 {
				s.Duplicates += n - 1
				s.dupSlots = append(s.dupSlots, fmt.Sprintf("%s x%d", kvstore.SlotID(id, time.UnixMilli(ms)), n))
			}
			if ms%stepMs != 0 {
				s.offGrid = append(s.offGrid, kvstore.SlotID(id, time.UnixMilli(ms)))
			}
			if firstMs == 0 || ms < firstMs {
				firstMs = ms
			}
		}
		if firstMs == 0 {
			// Never fired: every slot after it was written is lost.
			firstMs = (notBefore.UnixMilli()/stepMs + 1) * stepMs
		}
		for ms := firstMs; ms <= endMs; ms += stepMs {
			s.Expected++
			if slots[ms] > 0 {
				s.Fired++
			} else {
				s.Lost++
				s.lostSlots = append(s.lostSlots, kvstore.SlotID(id, time.UnixMilli(ms)))
			}
		}
	}
	sort.Strings(s.lostSlots)
	sort.Strings(s.dupSlots)
	return s
}

// report prints the summary line (test log and stdout) and asserts
// exactly once: no duplicate, no lost slot, no malformed fire.
func (f *fireLog) report(t *testing.T, name string, ids []string, tEnd, notBefore time.Time) faultSummary {
	t.Helper()
	s := f.summarize(ids, tEnd, notBefore)
	faulttest.Summarize(t, fmt.Sprintf("FAULT %s: %s", name, s))
	t.Logf("%s: %d fire messages read; by Sched-Reason %v; by Sched-Instance %v; cut-off T_end %s",
		name, f.msgs, f.reasons, f.instances, tEnd.UTC().Format(time.RFC3339))
	if s.Duplicates != 0 {
		t.Errorf("%s: %d duplicate fires, e.g. %v", name, s.Duplicates, first(s.dupSlots, 10))
	}
	if s.Lost != 0 {
		t.Errorf("%s: %d lost slots, e.g. %v", name, s.Lost, first(s.lostSlots, 10))
	}
	if len(s.offGrid) != 0 {
		t.Errorf("%s: %d slots off the 1s grid, e.g. %v", name, len(s.offGrid), first(s.offGrid, 10))
	}
	if len(f.bad) != 0 {
		t.Errorf("%s: %d malformed fire messages, e.g. %v", name, len(f.bad), first(f.bad, 5))
	}
	return s
}

func first[T any](s []T, n int) []T { return s[:min(n, len(s))] }

// settle ends a fault test's run: T_end is the chaos stop time minus one
// step, and the fire log is synced until every schedule has fired a slot
// three seconds after T_end (bounded by timeout). A schedule that stays
// behind fails the test; the summary is printed and asserted either way.
func settle(t *testing.T, f *fireLog, name string, ids []string, chaosStop, notBefore time.Time, timeout time.Duration) faultSummary {
	t.Helper()
	tEnd := chaosStop.Truncate(slotStep).Add(-slotStep)
	if behind := f.waitAllReach(ids, tEnd.Add(3*slotStep), timeout); len(behind) > 0 {
		t.Errorf("%s: not quiescent after %s: %d of %d schedules have no fire at or after %s, e.g. %v (last fired %v)",
			name, timeout, len(behind), len(ids), tEnd.Add(3*slotStep).UTC().Format(time.RFC3339),
			first(behind, 5), f.last(behind[0]).UTC().Format(time.RFC3339))
	}
	if err := f.syncRetry(20 * time.Second); err != nil {
		t.Errorf("%s: read fire stream: %v", name, err)
	}
	return f.report(t, name, ids, tEnd, notBefore)
}

// randDuration is uniform in [lo, hi).
func randDuration(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rand.Int64N(int64(hi-lo)))
}

// contains reports whether s holds v.
func contains(s []string, v string) bool { return slices.Contains(s, v) }

// waitOneShotsEnded waits until every one-shot of ids has an ended state
// record.
func waitOneShotsEnded(t *testing.T, store *jsstore.Store, ids []string, timeout time.Duration) {
	t.Helper()
	err := testwait.Until(timeout, "every one-shot's record ended", func() error {
		for _, id := range ids {
			st, _, err := store.GetState(context.Background(), id)
			if errors.Is(err, kvstore.ErrNotFound) {
				// An ended list may stand for its record (--ended-lists).
				if spec, serr := store.GetSpec(context.Background(), id); serr == nil {
					st, _ = readmodel.ListedState(context.Background(), store, store.NewEndedReader(), spec, "")
					err = nil
				}
			}
			if err != nil {
				return fmt.Errorf("%s: %w", id, err)
			}
			if !st.Ended {
				return fmt.Errorf("%s: not ended: %+v", id, st)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// oneShotSummary counts the messages of one-shots ids, all due at at, and
// prints the summary line (asserting is the caller's).
func oneShotSummary(t *testing.T, name string, f *fireLog, ids []string, at time.Time) faultSummary {
	t.Helper()
	s := faultSummary{Schedules: len(ids), Expected: len(ids)}
	for _, id := range ids {
		msgs := f.slots[id][at.UnixMilli()]
		switch {
		case msgs == 0:
			s.Lost++
			s.lostSlots = append(s.lostSlots, id)
		case msgs > 1:
			s.Duplicates += msgs - 1
			s.dupSlots = append(s.dupSlots, id)
		}
		if msgs > 0 {
			s.Fired++
		}
	}
	faulttest.Summarize(t, fmt.Sprintf("FAULT %s: %s", name, s))
	return s
}

// putOneShots writes n one-shots <prefix>-NNN, all due at at.
func putOneShots(t *testing.T, store *jsstore.Store, prefix string, n int, at time.Time) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%03d", prefix, i)
		if _, err := store.PutSpec(context.Background(), ids[i], kvstore.Spec{Workflow: "fault", At: &at}); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}
