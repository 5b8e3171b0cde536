package integration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/cli"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/testhttp"
	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestAuditFailsClosed (issue 52, part A): with SCHED_AUDIT at its
// max_msgs (discard new), as after `nats stream edit SCHED_AUDIT
// --max-msgs N`, a pause is refused with audit_unavailable (CLI exit 1, the
// admin API's code), the schedule is left as it was, and the refusal is an
// audit_unavailable event and jetsched_audit_append_failures_total. Once
// the limit is lifted the next pause is applied and its intent is in the
// trail, which verifies; the spec's revision names its intent.
func TestAuditFailsClosed(t *testing.T) {
	ctx := context.Background()
	keyFile := filepath.Join(t.TempDir(), "audit.key")
	if err := os.WriteFile(keyFile, []byte(testAuditKey), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemon.Config{AuditKey: []byte(testAuditKey), MetricsListen: "127.0.0.1:0"})
	run := cliRunner(d, "--audit-key-file", keyFile)
	if code, _, e := run("schedule", "add", "--id", "a", "--workflow", "wf", "--every", "1h"); code != 0 {
		t.Fatal(e)
	}
	nc, err := nats.Connect(d.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	events, err := nc.SubscribeSync("sched.event.audit_unavailable.>")
	if err != nil {
		t.Fatal(err)
	}
	js := d.JetStream()
	setMaxMsgs := func(n int64) {
		t.Helper()
		s, err := js.Stream(ctx, audit.Stream)
		if err != nil {
			t.Fatal(err)
		}
		cfg := s.CachedInfo().Config
		if n == 0 {
			n = int64(s.CachedInfo().State.Msgs) // full: the next append is refused
		}
		cfg.MaxMsgs = n
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	setMaxMsgs(0)

	code, _, errOut := run("schedule", "pause", "a", "--note", "refused")
	if code != cli.ExitFailure || !strings.Contains(errOut, "audit_unavailable") || !strings.Contains(errOut, "nothing changed") {
		t.Fatalf("pause with a full trail: exit %d: %s", code, errOut)
	}
	m, err := nc.Request("sched.api.schedule.pause", []byte(`{"id":"a"}`), 10*time.Second)
	if err != nil || m.Header.Get("Nats-Service-Error-Code") != "audit_unavailable" {
		t.Fatalf("pause through the API with a full trail: %v %v %s", err, m.Header, m.Data)
	}
	if st, _, err := d.Store().GetState(ctx, "a"); err == nil && st.Paused != nil {
		t.Fatalf("the refused pause was applied: %+v", st.Paused)
	}
	ev, err := events.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("no audit_unavailable event: %v", err)
	}
	var e kvstore.Event
	if err := json.Unmarshal(ev.Data, &e); err != nil || e.Kind != kvstore.EventAuditUnavailable || !strings.Contains(e.Reason, "schedule.pause a") {
		t.Fatalf("event %s: %+v %v", ev.Subject, e, err)
	}
	_, body := testhttp.Get(t, "http://"+d.MetricsAddr()+"/metrics")
	if n := metricValue(body, "jetsched_audit_append_failures_total"); n < 2 {
		t.Fatalf("jetsched_audit_append_failures_total %v, want at least 2:\n%s", n, grepLines(body, "audit"))
	}

	setMaxMsgs(-1)
	if code, _, e := run("schedule", "pause", "a", "--note", "applied"); code != 0 {
		t.Fatalf("pause with the trail restored: exit %d: %s", code, e)
	}
	st, _, err := d.Store().GetState(ctx, "a")
	if err != nil || st.Paused == nil || st.Paused.Note != "applied" {
		t.Fatalf("the pause was not applied: %+v %v", st, err)
	}
	var pause, put *audit.Entry
	entries := auditEntries(t, js)
	for i, e := range entries {
		switch {
		case e.Action == "schedule.pause" && e.Phase == audit.PhaseIntent:
			if pause != nil {
				t.Errorf("a second pause in the trail: %+v", e)
			}
			pause = &entries[i]
		case e.Action == "schedule.put":
			put = &entries[i]
		}
	}
	if pause == nil || pause.Bucket != "sched_state" || pause.Key != "a" || !strings.Contains(string(pause.Detail), "applied") {
		t.Fatalf("the applied pause's intent: %+v", pause)
	}
	// The spec's revision carries the sequence of its intent, which names
	// its key and the hash of its value.
	specs, err := js.Stream(ctx, "KV_sched_specs")
	if err != nil {
		t.Fatal(err)
	}
	sm, err := specs.GetLastMsgForSubject(ctx, "$KV.sched_specs.a")
	if err != nil {
		t.Fatal(err)
	}
	seq, _ := strconv.ParseUint(sm.Header.Get(kvstore.AuditSeqHeader), 10, 64)
	sum := sha256.Sum256(sm.Data)
	trail, err := js.Stream(ctx, audit.Stream)
	if err != nil {
		t.Fatal(err)
	}
	im, err := trail.GetMsg(ctx, seq)
	if err != nil {
		t.Fatalf("the spec's intent %d: %v", seq, err)
	}
	var intent audit.Entry
	if err := json.Unmarshal(im.Data, &intent); err != nil || put == nil || intent.MAC != put.MAC ||
		intent.Key != "a" || intent.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("the spec's revision names entry %d: %+v %v", seq, intent, err)
	}
	if code, out, e := run("audit", "verify", "--from", "1", "--revisions"); code != 0 || !strings.Contains(out, "revisions: 1 checked, 0 naming no intent, 0 forged") {
		t.Fatalf("verify: exit %d: %s %s", code, out, e)
	}
	// Straight into the bucket: one revision naming no intent (listed),
	// one copying the header of a's intent onto another value (forged).
	if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: "$KV.sched_specs.plain", Data: []byte(`{"workflow":"wf","every":"1m"}`)}); err != nil {
		t.Fatal(err)
	}
	forged := nats.NewMsg("$KV.sched_specs.a")
	forged.Data = []byte(`{"workflow":"evil","every":"1s"}`)
	forged.Header.Set(kvstore.AuditSeqHeader, strconv.FormatUint(seq, 10))
	if _, err := js.PublishMsg(ctx, forged); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run("audit", "verify", "--revisions")
	if code != cli.ExitFailure || !strings.Contains(out, `no intent: sched_specs "plain"`) ||
		!strings.Contains(out, `forged: sched_specs "a"`) || !strings.Contains(out, "another value") {
		t.Fatalf("verify after writes straight into the bucket: exit %d: %s %s", code, out, errOut)
	}
}

// metricValue is the value of an unlabelled sample in a /metrics body (-1
// when absent).
func metricValue(body, name string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// grepLines is the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
