package pipeline_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/jsname"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/pipeline"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestFollowupsRetryAFailedTick: a tick sent while the ledger bucket is
// missing fails its acknowledgement; it is retried and lands once the
// bucket is back. Close waits for it.
func TestFollowupsRetryAFailedTick(t *testing.T) {
	t.Parallel()
	js, store := natstest.Start(t).Store(t)
	ctx := context.Background()
	ticks := store.Layout().TicksBucket
	if err := js.DeleteKeyValue(ctx, ticks); err != nil {
		t.Fatal(err)
	}
	f := pipeline.StartFollowups(store, 10*time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
	slot := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	tick := kvstore.Tick{Schedule: "s", Workflow: "wf", Slot: slot, Status: kvstore.TickDispatched, Owner: "me", At: slot}
	if err := f.PutTick(ctx, tick); err != nil {
		t.Fatal(err)
	}
	// A probe sent after the tick on the same connection fails after it:
	// once the probe's error is in, the tick's put has failed too, and it
	// is being retried.
	probe, err := js.PublishAsync(jsname.KV(js, ticks, "probe"), []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-probe.Err():
	case <-probe.Ok():
		t.Fatal("probe stored with the ledger bucket deleted")
	case <-time.After(10 * time.Second):
		t.Fatal("no answer to the probe")
	}
	if err := jsstore.Setup(ctx, js, jsstore.SetupConfig{}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, err := store.GetTick(ctx, kvstore.SlotID("s", slot))
	if err != nil || got.Status != kvstore.TickDispatched {
		t.Fatalf("tick after the retry: %+v (%v)", got, err)
	}
}

// TestFollowupsDeleteTimerKeepsANewerOne: the delete of a fired timer is
// conditional on the fired revision: a timer registered again meanwhile
// stays, and the lost delete is not retried.
func TestFollowupsDeleteTimerKeepsANewerOne(t *testing.T) {
	t.Parallel()
	_, store := natstest.Start(t).Store(t)
	ctx := context.Background()
	f := pipeline.StartFollowups(store, 10*time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
	due := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
	first, err := store.PutTimer(ctx, "run.step", kvstore.Timer{Workflow: "wf", Due: due})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.DeleteTimer(ctx, "run.step", first); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := store.GetTimer(ctx, "run.step"); err == nil {
		t.Fatal("fired timer still stored after its delete")
	}
	again, err := store.PutTimer(ctx, "run.step", kvstore.Timer{Workflow: "wf", Due: due.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	f = pipeline.StartFollowups(store, 10*time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := f.DeleteTimer(ctx, "run.step", first); err != nil { // the old revision
		t.Fatal(err)
	}
	f.Close()
	if got, err := store.GetTimer(ctx, "run.step"); err != nil || got.Revision != again {
		t.Fatalf("timer registered again: %+v (%v), want revision %d kept", got, err, again)
	}
}
