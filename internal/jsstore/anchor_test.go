package jsstore_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestPutSpecAnchorsAtTheFirstWrite: through the store, an every spec
// gets its anchor at the first write; registering it again (as every
// instance does at start) writes nothing and keeps the cadence; instances
// registering at once agree on one write; a spec written before align
// existed keeps its behaviour when registered again.
func TestPutSpecAnchorsAtTheFirstWrite(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	ctx := context.Background()
	store := newStore(t, js)
	spec := kvstore.Spec{Workflow: "cleanup", Every: "7d", TZ: "Europe/Paris"}
	before := time.Now().Truncate(time.Second)
	rev, err := store.PutSpec(ctx, "weekly", spec)
	if err != nil {
		t.Fatal(err)
	}
	e, err := store.GetSpec(ctx, "weekly")
	if err != nil {
		t.Fatal(err)
	}
	if e.Spec.Align != kvstore.AlignAnchor || e.Spec.Anchor == nil || e.Spec.Anchor.Before(before) || e.Spec.Anchor.After(time.Now()) {
		t.Fatalf("stored %+v, want align anchor at the first write", e.Spec)
	}
	if again, err := store.PutSpec(ctx, "weekly", spec); err != nil || again != rev {
		t.Fatalf("re-registration: revision %d, %v; want %d (nothing written)", again, err, rev)
	}
	if e2, _ := store.GetSpec(ctx, "weekly"); !e2.Spec.Anchor.Equal(*e.Spec.Anchor) {
		t.Fatalf("anchor moved from %v to %v", e.Spec.Anchor, e2.Spec.Anchor)
	}
	// The update and create-only paths do the same.
	if again, err := store.UpdateSpec(ctx, "weekly", spec, rev); err != nil || again != rev {
		t.Fatalf("update with the same interval: revision %d, %v; want %d (nothing written)", again, err, rev)
	}
	changed := spec
	changed.Description = "now described"
	if _, err := store.UpdateSpec(ctx, "weekly", changed, rev); err != nil {
		t.Fatal(err)
	}
	if e3, _ := store.GetSpec(ctx, "weekly"); e3.Spec.Description != changed.Description || !e3.Spec.Anchor.Equal(*e.Spec.Anchor) {
		t.Fatalf("update: %+v, want the description and the anchor %v", e3.Spec, e.Spec.Anchor)
	}
	if _, err := store.CreateSpec(ctx, "created", spec); err != nil {
		t.Fatal(err)
	}
	if c, _ := store.GetSpec(ctx, "created"); c.Spec.Align != kvstore.AlignAnchor || c.Spec.Anchor == nil {
		t.Fatalf("create-only stored %+v, want an anchor", c.Spec)
	}

	// Five instances register a new schedule at once: one write.
	var wg sync.WaitGroup
	revs := make([]uint64, 5)
	errs := make([]error, 5)
	for i := range revs {
		wg.Go(func() { revs[i], errs[i] = store.PutSpec(ctx, "fleet", spec) })
	}
	wg.Wait()
	for i := range revs {
		if errs[i] != nil || revs[i] != revs[0] {
			t.Fatalf("concurrent registrations: revisions %v, errors %v; want one write", revs, errs)
		}
	}

	// A spec stored before align existed.
	kv, err := js.KeyValue(ctx, "sched_specs")
	if err != nil {
		t.Fatal(err)
	}
	legacy := kvstore.Spec{Workflow: "old", Every: "1d", TZ: "Europe/Paris"}
	raw, _ := json.Marshal(legacy)
	oldRev, err := kv.Put(ctx, "legacy", raw)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := store.PutSpec(ctx, "legacy", legacy); err != nil || got != oldRev {
		t.Fatalf("re-registering a legacy spec: revision %d, %v; want %d", got, err, oldRev)
	}
	if e, _ := store.GetSpec(ctx, "legacy"); e.Spec.Align != "" || e.Spec.Anchor != nil || compile.Plan(e.Spec) != "every 1d" {
		t.Fatalf("legacy spec became %+v", e.Spec)
	}
}
