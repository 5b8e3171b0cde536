package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/jetsched/jetsched/internal/daemon/daemontest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/auditor"
	"github.com/jetsched/jetsched/internal/cli"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/audit"
)

// TestAuditTrail: mutations by the CLI and through the admin API are
// chained in SCHED_AUDIT; `scheduler audit verify` passes, then names a
// forged entry.
func TestAuditTrail(t *testing.T) {
	ctx := context.Background()
	keyFile := filepath.Join(t.TempDir(), "audit.key")
	if err := os.WriteFile(keyFile, []byte("a-secret-of-at-least-16-bytes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemon.Config{AuditKey: []byte("a-secret-of-at-least-16-bytes")})
	run := cliRunner(d, "--audit-key-file", keyFile)
	if code, _, e := run("schedule", "add", "--id", "a", "--workflow", "wf", "--every", "1m"); code != 0 {
		t.Fatal(e)
	}
	testwait.Eventually(t, 10*time.Second, "schedule a paused", func() bool { code, _, _ := run("schedule", "pause", "a", "--note", "audit me"); return code == 0 })
	nc, err := nats.Connect(d.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if msg, err := nc.Request("sched.api.schedule.resume", []byte(`{"id":"a"}`), 10*time.Second); err != nil || msg.Header.Get("Nats-Service-Error-Code") != "" {
		t.Fatalf("resume through the API: %v %s", err, msg.Data)
	}
	code, out, e := run("audit", "verify", "--from", "1")
	if code != 0 || !strings.Contains(out, "intact: 3 entries") {
		t.Fatalf("verify: exit %d: %s %s", code, out, e)
	}
	// A forged entry, published with a JetStream ack so that it is stored
	// before verify reads (a core publish + flush only reaches the server).
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "sched.audit.action", []byte(`{"kind":"action","actor":"mallory","action":"schedule.delete","target":"a","prev":"","mac":"00"}`)); err != nil {
		t.Fatal(err)
	}
	code, _, e = run("audit", "verify", "--from", "1")
	if code != cli.ExitFailure || !strings.Contains(e, "broken at sequence 4") {
		t.Fatalf("verify after a forgery: exit %d: %s", code, e)
	}
}

// auditEntries reads every action entry of the default trail.
func auditEntries(t *testing.T, js jetstream.JetStream) []audit.Entry {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, audit.Stream)
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Entry
	for seq := uint64(1); ; seq++ {
		m, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(audit.Subject+"."+audit.KindAction))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		seq = m.Sequence
		var e audit.Entry
		if err := json.Unmarshal(m.Data, &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
}

// TestAuditOfEverything (issue 14, items 4 and 5), through the CLI on an
// embedded server without accounts: every mutation through the API is an
// entry (timers included), recorded as unauthenticated with the caller's
// claim; `audit verify --dispatches` passes, then names a fire message
// deleted, one altered (purged and published again), one injected and a
// spec put straight into its bucket, each with its sequence and what
// differs; and after the trail is deleted, recreated and its first
// entries replayed, verify fails with the head it expected.
func TestAuditOfEverything(t *testing.T) {
	ctx := context.Background()
	keyFile := filepath.Join(t.TempDir(), "audit.key")
	if err := os.WriteFile(keyFile, []byte(testAuditKey), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemon.Config{
		AuditKey: []byte(testAuditKey),
		// A short duplicate window (claims of 1s need 2s), so that the
		// test can publish a slot again after deleting it.
		Setup: jsstore.SetupConfig{DuplicateWindow: 2 * time.Second}, Fire: fires.Config{ClaimTTL: time.Second},
		Audit: auditor.Config{Round: time.Hour, Settle: 300 * time.Millisecond, Grace: 200 * time.Millisecond, Monitor: 100 * time.Millisecond},
	})
	run := cliRunner(d, "--audit-key-file", keyFile)
	for _, args := range [][]string{
		{"schedule", "add", "--id", "a", "--workflow", "wf", "--every", "1s"},
		{"wakeup", "add", "--run", "r1", "--step", "s1", "--workflow", "wf", "--when", "1h"},
		{"wakeup", "cancel", "--run", "r1", "--step", "s1"},
	} {
		if code, out, e := run(args...); code != 0 {
			t.Fatalf("%v: exit %d: %s %s", args, code, out, e)
		}
	}
	js := d.JetStream()
	fires, err := js.Stream(ctx, "SCHED_FIRES")
	if err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 20*time.Second, "three fires in SCHED_FIRES", func() bool { info, err := fires.Info(ctx); return err == nil && info.State.Msgs >= 3 })
	if code, _, e := run("schedule", "pause", "a"); code != 0 {
		t.Fatal(e)
	}
	// A caller that forges the server's requester header is not believed
	// where the server vouches for no one.
	nc, err := nats.Connect(d.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	req := nats.NewMsg("sched.api.schedule.resume")
	req.Data = []byte(`{"id":"a"}`)
	req.Header.Set("Sched-Actor", "cli:alice@prod-bastion")
	req.Header.Set("Nats-Request-Info", `{"acc":"OPS","user":"alice"}`)
	if m, err := nc.RequestMsg(req, 10*time.Second); err != nil || m.Header.Get("Nats-Service-Error-Code") != "" {
		t.Fatalf("resume: %v %v", err, m)
	}
	if code, _, e := run("schedule", "pause", "a"); code != 0 {
		t.Fatal(e)
	}
	actions := map[string]audit.Entry{}
	for _, e := range auditEntries(t, js) {
		actions[e.Action] = e
	}
	for _, a := range []string{"schedule.put", "wakeup.add", "wakeup.cancel", "schedule.pause", "schedule.resume"} {
		e, ok := actions[a]
		if !ok {
			t.Errorf("no %s entry in the trail", a)
			continue
		}
		if e.Actor != "unauthenticated" || !strings.HasPrefix(e.ClaimedActor, "cli:") || !strings.HasPrefix(e.By, "scheduler:") {
			t.Errorf("%s: actor %q claimed %q by %q", a, e.Actor, e.ClaimedActor, e.By)
		}
	}
	if e := actions["schedule.resume"]; e.ClaimedActor != "cli:alice@prod-bastion" || e.ActorAccount != "" {
		t.Errorf("forged requester info believed: %+v", e)
	}
	if e := actions["wakeup.add"]; e.Bucket != "sched_wakeups" || e.Phase != audit.PhaseIntent || e.Key == "" || e.SHA256 == "" {
		t.Errorf("wakeup.add is not the intent of its write: %+v", e)
	}

	round := func() {
		t.Helper()
		testwait.Eventually(t, 20*time.Second, "an audit round", func() bool { return d.Auditor().Round(ctx) == nil })
	}
	round()
	if code, out, e := run("audit", "verify", "--dispatches", "--from", "1"); code != 0 || !strings.Contains(out, "dispatches: ") || !strings.Contains(out, "head: ") {
		t.Fatalf("verify before tampering: exit %d: %s %s", code, out, e)
	}

	// Tampering, with the rights of an admin (the embedded server has no
	// accounts).
	if err := fires.DeleteMsg(ctx, 1); err != nil {
		t.Fatal(err)
	}
	orig, err := fires.GetMsg(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := fires.DeleteMsg(ctx, 2); err != nil {
		t.Fatal(err)
	}
	copied := &nats.Msg{Subject: orig.Subject, Header: orig.Header, Data: []byte(`{"altered":true}`)}
	testwait.Eventually(t, 20*time.Second, "the duplicate window to forget the slot", func() bool { // until the duplicate window forgets the slot
		ack, err := js.PublishMsg(ctx, copied)
		return err == nil && !ack.Duplicate
	})
	forged := nats.NewMsg("sched.fire.wf")
	forged.Header.Set("Nats-Msg-Id", "a.forged")
	forged.Data = []byte(`{}`)
	injected, err := js.PublishMsg(ctx, forged)
	if err != nil {
		t.Fatal(err)
	}
	specs, err := js.KeyValue(ctx, "sched_specs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := specs.Put(ctx, "sneaky", []byte(`{"workflow":"wf","every":"1h"}`)); err != nil {
		t.Fatal(err)
	}
	// The altered copy keeps the original's Sched-Signature, which no
	// longer matches its body: it is named as a message no scheduler
	// dispatched, beside the deletion of the original.
	want := []string{"SCHED_FIRES seq 1: deleted", "SCHED_FIRES seq 2: deleted",
		"on " + orig.Subject + ": its Sched-Signature is not the audit key's: no scheduler dispatched it",
		fmt.Sprintf("SCHED_FIRES seq %d: injected: Nats-Msg-Id \"a.forged\"", injected.Sequence), `sched_specs "sneaky" revision`}
	var out, errOut string
	deadline := time.Now().Add(20 * time.Second)
	testwait.Eventually(t, 25*time.Second, "the next round's digest", func() bool { // the next round digests them once settled
		round()
		var code int
		code, out, errOut = run("audit", "verify", "--dispatches", "--from", "1")
		if time.Now().After(deadline) {
			t.Fatalf("verify: exit %d:\n%s%s", code, out, errOut)
		}
		if code != cli.ExitFailure {
			return false
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				return false
			}
		}
		return true
	})
	t.Logf("audit verify --dispatches:\n%s%s", out, errOut)
	if !strings.Contains(errOut, "dispatches tampered with") {
		t.Errorf("the failure does not say why: %s", errOut)
	}

	// The rollback: delete, recreate with the same config, replay.
	head := regexp.MustCompile(`head: (\d+:[0-9a-f]{64})`).FindStringSubmatch(out)
	if head == nil {
		t.Fatalf("no head line in %s", out)
	}
	natstest.Recreate(t, js, audit.Stream, 5)
	code, out, errOut := run("audit", "verify", "--from", "1", "--expect-head", head[1])
	if code != cli.ExitFailure || !strings.Contains(out, "intact: 5 entries") || !strings.Contains(errOut, "rolled back") ||
		!strings.Contains(errOut, "expected head "+head[1]) {
		t.Fatalf("rollback: exit %d: %s %s", code, out, errOut)
	}
	t.Logf("after the rollback: %s", errOut)
}

// TestAuthenticatedActor (issue 14, item 5): with natsconf's accounts the
// operator (account OPS) reaches the admin API through a service import
// that shares its user, so the scheduler records the user the server
// reports; a forged Sched-Actor is kept as claimed only, next to it, and a
// forged Nats-Request-Info is overwritten by the server.
func TestAuthenticatedActor(t *testing.T) {
	url := startNatsconfServer(t)
	ctx := context.Background()
	d, err := daemon.Start(ctx, daemon.Config{
		Conn:     natsconn.Options{URL: url, User: "scheduler", Password: "scheduler-secret"},
		AuditKey: []byte(testAuditKey),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer daemontest.Stop(t, d)
	op := connectAs(t, url, "operator", "operator-secret")
	req := nats.NewMsg("sched.api.schedule.create")
	req.Data = []byte(`{"id":"inv","spec":{"workflow":"invoices","every":"1m"}}`)
	req.Header.Set("Sched-Actor", "cli:alice@prod-bastion")
	req.Header.Set("Nats-Request-Info", `{"acc":"JETSCHED","user":"admin"}`)
	if m, err := op.nc.RequestMsg(req, 10*time.Second); err != nil || m.Header.Get("Nats-Service-Error-Code") != "" {
		t.Fatalf("create through the API: %v %v", err, m)
	}
	entries := auditEntries(t, d.JetStream())
	if len(entries) != 1 {
		t.Fatalf("%d entries", len(entries))
	}
	e := entries[0]
	if e.Action != "schedule.put" || e.Actor != "operator" || e.ActorAccount != "OPS" || e.ClaimedActor != "cli:alice@prod-bastion" {
		t.Fatalf("recorded actor %q (account %q), claimed %q, want operator (OPS) and the forged claim", e.Actor, e.ActorAccount, e.ClaimedActor)
	}
	t.Logf("recorded: actor %q account %q claimed_actor %q by %q", e.Actor, e.ActorAccount, e.ClaimedActor, e.By)
}
