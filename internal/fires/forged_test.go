package fires_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/testwait"
)

// Forged records in sched_leases (issue 52): lease and member records are
// judged by the server's clock, never by the "renewed" their writer chose.

// ignoredEvent is the part of a lease_ignored event these tests read.
type ignoredEvent struct {
	Key    string `json:"key"`
	Reason string `json:"reason"`
	Owner  string `json:"owner"`
}

// watchIgnored subscribes to lease_ignored events before an engine starts.
func (h *harness) watchIgnored() *nats.Subscription {
	h.t.Helper()
	sub, err := h.js.Conn().SubscribeSync("sched.event.lease_ignored.>")
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = sub.Unsubscribe() })
	return sub
}

// waitIgnored waits for a lease_ignored event about key with one of the
// reasons.
func (h *harness) waitIgnored(sub *nats.Subscription, key string, reasons ...string) ignoredEvent {
	h.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var seen []ignoredEvent
	for time.Now().Before(deadline) {
		m, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			break
		}
		var ev ignoredEvent
		if err := json.Unmarshal(m.Data, &ev); err != nil {
			h.t.Fatalf("lease_ignored event %s: %v", m.Data, err)
		}
		if ev.Key == key && slices.Contains(reasons, ev.Reason) {
			return ev
		}
		seen = append(seen, ev)
	}
	h.t.Fatalf("no lease_ignored event about %s with reason in %q; saw %+v", key, reasons, seen)
	return ignoredEvent{}
}

// forge writes key in sched_leases with a plain put: no per-key TTL, as
// `nats kv put` writes it.
func (h *harness) forge(key string, value any) {
	h.t.Helper()
	b, err := json.Marshal(value)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.store.Leases().Put(context.Background(), key, b); err != nil {
		h.t.Fatal(err)
	}
}

// takesEveryShardDespite forges key, starts a scheduler beside it and
// waits for it to hold all 64 shards and report key ignored for reason.
func (h *harness) takesEveryShardDespite(key string, value any, reason string) {
	h.t.Helper()
	events := h.watchIgnored()
	h.forge(key, value)
	e := h.engine(fires.Config{Instance: "a", LeaseTTL: 2 * time.Second})
	testwait.Eventually(h.t, 15*time.Second, "a holding all 64 shards beside "+key, func() bool { return e.LeasesHeld() == 64 })
	h.waitIgnored(events, key, reason)
}

// TestForgedFarFutureMemberDoesNotHalveTheFleet: a member record renewed
// in year 9999, with no TTL, made a real scheduler count two members for
// ever and take 32 of the 64 shards, leaving the rest unowned, silently.
// It is implausible (its renewed time is nowhere near the server's time
// of its write): ignored, with a warning event.
func TestForgedFarFutureMemberDoesNotHalveTheFleet(t *testing.T) {
	t.Parallel()
	setup(t).takesEveryShardDespite("member.ghost",
		map[string]any{"owner": "ghost", "renewed": "9999-01-01T00:00:00Z", "ttl": "10s"}, "implausible renewed time")
}

// TestStaleMemberIsJudgedByServerAge: a member record written once, with
// no TTL and a plausible renewed time a few minutes ahead, counted as a
// member for ever. It counts while the server's clock says it could be
// alive, and no longer once it was not rewritten within its TTL.
func TestStaleMemberIsJudgedByServerAge(t *testing.T) {
	t.Parallel()
	setup(t).takesEveryShardDespite("member.old",
		map[string]any{"owner": "old", "renewed": time.Now().Add(9 * time.Minute).UTC(), "ttl": "2s"}, "stale")
}

// TestForgedLeaseIsTakenOverByServerAge: a shard lease of an instance that
// is no member, with no TTL and a renewed time minutes ahead, was held for
// ever: Create never succeeded over it. It is taken over, by CAS over its
// revision, once the server's clock says it was not rewritten within the
// TTL, and not before.
func TestForgedLeaseIsTakenOverByServerAge(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	events := h.watchIgnored()
	const ttl = 2 * time.Second
	h.forge("shard.5", map[string]any{"owner": "ghost", "renewed": time.Now().Add(9 * time.Minute).UTC(), "ttl": ttl.String()})
	forged, err := h.store.Leases().Get(ctx, "shard.5")
	if err != nil {
		t.Fatal(err)
	}
	e := h.engine(fires.Config{Instance: "a", LeaseTTL: ttl})
	testwait.Eventually(t, 15*time.Second, "a holding all 64 shards, shard 5 taken over", func() bool { return e.LeasesHeld() == 64 })
	h.waitIgnored(events, "shard.5", "stale", "holder not a member")
	now, err := h.store.Leases().Get(ctx, "shard.5")
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Owner string }
	if err := json.Unmarshal(now.Value(), &v); err != nil || v.Owner != "a" {
		t.Fatalf("shard.5 = %s (%v), want a's lease", now.Value(), err)
	}
	if waited := now.Created().Sub(forged.Created()); waited < ttl {
		t.Errorf("shard.5 taken over %s after the forged write by the server's clock, before the TTL %s", waited, ttl)
	}
}

// TestUnparsableLeaseKeyBlocksNoShard: shard.07 read as shard 7's lease
// kept shard 7 from being taken for ever (its lease is shard.7, which
// nobody held). A key that is not a shard lease as the schedulers write
// it is ignored, with a warning event.
func TestUnparsableLeaseKeyBlocksNoShard(t *testing.T) {
	t.Parallel()
	setup(t).takesEveryShardDespite("shard.07",
		map[string]any{"owner": "ghost", "renewed": time.Now().UTC(), "ttl": "10s"}, "unknown key")
}
