package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/auditlog"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/audit"
)

// trailOf records n actions on a fresh default trail and anchors a
// checkpoint after them.
func trailOf(t *testing.T, n int) (jetstream.JetStream, *auditlog.Log, audit.Head) {
	t.Helper()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	ctx := context.Background()
	if err := auditlog.Setup(ctx, js, audit.Trail{}, 1); err != nil {
		t.Fatal(err)
	}
	l := auditlog.New(js, key, "scheduler:a")
	for i := range n {
		if err := l.Record(ctx, "schedule.put", fmt.Sprintf("s%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	h, err := l.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return js, l, h
}

// TestRollbackIsCaught: issue 14's attack. The trail is deleted with an
// admin connection, recreated with the same config, and its first 20
// genuine entries published again: the chain alone holds, but the trail
// no longer extends the head anchored outside it, nor the head the
// operator kept.
func TestRollbackIsCaught(t *testing.T) {
	t.Parallel()
	js, l, anchored := trailOf(t, 79)
	ctx := context.Background()
	natstest.Recreate(t, js, audit.Stream, 20)
	r, err := audit.Verify(ctx, js, key, audit.VerifyOptions{From: 1, ExpectHead: &audit.Head{Seq: anchored.Seq, MAC: anchored.MAC}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Broken != "" || r.Entries != 20 {
		t.Fatalf("the replayed chain itself should hold (that is the attack): %+v", r)
	}
	if r.Intact() || !strings.Contains(r.Rollback, "does not extend its anchored head ") || !strings.Contains(r.Rollback, anchored.String()) ||
		!strings.Contains(r.Rollback, "created anew") || !strings.Contains(r.Rollback, "does not extend the expected head ") {
		t.Fatalf("rollback not reported with the expected head %s: %q", anchored, r.Rollback)
	}
	t.Logf("reported: %s", r.Rollback)
	// A checkpoint on the rolled-back trail is not anchored: the anchor
	// keeps the head it had, also when someone with write rights on the
	// head bucket hid it behind a delete marker.
	kv, err := js.KeyValue(ctx, audit.HeadBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(ctx, audit.Stream); err != nil {
		t.Fatal(err)
	}
	var reported error
	_, err = l.WithRollback(func(err error) { reported = err }).Checkpoint(ctx)
	if !errors.Is(err, audit.ErrRollback) || !errors.Is(reported, audit.ErrRollback) {
		t.Fatalf("checkpoint on a rolled-back trail: %v (reported %v)", err, reported)
	}
	a, err := audit.ReadAnchors(ctx, js, key, audit.Trail{})
	if last, ok := a.Last(); err != nil || !ok || last.Seq != anchored.Seq || last.MAC != anchored.MAC {
		t.Fatalf("anchored head moved: %+v %v", a, err)
	}
}

// TestLoweredLimitsAreCaught: updating the trail's stream to keep fewer
// messages (the scheduler may update its config) drops the oldest
// entries; verify names the gap at the start and the head it expected.
func TestLoweredLimitsAreCaught(t *testing.T) {
	t.Parallel()
	js, _, _ := trailOf(t, 30)
	ctx := context.Background()
	s, _ := js.Stream(ctx, audit.Stream)
	cfg := s.CachedInfo().Config
	cfg.MaxMsgs, cfg.Discard = 10, jetstream.DiscardOld
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	r, err := audit.Verify(ctx, js, key, audit.VerifyOptions{})
	if err != nil || r.Intact() || !strings.Contains(r.Rollback, "entries 1 to 21 are gone") {
		t.Fatalf("lowered limits not reported: %+v %v", r, err)
	}
}

// TestExpectHead: a head kept elsewhere passes while the trail holds it,
// and a head the trail never had (or a malformed one) is refused.
func TestExpectHead(t *testing.T) {
	t.Parallel()
	js, _, h := trailOf(t, 5)
	ctx := context.Background()
	parsed, err := audit.ParseHead(h.String())
	if err != nil {
		t.Fatal(err)
	}
	if r, err := audit.Verify(ctx, js, key, audit.VerifyOptions{ExpectHead: &parsed}); err != nil || !r.Intact() || r.Anchored == nil {
		t.Fatalf("verify against the kept head: %+v %v", r, err)
	}
	other := audit.Head{Seq: h.Seq, MAC: strings.Repeat("0", 64)}
	if r, _ := audit.Verify(ctx, js, key, audit.VerifyOptions{ExpectHead: &other}); !strings.Contains(r.Rollback, "replaced") {
		t.Fatalf("a head the trail never had passed: %+v", r)
	}
	for _, bad := range []string{"", "12", "0:" + h.MAC, "x:" + h.MAC, "3:abc"} {
		if _, err := audit.ParseHead(bad); err == nil {
			t.Errorf("ParseHead(%q) accepted", bad)
		}
	}
}

// TestForgedAnchorIsReported: a value written into the head bucket
// without the key is named, and does not replace the signed head.
func TestForgedAnchorIsReported(t *testing.T) {
	t.Parallel()
	js, _, h := trailOf(t, 3)
	ctx := context.Background()
	kv, err := js.KeyValue(ctx, audit.HeadBucket)
	if err != nil {
		t.Fatal(err)
	}
	forged, _ := json.Marshal(audit.Head{Stream: audit.Stream, Seq: 1, MAC: h.MAC, Sig: "00"})
	if _, err := kv.Put(ctx, audit.Stream, forged); err != nil {
		t.Fatal(err)
	}
	r, err := audit.Verify(ctx, js, key, audit.VerifyOptions{})
	if err != nil || len(r.ForgedAnchors) != 1 || r.Anchored == nil || r.Anchored.Seq != h.Seq || r.Intact() {
		t.Fatalf("forged anchor: %+v %v", r, err)
	}
	// The head bucket refuses purges (a roll-up would erase its history).
	if err := kv.Purge(ctx, audit.Stream); err == nil {
		t.Fatal("the head bucket allowed a purge")
	}
}
