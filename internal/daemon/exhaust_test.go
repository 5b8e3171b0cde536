package daemon_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/jetsched/jetsched/internal/daemon/daemontest"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/faulttest"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/testlog"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// rig is a scheduler (the daemon, in process, with its metrics served)
// connected to a real nats-server, with the observer events it publishes
// and its log recorded: what an operator sees of a fault.
type rig struct {
	t    *testing.T
	d    *daemon.Daemon
	nc   *nats.Conn
	js   jetstream.JetStream
	logs *testlog.Buffer

	mu     sync.Mutex
	events []kvstore.Event
	seen   chan struct{}
}

// claimTTL is short, so that a refused fire is taken over soon after its
// claim's publishing gives up.
const claimTTL = 2 * time.Second

// startRig starts a scheduler against the server at url, with conn's
// credentials, and records what it tells.
func startRig(t *testing.T, url string, conn natsconn.Options) *rig {
	t.Helper()
	r := &rig{t: t, logs: &testlog.Buffer{}, seen: make(chan struct{}, 1)}
	conn.URL = url
	d, err := daemon.Start(context.Background(), daemon.Config{
		Conn: conn, MetricsListen: "127.0.0.1:0",
		Fire:   fires.Config{ClaimTTL: claimTTL},
		Logger: slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatalf("start the scheduler: %v", err)
	}
	daemontest.Cleanup(t, d)
	r.d, r.js = d, d.JetStream()
	r.nc = r.js.Conn()
	sub, err := r.nc.Subscribe("sched.event.>", func(m *nats.Msg) {
		var ev kvstore.Event
		if json.Unmarshal(m.Data, &ev) != nil {
			return
		}
		r.mu.Lock()
		r.events = append(r.events, ev)
		r.mu.Unlock()
		select {
		case r.seen <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	testwait.Done(t, 20*time.Second, "the scheduler's index", d.Engine().Ready())
	return r
}

// put writes a spec.
func (r *rig) put(id string, spec kvstore.Spec) {
	r.t.Helper()
	if _, err := r.d.Store().PutSpec(context.Background(), id, spec); err != nil {
		r.t.Fatal(err)
	}
}

// eventsOf are the events of kind seen so far.
func (r *rig) eventsOf(kind kvstore.EventKind) []kvstore.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []kvstore.Event
	for _, ev := range r.events {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// waitEvent waits for the first event of kind.
func (r *rig) waitEvent(kind kvstore.EventKind, timeout time.Duration) kvstore.Event {
	r.t.Helper()
	var ev kvstore.Event
	testwait.Eventually(r.t, timeout, "a "+string(kind)+" event", func() bool {
		if evs := r.eventsOf(kind); len(evs) > 0 {
			ev = evs[0]
			return true
		}
		return false
	})
	return ev
}

// metric is the value of the series of name whose labels include every
// k="v" of labels, scraped from /metrics now (-1: no such series).
func (r *rig) metric(name string, labels ...string) float64 {
	r.t.Helper()
	resp, err := http.Get("http://" + r.d.MetricsAddr() + "/metrics")
	if err != nil {
		r.t.Fatalf("scrape: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
next:
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(line, l) {
				continue next
			}
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			r.t.Fatalf("metric line %q: %v", line, err)
		}
		return v
	}
	return -1
}

// warns counts the warnings logged with msg.
func (r *rig) warns(msg string) int {
	n := 0
	for line := range strings.SplitSeq(r.logs.String(), "\n") {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, msg) {
			n++
		}
	}
	return n
}

// slots reads every fire of schedule id in SCHED_FIRES and counts them,
// the slots fired more than once and the slots missing between the first
// and the last (every apart).
func (r *rig) slots(id string, every time.Duration) (fired, duplicates, lost int, last time.Time) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cons, err := r.js.OrderedConsumer(ctx, "SCHED_FIRES", jetstream.OrderedConsumerConfig{FilterSubjects: []string{"sched.fire.*." + id}})
	if err != nil {
		r.t.Fatal(err)
	}
	seen := map[time.Time]int{}
	var first time.Time
	for {
		msg, err := cons.Next(jetstream.FetchMaxWait(time.Second))
		if err != nil {
			break
		}
		meta, err := kvstore.ParseFireMeta(msg.Headers())
		if err != nil {
			r.t.Fatalf("fire without valid headers: %v", err)
		}
		at := meta.ScheduledAt.UTC()
		seen[at]++
		if first.IsZero() || at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
		if md, _ := msg.Metadata(); md != nil && md.NumPending == 0 {
			break
		}
	}
	for _, n := range seen {
		fired += n
		duplicates += n - 1
	}
	if !first.IsZero() {
		lost = int(last.Sub(first)/every) + 1 - len(seen)
	}
	return fired, duplicates, lost, last
}

// setStream changes a stream's config with edit.
func setStream(t *testing.T, js jetstream.JetStream, name string, edit func(*jetstream.StreamConfig)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	edit(&cfg)
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatalf("update stream %s: %v", name, err)
	}
}

// streamMsgs is how many messages a stream holds.
func streamMsgs(t *testing.T, js jetstream.JetStream, name string) uint64 {
	t.Helper()
	s, err := js.Stream(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return s.CachedInfo().State.Msgs
}

// recovered waits, once room was made at freed, for schedule id (every
// second) to fire past it and for the blocked gauge of kind to fall back
// to 0; it prints the FAULT line of fault name (with extra) and checks the
// episode's outcome: no slot fired twice or lost, one event of kind and
// one warning, no slot failed.
func (r *rig) recovered(name, id string, kind kvstore.EventKind, freed time.Time, extra string) {
	t := r.t
	t.Helper()
	testwait.Eventually(t, 30*time.Second, "the slots held back fired", func() bool {
		_, _, _, last := r.slots(id, time.Second)
		return last.After(freed.Add(time.Second))
	})
	// An episode ends at an acknowledgement once the failures have been
	// quiet for a lease TTL (pipeline.Episodes.Quiet).
	testwait.Eventually(t, 30*time.Second, "jetsched_publish_blocked back at 0", func() bool {
		return r.metric("jetsched_publish_blocked", `reason="`+string(kind)+`"`) == 0
	})
	fired, dup, lost, _ := r.slots(id, time.Second)
	events, warns := len(r.eventsOf(kind)), r.warns(episodeWarning)
	faulttest.Summarize(t, fmt.Sprintf("FAULT exhaust-%s: fired=%d duplicates=%d lost=%d events=%d warns=%d %s",
		name, fired, dup, lost, events, warns, extra))
	if dup != 0 || lost != 0 {
		t.Errorf("%d duplicates, %d lost slots among %d fires", dup, lost, fired)
	}
	if events != 1 || warns != 1 {
		t.Errorf("%d %s events and %d warnings for one episode; want one each\n%s", events, kind, warns, r.logs.String())
	}
	if n := len(r.eventsOf(kvstore.EventFailed)); n != 0 {
		t.Errorf("%d failed events: running out of room must not fail slots", n)
	}
	if got := r.metric("jetsched_events_total", `source="schedules"`, `kind="`+string(kind)+`"`); got != 1 {
		t.Errorf("jetsched_events_total{kind=%s} = %v, want 1", kind, got)
	}
}
