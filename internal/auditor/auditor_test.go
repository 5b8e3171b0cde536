package auditor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/auditlog"
	"github.com/jetsched/jetsched/internal/auditor"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var key = []byte("0123456789abcdef-auditor-test")

// waitTimeout bounds every wait for a positive signal.
const waitTimeout = 15 * time.Second

type counter struct{ n atomic.Int32 }

func (c *counter) AuditRollback() { c.n.Add(1) }

func (c *counter) AuditAppendFailure() {}

// bundle is a store, a trail and a running auditor on a fresh server.
type bundle struct {
	nc    *nats.Conn
	js    jetstream.JetStream
	store *jsstore.Store
	log   *auditlog.Log
	a     *auditor.Auditor
	seen  *counter
}

// setup starts an auditor that holds the lease at once; rounds run when
// the test calls Round, head checks every 50ms.
func setup(t testing.TB, dupWindow time.Duration) *bundle {
	t.Helper()
	srv := natstest.Start(t)
	return setupOn(t, srv.URL(), dupWindow)
}

// setupOn is setup on the server at url.
func setupOn(t testing.TB, url string, dupWindow time.Duration) *bundle {
	t.Helper()
	nc, js := natstest.Dial(t, url)
	ctx := context.Background()
	if err := jsstore.Setup(ctx, js, jsstore.SetupConfig{DuplicateWindow: dupWindow}); err != nil {
		t.Fatal(err)
	}
	store, err := jsstore.Open(ctx, js, kvstore.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	if err := auditlog.Setup(ctx, js, audit.Trail{}, 1); err != nil {
		t.Fatal(err)
	}
	b := &bundle{nc: nc, js: js, store: store, log: auditlog.New(js, key, "scheduler:t1"), seen: &counter{}}
	// Grace: an API write's trail entry is appended after the write (three
	// round trips); under a loaded CI run with -race, 100 ms let the entry
	// come after its change was judged external (TestExternalChanges
	// failed now and then with more than its three changes).
	b.a, err = auditor.New(auditor.Config{Store: store, Log: b.log, Key: key, Instance: "t1", Round: time.Hour,
		Settle: time.Millisecond, Grace: time.Second, Monitor: 50 * time.Millisecond, LeaseTTL: 3 * time.Second, Observer: b.seen})
	if err != nil {
		t.Fatal(err)
	}
	store.SetAuditor(b.log.WithRollback(b.a.Report))
	if err := b.a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.a.Stop(context.Background()) })
	testwait.Eventually(t, waitTimeout, "the audit lease", func() bool { return b.a.Round(ctx) == nil })
	return b
}

// fire publishes a fire message as a scheduler does, and its ledger tick.
func (b *bundle) fire(t *testing.T, slot, body string) uint64 {
	t.Helper()
	ctx := context.Background()
	ack, err := b.js.Publish(ctx, "sched.fire.wf", []byte(body), jetstream.WithMsgID(slot))
	if err != nil {
		t.Fatal(err)
	}
	tick := kvstore.Tick{Schedule: "s", SlotID: slot, Workflow: "wf", Status: kvstore.TickDispatched, Stream: ack.Stream, Seq: ack.Sequence, At: time.Now().UTC()}
	if err := b.store.PutTick(ctx, tick); err != nil {
		t.Fatal(err)
	}
	return ack.Sequence
}

func (b *bundle) verify(t *testing.T) audit.Report {
	t.Helper()
	r, err := audit.Verify(context.Background(), b.js, key, audit.VerifyOptions{From: 1, Dispatches: true})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestDispatchDigests: the digests vouch for every fire message; a message
// deleted, one altered (purged and published again under its slot id) and
// one injected (no scheduler's ledger entry) are each named by Verify with
// its sequence and what differs.
func TestDispatchDigests(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Second)
	ctx := context.Background()
	var last uint64
	for i := 1; i <= 70; i++ {
		last = b.fire(t, fmt.Sprintf("s.%d", i), fmt.Sprintf(`{"i":%d}`, i))
	}
	// A round digests the fires older than its settle time (1ms here): a
	// local publish and ledger write can both take less than that.
	fires, _ := b.js.Stream(ctx, "SCHED_FIRES")
	lastMsg, err := fires.GetMsg(ctx, last)
	if err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 5*time.Second, "the last fire older than the settle time", func() bool { return time.Since(lastMsg.Time) > 10*time.Millisecond })
	if err := b.a.Round(ctx); err != nil {
		t.Fatal(err)
	}
	r := b.verify(t)
	if !r.Intact() || r.Dispatches.Digests != 1 || r.Dispatches.Checked != 70 || len(r.Dispatches.Undigested) != 0 {
		t.Fatalf("untouched stream: %+v %+v", r, r.Dispatches)
	}

	if err := fires.DeleteMsg(ctx, 3); err != nil {
		t.Fatal(err)
	}
	// Purge-and-inject: seq 5 goes, and its slot comes back with another
	// body once the stream's duplicate window (1s here) forgets the id.
	if err := fires.DeleteMsg(ctx, 5); err != nil {
		t.Fatal(err)
	}
	var copySeq uint64
	testwait.Eventually(t, waitTimeout, "the duplicate window to forget s.5", func() bool {
		ack, err := b.js.Publish(ctx, "sched.fire.wf", []byte(`{"i":5,"amount":1000000}`), jetstream.WithMsgID("s.5"))
		if err != nil || ack.Duplicate {
			return false
		}
		copySeq = ack.Sequence
		return true
	})
	injected, err := b.js.Publish(ctx, "sched.fire.wf", []byte(`{"forged":true}`), jetstream.WithMsgID("s.forged"))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.a.Round(ctx); err != nil {
		t.Fatal(err)
	}
	r = b.verify(t)
	d := r.Dispatches
	if r.Intact() || d.Digests != 2 {
		t.Fatalf("tampering not found: %+v", d)
	}
	want := map[string]string{
		"SCHED_FIRES seq 3: deleted":                                   "gone",
		"SCHED_FIRES seq 5: altered":                                   fmt.Sprintf("published again at sequence %d with the same Nats-Msg-Id \"s.5\": the copy's subject or body differs", copySeq),
		fmt.Sprintf("SCHED_FIRES seq %d: injected", injected.Sequence): `Nats-Msg-Id "s.forged" on sched.fire.wf: no entry`,
	}
	if len(d.Findings) != len(want) {
		t.Errorf("findings: %v", d.Findings)
	}
	for _, f := range d.Findings {
		t.Logf("found: %s", f)
		frag, ok := want[fmt.Sprintf("%s seq %d: %s", f.Stream, f.Seq, f.Kind)]
		if !ok || !strings.Contains(f.Detail, frag) {
			t.Errorf("unexpected finding %s", f)
		}
	}
}

// TestDigestOfLargeFires: a round digests fires whose inputs are at the
// size limit over a link slower than the server without its connection
// being closed as a slow consumer: it reads them a byte limit at a time.
// Fetched 500 at a time by count, 64 fires of 256 KiB (16 MiB, twice
// the server's limit of pending bytes here) were on their way at once.
func TestDigestOfLargeFires(t *testing.T) {
	t.Parallel()
	srv := natstest.StartTight(t)
	b := setupOn(t, natstest.SlowLink(t, srv.URL(), 8<<10), time.Minute) // 8 KiB per millisecond at most
	const n = 64
	input := fmt.Sprintf(`{"pad":%q}`, strings.Repeat("x", kvstore.MaxInputBytes-16))
	for i := 1; i <= n; i++ {
		b.fire(t, fmt.Sprintf("s.%d", i), input)
	}
	if err := b.a.Round(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := b.verify(t)
	if !r.Intact() || r.Dispatches.Checked != n || len(r.Dispatches.Undigested) != 0 {
		t.Fatalf("%d fires of %d bytes: %+v %+v", n, len(input), r, r.Dispatches)
	}
	srv.KeptUp(t, b.nc, "the digest")
}

// TestSignedFires: a fire on the per-schedule subject has no ledger entry;
// its Sched-Signature under the audit key is what vouches for it. A signed
// fire passes; one whose body no longer matches its signature, one signed
// with another key and one with no signature and no entry are named.
func TestSignedFires(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Second)
	ctx := context.Background()
	publish := func(slot, body string, sign []byte) uint64 {
		t.Helper()
		m := nats.NewMsg("sched.fire.wf.s")
		m.Header.Set(kvstore.HeaderScheduledAt, "2027-01-01T00:00:00Z")
		m.Data = []byte(body)
		if sign != nil {
			m.Header.Set(audit.SignatureHeader, audit.SignFire(sign, m.Subject, slot, "2027-01-01T00:00:00Z", []byte(`{"n":1}`)))
		}
		ack, err := b.js.PublishMsg(ctx, m, jetstream.WithMsgID(slot))
		if err != nil {
			t.Fatal(err)
		}
		return ack.Sequence
	}
	publish("s.1", `{"n":1}`, key)
	altered := publish("s.2", `{"n":2}`, key) // signed for another body
	otherKey := publish("s.3", `{"n":1}`, []byte("not the audit key"))
	unsigned := publish("s.4", `{"n":1}`, nil)
	if err := b.a.Round(ctx); err != nil {
		t.Fatal(err)
	}
	d := b.verify(t).Dispatches
	if d.Checked != 4 {
		t.Fatalf("checked %d messages, want 4: %+v", d.Checked, d)
	}
	want := map[uint64]string{altered: "Sched-Signature is not the audit key's", otherKey: "Sched-Signature is not the audit key's", unsigned: "no entry"}
	for _, f := range d.Findings {
		frag, ok := want[f.Seq]
		if !ok || f.Kind != "injected" || !strings.Contains(f.Detail, frag) {
			t.Errorf("unexpected finding %s", f)
		}
		delete(want, f.Seq)
	}
	if len(want) > 0 {
		t.Errorf("not named: %v (findings %v)", want, d.Findings)
	}
}

// TestExternalChanges: writes through the store with an auditor (the API
// path) are not external; a spec, a calendar and timers written straight
// into the buckets are, with their revision, key and value hash; the
// scheduler's own claim of a timer and its delete after firing are not.
func TestExternalChanges(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	ctx := context.Background()
	if _, err := b.store.PutSpec(ctx, "api-spec", kvstore.Spec{Workflow: "wf", Every: "1m"}); err != nil {
		t.Fatal(err)
	}
	client := wakeups.Client{Store: b.store}
	e, err := client.Register(ctx, wakeups.Request{Run: "r1", Step: "s1", Workflow: "wf", When: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	// A scheduler claims it, fires it and deletes it.
	claimed := e.Timer
	claimed.Claim = &kvstore.Claim{Slot: claimed.Due, Token: "x", Owner: "t1", At: time.Now().UTC(), Expires: time.Now().Add(time.Minute).UTC()}
	rev, err := b.store.UpdateTimer(ctx, e.Key, claimed, e.Revision)
	if err != nil {
		t.Fatal(err)
	}
	// The bucket keeps one revision per key: a delete that replaces the
	// claim before the watch has read it leaves the watch only the delete
	// of a timer it never saw, which it cannot tell from anyone's and
	// reports (fail closed). A scheduler's delete comes after its publish;
	// here, wait until the trail says the watch examined the claim.
	b.waitExamined(t, "sched_wakeups", rev)
	if err := b.store.DeleteTimer(ctx, e.Key, rev); err != nil {
		t.Fatal(err)
	}
	// Straight into the buckets.
	specs, _ := b.js.KeyValue(ctx, "sched_specs")
	kvRev, err := specs.Put(ctx, "sneaky", []byte(`{"workflow":"wf","every":"1s"}`))
	if err != nil {
		t.Fatal(err)
	}
	plain := wakeups.Client{Store: mustOpen(t, b.js)} // a Go client without the trail
	direct, err := plain.Register(ctx, wakeups.Request{Run: "r2", Step: "s1", Workflow: "wf", When: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	timers, _ := b.js.KeyValue(ctx, "sched_wakeups")
	if err := timers.Delete(ctx, direct.Key); err != nil {
		t.Fatal(err)
	}
	var ext []audit.ExternalChange
	testwait.Eventually(t, waitTimeout, "three external changes", func() bool {
		if err := b.a.Round(ctx); err != nil {
			t.Fatal(err)
		}
		ext = b.verify(t).External
		return len(ext) >= 3
	})
	got := map[string]audit.ExternalChange{}
	for _, c := range ext {
		t.Logf("external: %s %q rev %d %s %s", c.Bucket, c.Key, c.Rev, c.Op, c.SHA256)
		got[c.Bucket+" "+c.Key+" "+c.Op] = c
	}
	if c, ok := got["sched_specs sneaky put"]; !ok || c.Rev != kvRev || len(c.SHA256) != 64 {
		t.Errorf("kv put of a spec: %+v", c)
	}
	if _, ok := got["sched_wakeups "+direct.Key+" put"]; !ok {
		t.Errorf("timer registered without the trail not recorded")
	}
	if _, ok := got["sched_wakeups "+direct.Key+" delete"]; !ok {
		t.Errorf("timer deleted straight in the bucket not recorded")
	}
	if len(ext) != 3 {
		t.Errorf("%d external changes, want 3: the API's and the scheduler's own writes are not external", len(ext))
	}
}

// waitExamined runs rounds until the trail's last external entry says
// the watch of bucket examined revision rev.
func (b *bundle) waitExamined(t *testing.T, bucket string, rev uint64) {
	t.Helper()
	ctx := context.Background()
	testwait.Eventually(t, waitTimeout, fmt.Sprintf("the watch of %s at revision %d", bucket, rev), func() bool {
		if err := b.a.Round(ctx); err != nil {
			t.Fatal(err)
		}
		trail, err := b.js.Stream(ctx, audit.Stream)
		if err != nil {
			return false
		}
		m, err := trail.GetLastMsgForSubject(ctx, audit.Subject+"."+audit.KindExternal)
		if err != nil {
			return false
		}
		var e audit.Entry
		var x audit.External
		if json.Unmarshal(m.Data, &e) != nil || json.Unmarshal(e.Detail, &x) != nil {
			return false
		}
		for _, wm := range x.Watermarks {
			if wm.Bucket == bucket && wm.Rev >= rev {
				return true
			}
		}
		return false
	})
}

func mustOpen(t *testing.T, js jetstream.JetStream) *jsstore.Store {
	t.Helper()
	s, err := jsstore.Open(context.Background(), js, kvstore.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRollbackReported: the delete-recreate-replay rollback of issue 14 is
// reported by a running scheduler: an audit_rollback event naming the
// head it expected, and the counter.
func TestRollbackReported(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	ctx := context.Background()
	for i := range 30 {
		if err := b.log.Record(ctx, "schedule.pause", fmt.Sprintf("s%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.a.Round(ctx); err != nil {
		t.Fatal(err)
	}
	events, err := b.nc.SubscribeSync("sched.event.audit_rollback.>")
	if err != nil {
		t.Fatal(err)
	}
	natstest.Recreate(t, b.js, audit.Stream, 20)
	m, err := events.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("no audit_rollback event: %v", err)
	}
	var ev kvstore.Event
	if err := json.Unmarshal(m.Data, &ev); err != nil || ev.Kind != kvstore.EventAuditRollback || !strings.Contains(ev.Reason, "expected head") {
		t.Fatalf("event %s: %+v %v", m.Subject, ev, err)
	}
	t.Logf("event %s: %s", m.Subject, ev.Reason)
	if b.seen.n.Load() < 1 {
		t.Fatal("the rollback was not counted")
	}
}

// TestConfigRefused: a bad config is refused naming the field.
func TestConfigRefused(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	_, store := srv.Store(t)
	log := auditlog.New(store.JetStream(), key, "scheduler:t")
	ok := auditor.Config{Store: store, Log: log, Key: key, Instance: "t"}
	for _, c := range []struct {
		want string
		edit func(*auditor.Config)
	}{
		{"Store", func(c *auditor.Config) { c.Store = nil }},
		{"Log", func(c *auditor.Config) { c.Log = nil }},
		{"Key", func(c *auditor.Config) { c.Key = nil }},
		{"Instance", func(c *auditor.Config) { c.Instance = "" }},
		{"Config.Grace", func(c *auditor.Config) { c.Grace = -time.Second }},
		{"Config.LeaseTTL", func(c *auditor.Config) { c.LeaseTTL = 100 * time.Millisecond }},
	} {
		cfg := ok
		c.edit(&cfg)
		if _, err := auditor.New(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.want, err)
		}
	}
	if _, err := auditor.New(ok); err != nil {
		t.Fatal(err)
	}
}
