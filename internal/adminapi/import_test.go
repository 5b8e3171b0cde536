package adminapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/adminapi"
	"github.com/jetsched/jetsched/internal/auditlog"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// newAuditedAPI is newAPI with an audit trail: every write through the
// store appends its entry, signed with the returned key.
func newAuditedAPI(t *testing.T) (*api, []byte) {
	t.Helper()
	srv := natstest.Start(t)
	js, store := srv.Store(t)
	key := []byte("import-test-key-0123456789")
	if err := auditlog.Setup(context.Background(), js, audit.Trail{}, 1); err != nil {
		t.Fatal(err)
	}
	store.SetAuditor(auditlog.New(js, key, "scheduler:test"))
	svc, err := adminapi.Start(context.Background(), adminapi.Config{Conn: js.Conn(), Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	return &api{t: t, nc: js.Conn(), js: js, store: store}, key
}

func importItems(n int, every string) []admin.ImportItem {
	items := make([]admin.ImportItem, n)
	for i := range items {
		items[i] = admin.ImportItem{ID: fmt.Sprintf("s%05d", i), Spec: json.RawMessage(fmt.Sprintf(`{"workflow":"wf","every":%q,"input":{"n":%d}}`, every, i))}
	}
	return items
}

// putEntries reads the trail's schedule.put intents: the sequence of each,
// by schedule id, and how many there are.
func putEntries(t *testing.T, js jetstream.JetStream) (map[string]uint64, int) {
	t.Helper()
	// A bound, not a speed limit: under -race on a loaded 2-core box the
	// thousands of entries took over 20 s.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := js.Stream(ctx, audit.Stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	revs, n := map[string]uint64{}, 0
	if info.State.Msgs == 0 {
		return revs, 0
	}
	// One ordered consumer, not a request per entry: thousands of entries
	// in well under the deadline on a loaded machine.
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(0); seq < info.State.LastSeq; {
		m, err := cons.Next(jetstream.FetchContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		md, err := m.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		seq = md.Sequence.Stream
		var e audit.Entry
		if err := json.Unmarshal(m.Data(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Action == "schedule.put" && e.Phase == audit.PhaseIntent {
			revs[e.Target] = seq
			n++
		}
	}
	return revs, n
}

// TestImportBatches: three batches of 1,000 land every schedule at the
// revision the reply names, each revision naming its own intent in the
// audit trail (written ahead), on a chain that verifies; importing them again writes
// nothing and appends no entry; a changed batch writes new revisions.
func TestImportBatches(t *testing.T) {
	t.Parallel()
	a, key := newAuditedAPI(t)
	items := importItems(3000, "1m")
	revs := map[string]uint64{}
	for b := 0; b < len(items); b += admin.MaxImportItems {
		var out admin.ImportResponse
		a.ok("schedule.import", admin.ImportRequest{Items: items[b : b+admin.MaxImportItems]}, &out)
		if out.Saved != admin.MaxImportItems || out.Failed != 0 || out.Unchanged != 0 {
			t.Fatalf("batch at %d: saved %d, unchanged %d, failed %d", b, out.Saved, out.Unchanged, out.Failed)
		}
		for i, r := range out.Results {
			if r.ID != items[b+i].ID || !r.Created || r.Revision == 0 || r.Error != nil {
				t.Fatalf("item %d: %+v", b+i, r)
			}
			revs[r.ID] = r.Revision
		}
	}
	ctx := context.Background()
	for id, rev := range revs {
		e, err := a.store.GetSpec(ctx, id)
		if err != nil || e.Revision != rev {
			t.Fatalf("schedule %s: revision %d (%v), the reply said %d", id, e.Revision, err, rev)
		}
	}
	audited, n := putEntries(t, a.js)
	if n != len(items) {
		t.Fatalf("%d schedule.put entries for %d schedules written", n, len(items))
	}
	specs, err := a.js.Stream(ctx, "KV_sched_specs")
	if err != nil {
		t.Fatal(err)
	}
	for id, rev := range revs {
		m, err := specs.GetMsg(ctx, rev)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Header.Get(kvstore.AuditSeqHeader); got != strconv.FormatUint(audited[id], 10) {
			t.Fatalf("schedule %s: revision %d names intent %q, its intent is %d", id, rev, got, audited[id])
		}
	}
	rep, err := audit.Verify(ctx, a.js, key, audit.VerifyOptions{From: 1})
	if err != nil || !rep.Intact() || rep.Entries < len(items) {
		t.Fatalf("verify: %v: %+v", err, rep)
	}

	// Again: nothing written, no entry.
	var out admin.ImportResponse
	a.ok("schedule.import", admin.ImportRequest{Items: items[:admin.MaxImportItems]}, &out)
	if out.Unchanged != admin.MaxImportItems || out.Saved != 0 {
		t.Fatalf("import again: saved %d, unchanged %d, failed %d", out.Saved, out.Unchanged, out.Failed)
	}
	for _, r := range out.Results {
		if !r.Unchanged || r.Revision != revs[r.ID] {
			t.Fatalf("unchanged item %+v, stored at revision %d", r, revs[r.ID])
		}
	}
	if _, again := putEntries(t, a.js); again != n {
		t.Fatalf("%d schedule.put entries after an unchanged import, %d before", again, n)
	}

	// Changed specs (and an id given twice: the last one wins).
	changed := importItems(10, "2m")
	changed = append(changed, admin.ImportItem{ID: "s00000", Spec: json.RawMessage(`{"workflow":"wf","every":"3m"}`)})
	a.ok("schedule.import", admin.ImportRequest{Items: changed}, &out)
	if out.Saved != len(changed) || out.Failed != 0 {
		t.Fatalf("changed import: %+v", out)
	}
	for _, r := range out.Results[:10] {
		if r.Created || r.Revision <= revs[r.ID] {
			t.Fatalf("changed item %+v over revision %d", r, revs[r.ID])
		}
	}
	if e, err := a.store.GetSpec(ctx, "s00000"); err != nil || e.Spec.Every != "3m" {
		t.Fatalf("s00000 given twice: %+v %v", e.Spec, err)
	}
	if e, err := a.store.GetSpec(ctx, "s00001"); err != nil || e.Spec.Every != "2m" {
		t.Fatalf("s00001: %+v %v", e.Spec, err)
	}
	if rep, err := audit.Verify(ctx, a.js, key, audit.VerifyOptions{From: 1}); err != nil || !rep.Intact() {
		t.Fatalf("verify after the changes: %v: %+v", err, rep)
	}
}

// TestImportRefusedWithoutTrail: with the trail at its max_msgs (discard
// new), an import is refused item by item with audit_unavailable and
// nothing is stored; once the trail takes appends again, the same import
// lands. It fails where the trail was written after the writes.
func TestImportRefusedWithoutTrail(t *testing.T) {
	t.Parallel()
	a, key := newAuditedAPI(t)
	ctx := context.Background()
	// One entry, so that the trail can be full.
	if err := auditlog.New(a.js, key, "test").Record(ctx, "test.start", "trail", nil); err != nil {
		t.Fatal(err)
	}
	setMax := func(full bool) {
		s, err := a.js.Stream(ctx, audit.Stream)
		if err != nil {
			t.Fatal(err)
		}
		cfg := s.CachedInfo().Config
		cfg.MaxMsgs = -1
		if full {
			cfg.MaxMsgs = int64(s.CachedInfo().State.Msgs)
		}
		if _, err := a.js.UpdateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	setMax(true)
	items := importItems(5, "1m")
	var out admin.ImportResponse
	a.ok("schedule.import", admin.ImportRequest{Items: items}, &out)
	if out.Saved != 0 || out.Failed != len(items) {
		t.Fatalf("import with a full trail: %+v", out)
	}
	for _, r := range out.Results {
		if r.Error == nil || r.Error.Code != admin.CodeAuditUnavailable {
			t.Fatalf("item %+v, want audit_unavailable", r)
		}
	}
	if specs, _, err := a.store.ListSpecs(ctx); err != nil || len(specs) != 0 {
		t.Fatalf("%d specs stored by a refused import (%v)", len(specs), err)
	}
	setMax(false)
	a.ok("schedule.import", admin.ImportRequest{Items: items}, &out)
	if out.Saved != len(items) {
		t.Fatalf("import with the trail back: %+v", out)
	}
	if _, n := putEntries(t, a.js); n != len(items) {
		t.Fatalf("%d intents for %d schedules", n, len(items))
	}
	if rep, err := audit.Verify(ctx, a.js, key, audit.VerifyOptions{From: 1}); err != nil || !rep.Intact() {
		t.Fatalf("verify: %v: %+v", err, rep)
	}
}

// TestImportRefusals: a batch with an invalid item, a static schedule, an
// unknown calendar or a one-shot in the past writes nothing and names the
// item; check writes nothing; a batch over the bound is refused.
func TestImportRefusals(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ctx := context.Background()
	_, err := a.store.ApplyStatic(ctx, jsstore.StaticSet{Source: "billing.yaml", Schedules: []jsstore.StaticSchedule{{ID: "invoice", Spec: kvstore.Spec{Workflow: "inv", Every: "1h"}}}})
	if err != nil {
		t.Fatal(err)
	}
	good := importItems(5, "1m")
	tests := []struct {
		name      string
		item      admin.ImportItem
		code      string
		field     string
		wantStore int // the specs stored after: the static one
	}{
		{"never fires", admin.ImportItem{ID: "bad", Spec: json.RawMessage(`{"workflow":"wf","cron":"0 0 30 2 *"}`)}, admin.CodeInvalid, "cron", 1},
		{"bad id", admin.ImportItem{ID: "a.b", Spec: json.RawMessage(`{"workflow":"wf","every":"1m"}`)}, admin.CodeInvalid, "id", 1},
		{"no spec", admin.ImportItem{ID: "x"}, admin.CodeInvalid, "spec", 1},
		{"unknown field", admin.ImportItem{ID: "x", Spec: json.RawMessage(`{"workflow":"wf","every":"1m","evry":"2m"}`)}, admin.CodeInvalid, "evry", 1},
		{"static stored", admin.ImportItem{ID: "invoice", Spec: json.RawMessage(`{"workflow":"inv","every":"2h"}`)}, admin.CodeStatic, "id", 1},
		{"static field", admin.ImportItem{ID: "y", Spec: json.RawMessage(`{"workflow":"wf","every":"1m","static":"mine.yaml"}`)}, admin.CodeInvalid, "static", 1},
		{"unknown calendar", admin.ImportItem{ID: "z", Spec: json.RawMessage(`{"workflow":"wf","cron":"0 9 * * *","calendar":"nope"}`)}, admin.CodeInvalid, "calendar", 1},
		{"one-shot in the past", admin.ImportItem{ID: "w", Spec: json.RawMessage(`{"workflow":"wf","at":"2001-01-01T00:00:00Z"}`)}, admin.CodeInvalid, "at", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			items := append(append([]admin.ImportItem{}, good[:2]...), tc.item)
			items = append(items, good[2:]...)
			var out admin.ImportResponse
			a.ok("schedule.import", admin.ImportRequest{Items: items}, &out)
			if out.Failed != len(items) || out.Saved != 0 {
				t.Fatalf("saved %d, failed %d of %d", out.Saved, out.Failed, len(items))
			}
			for i, r := range out.Results {
				want := admin.CodeNotWritten
				if i == 2 {
					want = tc.code
				}
				if r.Error == nil || r.Error.Code != want || i == 2 && r.Error.Field != tc.field {
					t.Fatalf("item %d: %+v, want code %s", i, r.Error, want)
				}
			}
			specs, _, err := a.store.ListSpecs(ctx)
			if err != nil || len(specs) != tc.wantStore {
				t.Fatalf("%d specs stored (%v), want %d", len(specs), err, tc.wantStore)
			}
		})
	}
	t.Run("check", func(t *testing.T) {
		var out admin.ImportResponse
		a.ok("schedule.import", admin.ImportRequest{Items: good, Check: true}, &out)
		if out.Saved != len(good) || out.Failed != 0 {
			t.Fatalf("check: %+v", out)
		}
		for _, r := range out.Results {
			if !r.Created || r.Revision != 0 {
				t.Fatalf("checked item %+v: want created, no revision", r)
			}
		}
		if specs, _, _ := a.store.ListSpecs(ctx); len(specs) != 1 {
			t.Fatalf("check wrote %d specs", len(specs)-1)
		}
	})
	t.Run("too many", func(t *testing.T) {
		a.refused("schedule.import", admin.ImportRequest{Items: importItems(admin.MaxImportItems+1, "1m")}, admin.CodeInvalid, "items")
	})
}

func TestImportItemsFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		payload int64
		want    int
	}{
		{0, admin.MaxImportItems},
		{1 << 20, admin.MaxImportItems},
		{8 << 20, admin.MaxImportItems},
		{64 << 10, 64},
		{1, 1},
	} {
		if got := admin.ImportItemsFor(tc.payload); got != tc.want {
			t.Errorf("ImportItemsFor(%d) = %d, want %d", tc.payload, got, tc.want)
		}
	}
}
