package fires_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/testlog"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestNoClaimPastTheLeaseGuard: a job that reaches its claim after its
// shard's lease is gone writes nothing. The loop checks the lease when it
// dispatches a job; a job can then wait (queued behind workers stuck on a
// lost server, a starved process) until well past the guard. The
// partition tests saw an isolated owner's claims 13 s after the cut
// against a guard of 1.8 s (issue 28). Here the worker is held at
// StepBeforeClaim while another instance takes the lease; released, it
// must stop at the guard instead of claiming and firing.
func TestNoClaimPastTheLeaseGuard(t *testing.T) {
	t.Parallel()
	h := setup(t)
	c, fake := clock.NewFake(time.Now().Truncate(time.Second))
	reached, proceed := make(chan struct{}), make(chan struct{})
	guarded := make(chan struct{}, 1)
	var once sync.Once
	hook := func(s fires.Step) {
		switch s {
		case fires.StepBeforeClaim:
			once.Do(func() { close(reached); <-proceed })
		case fires.StepGuardClosed:
			select {
			case guarded <- struct{}{}:
			default:
			}
		}
	}
	const ttl = 30 * time.Second
	e := h.engine(fires.Config{Instance: "a", LeaseTTL: ttl, Clock: c, StepHook: hook})
	var release sync.Once
	t.Cleanup(func() { release.Do(func() { close(proceed) }) }) // (before the engine's Stop, which waits for the held worker)
	testwait.Eventually(t, 10*time.Second, "a holding the 64 shards", func() bool { return e.LeasesHeld() == 64 })
	h.put("g", kvstore.Spec{Workflow: "wf", Every: "1s"})
	// The schedule's first slot comes due on the fake clock.
	testwait.Eventually(t, 10*time.Second, "the worker at its first claim", func() bool {
		fake.Advance(time.Second)
		select {
		case <-reached:
			return true
		default:
			return false
		}
	})

	// What a claimed and fired before (its first slots may have gone
	// through windows while the shards' checks kept workers busy).
	before, _, err := h.store.GetState(context.Background(), "g")
	if err != nil && !errors.Is(err, kvstore.ErrNotFound) {
		t.Fatal(err)
	}
	h.allFires()
	fired := len(h.of("g"))

	// Another instance takes the shard's lease meanwhile; a's next renewal
	// round finds it gone.
	key := "shard." + strconv.Itoa(kvstore.ShardOf("g", 64))
	// (Renewed now: a record renewed days from the server's time of its
	// write is not believed, and a would take it back.)
	taken := `{"owner":"b","renewed":"` + time.Now().UTC().Format(time.RFC3339Nano) + `","ttl":"30s"}`
	if _, err := h.store.Leases().Put(context.Background(), key, []byte(taken)); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 10*time.Second, "a losing the lease at its renewal", func() bool {
		fake.Advance(ttl / 3)
		return e.LeasesHeld() == 63
	})
	release.Do(func() { close(proceed) })
	testwait.Done(t, 10*time.Second, "the job stopping at the lease guard", guarded)
	st, _, err := h.store.GetState(context.Background(), "g")
	switch {
	case errors.Is(err, kvstore.ErrNotFound):
	case err != nil:
		t.Fatal(err)
	case st.Claim != nil && st.Claim.Owner == "a" && (before.Claim == nil || st.Claim.Token != before.Claim.Token):
		t.Fatalf("a claimed %s after losing the shard's lease", st.Claim.Slot)
	}
	h.allFires()
	if f := h.of("g"); len(f) != fired {
		t.Fatalf("a fired %d slots after losing the shard's lease", len(f)-fired)
	}
}

// TestStarvedLoneSchedulerSaysItsLeasesExpired: issue 51's scheduler,
// alone in its fleet and starved past its lease TTL (here its clock, a
// fake, does not move while the server expires its 64 keys), comes back
// to find every lease gone. It said `lease lost ... why="taken over"`
// for each, with no other instance anywhere; each is lost as expired, and
// the guard that stopped its dispatching says it had closed.
func TestStarvedLoneSchedulerSaysItsLeasesExpired(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	c, fake := clock.NewFake(time.Now().Truncate(time.Second))
	var logs testlog.Buffer
	lost := make(chan *nats.Msg, 256)
	closed := make(chan *nats.Msg, 256)
	for subject, ch := range map[string]chan *nats.Msg{"sched.event.lease_lost.>": lost, "sched.event.guard_closed.>": closed} {
		sub, err := h.js.Conn().ChanSubscribe(subject, ch)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sub.Unsubscribe() })
	}
	expiries, err := h.store.Leases().WatchFiltered(ctx, []string{"shard.*"}, jetstream.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = expiries.Stop() }()
	// The shortest TTL a key may have: the expiry is the server's, in
	// real time.
	const ttl = time.Second
	e := h.engine(fires.Config{Instance: "a", LeaseTTL: ttl, Clock: c, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	testwait.Eventually(t, 10*time.Second, "a holding the 64 shards", func() bool { return e.LeasesHeld() == 64 })

	gone := map[string]bool{}
	testwait.Eventually(t, 20*time.Second, "the 64 lease keys expired on the server", func() bool {
		for {
			select {
			case kv := <-expiries.Updates():
				if kv != nil && kv.Operation() != jetstream.KeyValuePut {
					gone[kv.Key()] = true
				}
				continue
			default:
			}
			return len(gone) == 64
		}
	})
	// The process runs again: its clock jumps past the TTL, its renewal
	// round finds the keys gone. (Each further third of the TTL lets a
	// round run that had not armed its timer before the jump.)
	fake.Advance(ttl * 13 / 10)
	reasons := map[int]string{}
	testwait.Eventually(t, 20*time.Second, "a lease_lost event for each of the 64 shards", func() bool {
		for {
			select {
			case m := <-lost:
				var ev kvstore.Event
				if err := json.Unmarshal(m.Data, &ev); err != nil || ev.Shard == nil {
					t.Fatalf("lease_lost %s: %v", m.Data, err)
				}
				if ev.Reason != "expired" || ev.Holder != "" {
					t.Fatalf("lease_lost %s: want reason expired, no holder", m.Data)
				}
				reasons[*ev.Shard] = ev.Reason
				continue
			default:
			}
			if len(reasons) < 64 {
				fake.Advance(ttl / 3)
			}
			return len(reasons) == 64
		}
	})
	if len(closed) == 0 {
		t.Error("no guard_closed event before the leases were lost")
	}
	if out := logs.String(); strings.Contains(out, "taken over") || !strings.Contains(out, "why=expired") {
		t.Errorf("the log says:\n%s\nwant why=expired, never taken over", out)
	}
}
