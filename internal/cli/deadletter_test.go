package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/worker"
)

// handled records the fires a worker's handler saw.
type handled struct {
	mu    sync.Mutex
	fires []worker.Fire
}

func (h *handled) add(f worker.Fire) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fires = append(h.fires, f)
}

// count is how many fires of slot (retries among them when retries) the
// handler saw.
func (h *handled) count(slot string, retries bool) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, f := range h.fires {
		if f.SlotID == slot && (f.DeadLetterSeq != 0) == retries {
			n++
		}
	}
	return n
}

// publishFire publishes what a scheduler publishes for a slot of schedule
// id of workflow wf.
func publishFire(t *testing.T, js jetstream.JetStream, wf, id string, slot time.Time) string {
	t.Helper()
	slotID := kvstore.SlotID(id, slot)
	m := nats.NewMsg(kvstore.Layout{}.FireSubject(wf, id))
	m.Header.Set(kvstore.HeaderScheduleID, id)
	m.Header.Set(kvstore.HeaderWorkflow, wf)
	m.Header.Set(kvstore.HeaderScheduledAt, slot.Format(time.RFC3339Nano))
	m.Data = []byte(`{"n":1}`)
	if _, err := js.PublishMsg(context.Background(), m, jetstream.WithMsgID(slotID)); err != nil {
		t.Fatal(err)
	}
	return slotID
}

// TestDeadLetters: a fire whose handler fails on its last allowed
// delivery is dead-lettered for real (pkg/worker); ls, show, retry (twice: one retry, handled once,
// with the original slot id) and purge work through the CLI and the
// admin API, and a bulk action wants --yes.
func TestDeadLetters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	js := e.store.JetStream()

	var h handled
	// Two deliveries, both failing: the second is the last, dead-lettered.
	w, err := worker.New(worker.Config{JetStream: js, Name: "billing-1", MaxWorkers: 1, MaxDeliver: 2, BackOff: []time.Duration{10 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Handle("billing", func(_ context.Context, f worker.Fire) error {
		h.add(f)
		if f.DeadLetterSeq == 0 && f.ScheduleID == "invoice" {
			return errors.New("card declined")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Stop(context.Background()) })

	slot := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	slotID := publishFire(t, js, "billing", "invoice", slot)
	var seq uint64
	testwait.Eventually(t, 10*time.Second, "the fire dead-lettered", func() bool {
		code, out, _ := e.run("deadletter", "ls", "--json")
		var pg admin.Page[admin.DeadLetter]
		if code != ExitOK || json.Unmarshal([]byte(out), &pg) != nil || len(pg.Items) != 1 {
			return false
		}
		l := pg.Items[0]
		if l.Workflow != "billing" || l.Schedule != "invoice" || l.ID != slotID || l.Deliveries != 2 ||
			!strings.Contains(l.Reason, "card declined") || !l.Slot.Equal(slot) || l.Kind != "fire" {
			t.Fatalf("dead letter %+v", l)
		}
		seq = l.Seq
		return true
	})

	code, out, errOut := e.run("deadletter", "ls", "--workflow", "billing")
	if code != ExitOK || !strings.Contains(out, "SEQ") || !strings.Contains(out, "invoice") || !strings.Contains(out, "card declined") {
		t.Fatalf("ls: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ = e.run("deadletter", "ls", "--workflow", "other", "--json"); code != ExitOK || total(out) != 0 {
		t.Fatalf("ls of another workflow: exit %d\n%s", code, out)
	}
	code, out, errOut = e.run("deadletter", "show", fmt.Sprint(seq))
	if code != ExitOK || !strings.Contains(out, "Sched-Schedule-Id: invoice") || !strings.Contains(out, `{"n":1}`) || !strings.Contains(out, "deliveries: 2") {
		t.Fatalf("show: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = e.run("deadletter", "show", fmt.Sprint(seq), "--json")
	var d admin.DeadLetterDetail
	if code != ExitOK || json.Unmarshal([]byte(out), &d) != nil || string(d.Body) != `{"n":1}` || d.Headers["Sched-Error"] == nil {
		t.Fatalf("show --json: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut = e.run("deadletter", "show", "999999"); code != ExitNotFound || !strings.Contains(errOut, "not found") {
		t.Fatalf("show of no dead letter: exit %d: %s", code, errOut)
	}
	ev, err := js.Publish(ctx, "sched.event.fired.invoice", []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errOut = e.run("deadletter", "show", fmt.Sprint(ev.Sequence)); code != ExitNotFound || !strings.Contains(errOut, "not a dead letter") {
		t.Fatalf("show of another event: exit %d: %s", code, errOut)
	}

	// Retried twice: one message, handled once, as the original slot.
	for i := range 2 {
		code, out, errOut = e.run("deadletter", "retry", fmt.Sprint(seq))
		want := "retried: " + slotID + ".retry-" + fmt.Sprint(seq) + " on sched.fire.billing.invoice.retry"
		if i == 1 {
			want = "already retried"
		}
		if code != ExitOK || !strings.Contains(out, want) {
			t.Fatalf("retry %d: exit %d, want %q\n%s%s", i+1, code, want, out, errOut)
		}
	}
	testwait.Eventually(t, 10*time.Second, "the retried fire handled", func() bool { return h.count(slotID, true) >= 1 })
	// A later fire of the workflow handled (one worker, in stream order)
	// shows that no second retry came before it.
	marker := publishFire(t, js, "billing", "marker", slot)
	testwait.Eventually(t, 10*time.Second, "the marker fire handled", func() bool { return h.count(marker, false) == 1 })
	if n := h.count(slotID, true); n != 1 {
		t.Fatalf("the retried fire was handled %d times, want once", n)
	}
	fires, err := js.Stream(ctx, "SCHED_FIRES")
	if err != nil {
		t.Fatal(err)
	}
	info, err := fires.Info(ctx, jetstream.WithSubjectFilter("sched.fire.billing.invoice.retry"))
	if err != nil || info.State.Subjects["sched.fire.billing.invoice.retry"] != 1 {
		t.Fatalf("retry messages in SCHED_FIRES: %v (%v), want one", info.State.Subjects, err)
	}
	// The schedule's ledger of fires does not see the retry as a fire.
	if f, err := e.store.LastFired(ctx, "invoice"); err != nil || f.SlotID != slotID {
		t.Fatalf("last fire of invoice: %+v (%v), want the original slot", f, err)
	}

	// Bulk actions want --yes; bad input exits 2 and does nothing.
	for _, args := range [][]string{
		{"deadletter", "purge", "--all"},
		{"deadletter", "retry", "--workflow", "billing", "--all"},
		{"deadletter", "purge", "--workflow", "billing"},
		{"deadletter", "purge"},
		{"deadletter", "purge", "0"},
		{"deadletter", "retry", fmt.Sprint(seq), "--all"},
		{"deadletter", "purge", "--all", "--yes", "--workflow", "bad.wf"},
	} {
		if code, _, errOut = e.run(args...); code != ExitInvalid {
			t.Fatalf("%v: exit %d, want 2: %s", args, code, errOut)
		}
	}
	if code, out, _ = e.run("deadletter", "purge", "--all", "--older-than", "1h", "--yes"); code != ExitOK || !strings.Contains(out, "0 dead letters purged") {
		t.Fatalf("purge --older-than 1h: exit %d\n%s", code, out)
	}
	if code, out, errOut = e.run("deadletter", "purge", "--workflow", "billing", "--all", "--yes"); code != ExitOK || !strings.Contains(out, "1 dead letters purged") {
		t.Fatalf("purge: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ = e.run("deadletter", "ls", "--json"); code != ExitOK || total(out) != 0 {
		t.Fatalf("ls after purge: exit %d\n%s", code, out)
	}
	if code, _, errOut = e.run("deadletter", "retry", fmt.Sprint(seq)); code != ExitNotFound || !strings.Contains(errOut, "not found") {
		t.Fatalf("retry of a purged dead letter: exit %d: %s", code, errOut)
	}
}

// total is the total of a listing's --json page (-1 when out is none).
func total(out string) int {
	var pg admin.Page[admin.DeadLetter]
	if json.Unmarshal([]byte(out), &pg) != nil {
		return -1
	}
	return pg.Total
}
