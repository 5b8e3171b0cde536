package audit_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/auditlog"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/audit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var key = []byte("0123456789abcdef-test-key")

func TestChainVerifiesAndSurvivesConcurrentWriters(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	ctx := context.Background()
	if err := auditlog.Setup(ctx, js, audit.Trail{}, 1); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 3 {
		l := auditlog.New(js, key, fmt.Sprintf("writer-%d", w))
		wg.Go(func() {
			for i := range 70 {
				if err := l.Record(ctx, "schedule.put", fmt.Sprintf("s%d", i), map[string]int{"i": i}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	r, err := audit.Verify(ctx, js, key, audit.VerifyOptions{From: 1})
	if err != nil || r.Broken != "" || r.Entries < 210 {
		t.Fatalf("verify from the start: %+v %v", r, err)
	}
	// From the last checkpoint: fewer entries walked, still whole.
	r2, err := audit.Verify(ctx, js, key, audit.VerifyOptions{})
	if err != nil || r2.Broken != "" || r2.From <= 1 || r2.Entries >= r.Entries {
		t.Fatalf("verify from the checkpoint: %+v %v", r2, err)
	}
	// The stream refuses deletes and purges.
	s, _ := js.Stream(ctx, audit.Stream)
	if err := s.DeleteMsg(ctx, 5); err == nil {
		t.Fatal("the audit stream allowed a delete")
	}
	if err := s.Purge(ctx); err == nil {
		t.Fatal("the audit stream allowed a purge")
	}
	// A wrong key fails.
	if r, _ := audit.Verify(ctx, js, []byte("another-key-of-16-bytes"), audit.VerifyOptions{From: 1}); r.Broken == "" {
		t.Fatal("verify with the wrong key passed")
	}
}

func TestForgedEntryIsDetected(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	ctx := context.Background()
	if err := auditlog.Setup(ctx, js, audit.Trail{}, 1); err != nil {
		t.Fatal(err)
	}
	l := auditlog.New(js, key, "cli:alice")
	for i := range 5 {
		if err := l.Record(ctx, "schedule.pause", fmt.Sprintf("s%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	// Someone with publish rights on sched.audit.> but no key forges one.
	if _, err := js.Publish(ctx, "sched.audit.action", []byte(`{"kind":"action","actor":"mallory","action":"schedule.delete","target":"payroll","prev":"x","mac":"y"}`)); err != nil {
		t.Fatal(err)
	}
	_ = l.Record(ctx, "schedule.resume", "s0", nil)
	r, err := audit.Verify(ctx, js, key, audit.VerifyOptions{From: 1})
	if err != nil || r.BrokenSeq != 6 || !strings.Contains(r.Broken, "entry 6") {
		t.Fatalf("forgery not named: %+v %v", r, err)
	}
}

func TestDeletedEntryIsDetected(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	ctx := context.Background()
	// A trail whose stream was (mis)configured to allow deletes.
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: audit.Stream, Subjects: []string{audit.Subject + ".>"}}); err != nil {
		t.Fatal(err)
	}
	l := auditlog.New(js, key, "api")
	for i := range 6 {
		if err := l.Record(ctx, "calendar.put", fmt.Sprintf("c%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := js.Stream(ctx, audit.Stream)
	if err := s.DeleteMsg(ctx, 3); err != nil {
		t.Fatal(err)
	}
	r, err := audit.Verify(ctx, js, key, audit.VerifyOptions{From: 1})
	if err != nil || r.BrokenSeq != 3 || !strings.Contains(r.Broken, "missing") {
		t.Fatalf("deletion not named: %+v %v", r, err)
	}
	// Deleting the newest entry is caught too: the stream's last sequence
	// still counts it.
	if err := s.DeleteMsg(ctx, 6); err != nil {
		t.Fatal(err)
	}
	if r, _ := audit.Verify(ctx, js, key, audit.VerifyOptions{From: 5}); r.BrokenSeq != 6 || !strings.Contains(r.Broken, "missing") {
		t.Fatalf("deleted last entry not named: %+v", r)
	}
}
