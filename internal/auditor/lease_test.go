package auditor_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/auditor"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestForgedAuditLeaseIsTakenOver: an "audit" record written by hand with
// no TTL was held for ever, and no scheduler wrote digests or external
// entries again, silently. Judged by the server's clock (issue 52), a
// record renewed implausibly far from the server's time of its write is
// taken over at once, and one not rewritten within its TTL once the
// server's clock says so: setupOn waits for the auditor to hold the lease.
func TestForgedAuditLeaseIsTakenOver(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		renewed time.Time
		why     string
	}{
		{"renewed in 9999", time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), "implausible renewed time"},
		{"not rewritten within its TTL, renewed ahead", time.Now().Add(9 * time.Minute), "stale"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := natstest.Start(t)
			nc, js := natstest.Dial(t, srv.URL())
			events, err := nc.SubscribeSync("sched.event.lease_ignored.audit")
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := jsstore.Setup(ctx, js, jsstore.SetupConfig{}); err != nil {
				t.Fatal(err)
			}
			store, err := jsstore.Open(ctx, js, kvstore.Layout{})
			if err != nil {
				t.Fatal(err)
			}
			forged, _ := json.Marshal(map[string]any{"owner": "ghost", "renewed": tc.renewed.UTC(), "ttl": "3s"})
			if _, err := store.Leases().Put(ctx, auditor.LeaseKey, forged); err != nil {
				t.Fatal(err)
			}
			b := setupOn(t, srv.URL(), 0)
			e, err := b.store.Leases().Get(ctx, auditor.LeaseKey)
			if err != nil {
				t.Fatal(err)
			}
			var v struct{ Owner string }
			if err := json.Unmarshal(e.Value(), &v); err != nil || v.Owner != "t1" {
				t.Fatalf("audit = %s (%v), want t1's lease", e.Value(), err)
			}
			m, err := events.NextMsg(waitTimeout)
			if err != nil {
				t.Fatalf("no lease_ignored event about the audit key: %v", err)
			}
			var ev kvstore.Event
			if err := json.Unmarshal(m.Data, &ev); err != nil || ev.Key != auditor.LeaseKey || ev.Reason != tc.why || ev.Holder != "ghost" {
				t.Errorf("lease_ignored event %s (%v): want key audit, reason %q, holder ghost", m.Data, err, tc.why)
			}
		})
	}
}
