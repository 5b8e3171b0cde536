package fire

import (
	"context"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestLedgerRetriesAFailedTick: a tick sent while the ledger bucket is
// missing fails its acknowledgement; the ledger retries it and it lands
// once the bucket is back. close waits for it.
func TestLedgerRetriesAFailedTick(t *testing.T) {
	js, store := natstest.Start(t).Store(t)
	ctx := context.Background()
	e, err := New(Config{Store: store, ClaimTTL: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ticks := store.Layout().TicksBucket
	if err := js.DeleteKeyValue(ctx, ticks); err != nil {
		t.Fatal(err)
	}
	l := newLedger(e)
	go l.run()
	slot := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	tick := kvstore.Tick{Schedule: "s", Workflow: "wf", Slot: slot, Status: kvstore.TickDispatched, Owner: "me", At: slot}
	if err := l.put(ctx, tick); err != nil {
		t.Fatal(err)
	}
	// A probe sent after the tick on the same connection fails after it:
	// once the probe's error is in, the tick's put has failed too, and the
	// ledger is retrying.
	probe, err := js.PublishAsync("$KV."+ticks+".probe", []byte("x"))
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
	if err := kvstore.Setup(ctx, js, kvstore.SetupConfig{}); err != nil {
		t.Fatal(err)
	}
	l.close()
	got, err := store.GetTick(ctx, kvstore.SlotID("s", slot))
	if err != nil || got.Status != kvstore.TickDispatched {
		t.Fatalf("tick after the retry: %+v (%v)", got, err)
	}
}
