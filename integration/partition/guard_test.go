package partition

import (
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// guardSlack covers a claim a worker began just before the guard closed:
// its publish, and nats.go's retries of it (no responders on a cut-off
// server: two more attempts 250ms apart).
const guardSlack = time.Second

// guardWatch records, on a node's own server, when the scheduler there
// publishes claims ($KV.sched_state.<id>: the CAS that claims a slot; the
// record names its owner, and says when the claim was made by the
// scheduler's clock) and fires (sched.fire.>, with Sched-Instance).
// Cut off from the cluster, that server still delivers what the
// scheduler publishes, whether or not JetStream can store it, so the watch
// sees every attempt.
type guardWatch struct {
	nc       *nats.Conn
	instance string
	// limit is the latest a claim may come after the cut: the lease
	// guard (90% of the TTL) plus guardSlack.
	limit time.Duration

	mu            sync.Mutex
	claims, fires []time.Time
	// decided is each claim's own time (its At): when the scheduler made
	// it, by its clock.
	decided []time.Time
}

func watchGuard(c *cluster, i int) (*guardWatch, error) {
	nc, _, err := c.connect(i)
	if err != nil {
		return nil, err
	}
	g := &guardWatch{nc: nc, instance: c.nodes[i].instance, limit: c.leaseTTL*9/10 + guardSlack}
	record := func(into *[]time.Time, mine func(*nats.Msg) bool) nats.MsgHandler {
		return func(m *nats.Msg) {
			now := time.Now()
			if !mine(m) {
				return
			}
			g.mu.Lock()
			*into = append(*into, now)
			g.mu.Unlock()
		}
	}
	claim := func(m *nats.Msg) bool {
		st, err := kvstore.DecodeState(m.Data)
		if err != nil || st.Claim == nil || st.Claim.Owner != g.instance {
			return false
		}
		g.mu.Lock()
		g.decided = append(g.decided, st.Claim.At)
		g.mu.Unlock()
		return true
	}
	fired := func(m *nats.Msg) bool { return m.Header.Get(kvstore.HeaderInstance) == g.instance }
	if _, err := nc.Subscribe("$KV.sched_state.>", record(&g.claims, claim)); err != nil {
		nc.Close()
		return nil, err
	}
	if _, err := nc.Subscribe("sched.fire.>", record(&g.fires, fired)); err != nil {
		nc.Close()
		return nil, err
	}
	if err := nc.Flush(); err != nil {
		nc.Close()
		return nil, err
	}
	return g, nil
}

// waitDispatching waits until the watch has seen a claim of its
// scheduler at least span ago and one since: the scheduler dispatches,
// and the watch covers the span before a cut.
func (g *guardWatch) waitDispatching(span, timeout time.Duration) error {
	since := time.Now()
	return testwait.Until(timeout+span, "scheduler "+g.instance+" dispatching", func() error {
		g.mu.Lock()
		defer g.mu.Unlock()
		if time.Since(since) < span || len(g.claims) == 0 || time.Since(g.claims[len(g.claims)-1]) > span {
			return fmt.Errorf("scheduler %s: %d claims seen since %s", g.instance, len(g.claims), since.Format(time.RFC3339Nano))
		}
		return nil
	})
}

func (g *guardWatch) close() { g.nc.Close() }

// guardResult is what the cut-off scheduler did after the cut.
type guardResult struct {
	Shards int // leases it held at the cut
	// LastClaim and LastFire are the last attempts after the cut, as an
	// offset from it (negative: none after the cut); LastDecided is the
	// latest claim time (its At) of a claim seen after the cut.
	LastClaim, LastFire, LastDecided time.Duration
	// Before counts claims in the 2s before the cut: the scheduler was
	// dispatching. Late counts claims made (by the scheduler's clock) later
	// than Limit after the cut: the guard is on its own clock. A claim made
	// in time may still arrive later, held up on the way (a frozen
	// process's write, sent after it thawed); that is no breach.
	Before, Late int
	Limit        time.Duration
}

// result looks at the attempts between cut and heal.
func (g *guardWatch) result(cut, heal time.Time, shards int) guardResult {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := guardResult{Shards: shards, LastClaim: -1, LastFire: -1, LastDecided: -1, Limit: g.limit}
	for i, at := range g.claims {
		if at.After(cut.Add(-2*time.Second)) && !at.After(cut) {
			r.Before++
		}
		if at.After(cut) && at.Before(heal) {
			r.LastClaim = max(r.LastClaim, at.Sub(cut))
			made := g.decided[i].Sub(cut)
			r.LastDecided = max(r.LastDecided, made)
			if made > g.limit {
				r.Late++
			}
		}
	}
	for _, at := range g.fires {
		if at.After(cut) && at.Before(heal) {
			r.LastFire = max(r.LastFire, at.Sub(cut))
		}
	}
	return r
}

func (r guardResult) String() string {
	last := func(d time.Duration) string {
		if d < 0 {
			return "none"
		}
		return strconvDur(d)
	}
	return fmt.Sprintf("guard: shards=%d claims_2s_before=%d last_claim=%s made_at=%s last_fire=%s (limit %s)",
		r.Shards, r.Before, last(r.LastClaim), last(r.LastDecided), last(r.LastFire), strconvDur(r.Limit))
}
