package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/worker"
)

// TestDeadLetterRetryEndToEnd: a wakeup and a fire that their worker
// gives up on (its one allowed delivery fails) are dead-lettered by
// pkg/worker; `scheduler deadletter retry` of each, run twice, publishes
// one message (the wakeup's on sched.wakeup.<workflow>, the fire's on
// sched.fire.<workflow>.<schedule>.retry), which the worker handles once
// with the original id and the dead letter's sequence; each retry is in
// the audit trail as a deadletter.retry intent naming the dead letter.
func TestDeadLetterRetryEndToEnd(t *testing.T) {
	d := startDaemon(t, daemon.Config{AuditKey: []byte(testAuditKey)})
	run := mustRun(t, cliRunner(d))
	_, js := natstest.Dial(t, d.ClientURL())
	ctx := context.Background()

	var mu sync.Mutex
	retried := map[string][]uint64{} // original id -> dead letter seqs of the retries handled
	w, err := worker.New(worker.Config{JetStream: js, Name: "e2e", MaxDeliver: 1})
	if err != nil {
		t.Fatal(err)
	}
	record := func(id string, seq uint64) error {
		if seq == 0 {
			return errors.New("not yet")
		}
		mu.Lock()
		defer mu.Unlock()
		retried[id] = append(retried[id], seq)
		return nil
	}
	if err := w.HandleWakeup("approvals", func(_ context.Context, wk worker.Wakeup) error { return record(wk.ID, wk.DeadLetterSeq) }); err != nil {
		t.Fatal(err)
	}
	if err := w.Handle("billing", func(_ context.Context, f worker.Fire) error { return record(f.SlotID, f.DeadLetterSeq) }); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Stop(context.Background()) })

	run("wakeup", "add", "--run", "order-1", "--step", "escalate", "--workflow", "approvals", "--at", "now")
	run("schedule", "add", "--id", "invoice", "--workflow", "billing", "--cron", "0 0 1 1 *")
	testwait.Eventually(t, 15*time.Second, "the schedule planned, then triggered", func() bool {
		code, _, _ := cliRunner(d)("schedule", "trigger", "invoice")
		return code == 0
	})
	var letters []admin.DeadLetter
	testwait.Eventually(t, 15*time.Second, "the wakeup and the fire dead-lettered", func() bool {
		var pg admin.Page[admin.DeadLetter]
		if json.Unmarshal([]byte(run("deadletter", "ls", "--json")), &pg) != nil {
			return false
		}
		letters = pg.Items
		return len(letters) == 2
	})
	want := map[string]string{"wakeup": "sched.wakeup.approvals", "fire": "sched.fire.billing.invoice.retry"}
	for _, l := range letters {
		for i := range 2 {
			out := run("deadletter", "retry", fmt.Sprint(l.Seq))
			if i == 0 && !strings.Contains(out, "retried: "+l.ID+".retry-"+fmt.Sprint(l.Seq)+" on "+want[l.Kind]) ||
				i == 1 && !strings.Contains(out, "already retried") {
				t.Fatalf("retry %d of the %s dead letter %d: %s", i+1, l.Kind, l.Seq, out)
			}
		}
	}
	for _, l := range letters {
		testwait.Eventually(t, 15*time.Second, "the retried "+l.Kind+" handled", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(retried[l.ID]) > 0
		})
	}
	// One retry message each in its stream, so handled once.
	for stream, subject := range map[string]string{"SCHED_WAKEUPS": want["wakeup"], "SCHED_FIRES": want["fire"]} {
		s, err := js.Stream(ctx, stream)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx, jetstream.WithSubjectFilter(subject))
		if err != nil {
			t.Fatal(err)
		}
		n := info.State.Subjects[subject]
		if stream == "SCHED_WAKEUPS" {
			n-- // the original wakeup
		}
		if n != 1 {
			t.Fatalf("%d retries on %s, want one", n, subject)
		}
	}
	mu.Lock()
	for _, l := range letters {
		if got := retried[l.ID]; len(got) != 1 || got[0] != l.Seq {
			t.Errorf("the %s %s handled as retries of %v, want once of %d", l.Kind, l.ID, got, l.Seq)
		}
	}
	mu.Unlock()

	trail, err := js.Stream(ctx, audit.Stream)
	if err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 10*time.Second, "both retries in the audit trail", func() bool {
		info, err := trail.Info(ctx)
		if err != nil {
			return false
		}
		seen := 0
		for s := info.State.FirstSeq; s <= info.State.LastSeq; s++ {
			if e, err := audit.ReadEntry(ctx, trail, s); err == nil && e.Action == "deadletter.retry" && e.Phase == audit.PhaseIntent &&
				(e.Target == fmt.Sprint(letters[0].Seq) || e.Target == fmt.Sprint(letters[1].Seq)) {
				seen++
			}
		}
		return seen == 2
	})
}
