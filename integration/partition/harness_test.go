package partition

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// size is how big and how long a run is.
type size struct {
	name string
	// every, crons and shots: "every 1s" schedules, cron schedules, and
	// one-shots per nemesis.
	every, crons, shots int
	// fault is how long each nemesis lasts; recovery how long the run
	// goes on after the heal before the window closes.
	fault, recovery time.Duration
	// settle bounds the wait for every slot of a window to have fired.
	settle time.Duration
}

var (
	// smallSize is CI's: every nemesis, a few minutes in all.
	smallSize = size{name: "small", every: 20, crons: 4, shots: 4,
		fault: 12 * time.Second, recovery: 5 * time.Second, settle: 60 * time.Second}
	// fullSize is the issue's: 100 schedules every second, 20 cron, 20
	// one-shots per nemesis, 30s faults.
	fullSize = size{name: "full", every: 100, crons: 20, shots: 20,
		fault: 30 * time.Second, recovery: 20 * time.Second, settle: 120 * time.Second}
)

// sizeFromEnv reads JETSCHED_PARTITION: "" or "small", or "full".
func sizeFromEnv(t *testing.T) size {
	switch v := os.Getenv("JETSCHED_PARTITION"); v {
	case "", "small":
		return smallSize
	case "full":
		return fullSize
	default:
		t.Fatalf("JETSCHED_PARTITION=%q: want small (the default) or full", v)
		return size{}
	}
}

// harness runs the nemeses against one cluster and fleet, and checks the
// fire stream after each.
type harness struct {
	t    *testing.T
	c    *cluster
	size size

	checker int // the node the checker is connected to
	nc      *nats.Conn
	js      jetstream.JetStream
	store   *jsstore.Store
	reader  *fireReader

	scheds  []schedule // every schedule registered, in order
	windows []window
}

func newHarness(t *testing.T, c *cluster, sz size) *harness {
	h := &harness{t: t, c: c, size: sz, checker: -1, reader: newFireReader()}
	t.Cleanup(func() {
		if h.nc != nil {
			h.nc.Close()
		}
	})
	if err := h.useChecker(0); err != nil {
		t.Fatal(err)
	}
	return h
}

// useChecker moves the checker's connection to node i.
func (h *harness) useChecker(i int) error {
	if h.checker == i && h.nc != nil {
		return nil
	}
	nc, js, err := h.c.connect(i)
	if err != nil {
		return err
	}
	var store *jsstore.Store
	err = testwait.Until(30*time.Second, "the jetsched buckets", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		store, err = jsstore.Open(ctx, js, kvstore.Layout{})
		return err
	})
	if err != nil {
		nc.Close()
		return fmt.Errorf("open the buckets via %s: %w", h.c.nodes[i].cfg.name, err)
	}
	if h.nc != nil {
		h.nc.Close()
	}
	h.checker, h.nc, h.js, h.store = i, nc, js, store
	h.reader.use(js)
	return nil
}

// register writes the specs, retrying each while the cluster settles.
func (h *harness) register(scheds []schedule) {
	h.t.Helper()
	for i, s := range scheds {
		spec := s.spec(fmt.Sprintf("part%d", i%4))
		err := testwait.Until(30*time.Second, "spec "+s.id+" written", func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := h.store.PutSpec(ctx, s.id, spec)
			var fe *kvstore.FieldError
			if errors.As(err, &fe) {
				h.t.Fatalf("spec %s: %v", s.id, err)
			}
			return err
		})
		if err != nil {
			h.t.Fatalf("put spec %s: %v", s.id, err)
		}
		h.scheds = append(h.scheds, s)
	}
}

// leaseOwners is the shard leases held by each scheduler instance.
func (h *harness) leaseOwners() map[string]int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return shardOwners(h.store.LeaseOwners(ctx))
}

// waitSteady waits until the cluster is healthy again, every scheduler
// runs and holds shards, and the checker can read the fire stream.
func (h *harness) waitSteady(timeout time.Duration) error {
	if err := h.c.waitHealthy(timeout); err != nil {
		return err
	}
	for _, n := range h.c.nodes {
		if !n.server.Running() || !n.sched.Running() {
			return fmt.Errorf("node %s: server %s, scheduler %s", n.cfg.name, n.server.ExitStatus(), n.sched.ExitStatus())
		}
	}
	if err := h.useChecker(h.checker); err != nil {
		return err
	}
	err := testwait.Until(timeout, "a shard lease for every scheduler", func() error {
		owners := h.leaseOwners()
		for _, n := range h.c.nodes {
			if owners[n.instance] == 0 {
				return fmt.Errorf("scheduler %s holds no shard yet (leases: %v)", n.instance, owners)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return h.reader.syncRetry(timeout)
}

// lastSeq is SCHED_FIRES' last sequence as the checker's node sees it,
// asked until deadline.
func (h *harness) lastSeq(deadline time.Time) (uint64, error) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	s, err := h.js.Stream(ctx, "SCHED_FIRES")
	if err != nil {
		return 0, fmt.Errorf("SCHED_FIRES via %s: %w", h.c.nodes[h.checker].cfg.name, err)
	}
	return s.CachedInfo().State.LastSeq, nil
}

// sleepUntil lets a fault or a recovery run its course: the nemeses model
// real time (elections, lease TTLs), so the harness waits for it.
func sleepUntil(at time.Time) { time.Sleep(time.Until(at)) }

// writeFires writes every fire read as CSV (schedule, slot, stored,
// lateness in seconds, instance, reason) and the windows as comments.
func (h *harness) writeFires(path string) error {
	var b strings.Builder
	for _, w := range h.windows {
		fmt.Fprintf(&b, "# window %s start %s heal %s end %s\n", w.name,
			w.start.UTC().Format(time.RFC3339Nano), w.heal.UTC().Format(time.RFC3339Nano), w.end.UTC().Format(time.RFC3339Nano))
	}
	b.WriteString("schedule,slot,stored,lateness_s,instance,reason\n")
	keys := slices.SortedFunc(maps.Keys(h.reader.fires), func(a, b slotKey) int {
		return cmp.Or(cmp.Compare(a.ms, b.ms), strings.Compare(a.id, b.id))
	})
	for _, k := range keys {
		for _, r := range h.reader.fires[k] {
			slot := time.UnixMilli(k.ms)
			fmt.Fprintf(&b, "%s,%s,%s,%.3f,%s,%s\n", k.id, slot.UTC().Format(time.RFC3339Nano),
				r.stored.UTC().Format(time.RFC3339Nano), r.stored.Sub(slot).Seconds(), r.instance, r.reason)
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
