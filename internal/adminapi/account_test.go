package adminapi_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/account"
	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestScheduleAccount (issue 51): schedule.account gives each owed slot
// its fate from the evidence (fires in the stream, ledger entries, the
// state record's next slot), the same summary of the whole range on
// every page, pages in nominal order whose cursors round-trip, a fates
// filter, and coded refusals naming the field.
func TestScheduleAccount(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ctx := context.Background()
	const every = 200 * time.Millisecond
	a.ok("schedule.create", admin.PutRequest{ID: "a", Spec: json.RawMessage(`{"workflow":"w","every":"200ms","align":"epoch"}`)}, nil)
	e, err := a.store.GetSpec(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	first := e.Written.Truncate(every)
	if first.Before(e.Written) {
		first = first.Add(every)
	}
	slot := func(i int) time.Time { return first.Add(time.Duration(i) * every).UTC() }
	to := slot(7) // 8 slots owed: 0 to 7
	time.Sleep(time.Until(to.Add(50 * time.Millisecond)))
	req := admin.AccountRequest{ID: "a", To: to.Format(time.RFC3339Nano)}

	// No engine has run: every slot is pending (the plan's next is slot 0).
	var pg admin.AccountPage
	a.ok("schedule.account", req, &pg)
	if got := pg.Summary.Line(); got != "owed 8, fired 0, not fired with reason 0, pending 8, unaccounted 0" || pg.Total != 8 || len(pg.Items) != 8 {
		t.Fatalf("before any fire: %s, %d items of %d", got, len(pg.Items), pg.Total)
	}

	// Slots 0 and 1 fired, 2 missed, 3 skipped, 4 nothing, 5 on is next.
	compiled, err := compile.Compile(e.Spec, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		natstest.PublishFire(t, a.js, natstest.Fire{Schedule: "a", Workflow: "w", At: slot(i), Instance: "i1"})
	}
	for i, st := range map[int]kvstore.TickStatus{2: kvstore.TickMissed, 3: kvstore.TickSkipped} {
		if err := a.store.PutTick(ctx, kvstore.Tick{Schedule: "a", Slot: slot(i), Status: st, Reason: "forged " + string(st)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.store.CreateState(ctx, "a", kvstore.State{Plan: compiled.Plan, Next: slot(5), Fires: 2}); err != nil {
		t.Fatal(err)
	}
	want := []string{account.FateFired, account.FateFired, account.FateNotFired, account.FateNotFired, account.FateUnaccounted,
		account.FatePending, account.FatePending, account.FatePending}
	const line = "owed 8, fired 2, not fired with reason 2, pending 3, unaccounted 1"
	var got []account.Entry
	cursor, pages := "", 0
	for {
		req.Cursor, req.Limit = cursor, 3
		a.ok("schedule.account", req, &pg)
		pages++
		if pg.Summary.Line() != line || pg.Total != 8 {
			t.Fatalf("page %d: summary %q, total %d; want %q of 8", pages, pg.Summary.Line(), pg.Total, line)
		}
		got = append(got, pg.Items...)
		if pg.NextCursor == "" {
			break
		}
		if len(pg.Items) != 3 || pg.NextCursor != pg.Items[2].Nominal.UTC().Format(time.RFC3339Nano) {
			t.Fatalf("page %d: %d items, next cursor %q", pages, len(pg.Items), pg.NextCursor)
		}
		cursor = pg.NextCursor
	}
	if pages != 3 || len(got) != len(want) {
		t.Fatalf("%d pages, %d entries; want 3 pages of 8", pages, len(got))
	}
	for i, en := range got {
		if !en.Nominal.Equal(slot(i)) || en.Fate != want[i] {
			t.Errorf("entry %d: %s %s (%s), want %s %s", i, en.Nominal.Format(time.RFC3339Nano), en.Fate, en.Evidence, slot(i).Format(time.RFC3339Nano), want[i])
		}
	}
	if got[0].Seq == 0 || got[2].Reason != "forged missed" || got[4].Evidence == "" {
		t.Errorf("evidence: fired %+v, missed %+v, unaccounted %+v", got[0], got[2], got[4])
	}

	// Only the problems: the summary still counts every slot.
	a.ok("schedule.account", admin.AccountRequest{ID: "a", To: req.To, Fates: []string{account.FateUnaccounted}}, &pg)
	if pg.Total != 1 || len(pg.Items) != 1 || !pg.Items[0].Nominal.Equal(slot(4)) || pg.Summary.Owed != 8 {
		t.Fatalf("fates unaccounted: %+v", pg)
	}
	// A range: (slot 1, slot 3].
	a.ok("schedule.account", admin.AccountRequest{ID: "a", From: slot(1).Format(time.RFC3339Nano), To: slot(3).Format(time.RFC3339Nano)}, &pg)
	if pg.Summary.Line() != "owed 2, fired 0, not fired with reason 2, pending 0, unaccounted 0" || pg.NextCursor != "" {
		t.Fatalf("from slot 1 to slot 3: %s %+v", pg.Summary.Line(), pg.Items)
	}
	// Defaults: to now, from now less the tick retention (a day), clipped
	// to the spec's write.
	a.ok("schedule.account", admin.AccountRequest{ID: "a"}, &pg)
	if pg.Summary.Owed < 8 || pg.Summary.Clipped == "" || !pg.Summary.From.Equal(e.Written.Add(-time.Nanosecond)) {
		t.Fatalf("default range: %+v", pg.Summary)
	}

	for _, c := range []struct {
		req   admin.AccountRequest
		code  string
		field string
	}{
		{admin.AccountRequest{ID: "a", Cursor: "a.1767225600000"}, admin.CodeInvalid, "cursor"},
		{admin.AccountRequest{ID: "a", From: "yesterday"}, admin.CodeInvalid, "from"},
		{admin.AccountRequest{ID: "a", To: "2026-13-01T00:00:00Z"}, admin.CodeInvalid, "to"},
		{admin.AccountRequest{ID: "a", From: "2026-12-02T00:00:00Z", To: "2026-12-01T00:00:00Z"}, admin.CodeInvalid, "to"},
		{admin.AccountRequest{ID: "a", Limit: admin.MaxLimit + 1}, admin.CodeInvalid, "limit"},
		{admin.AccountRequest{ID: "a", Fates: []string{"lost"}}, admin.CodeInvalid, "fates"},
		{admin.AccountRequest{ID: "a.b"}, admin.CodeInvalid, "id"},
		{admin.AccountRequest{ID: "nope"}, admin.CodeNotFound, ""},
	} {
		a.refused("schedule.account", c.req, c.code, c.field)
	}
}

// TestScheduleAccountInvalid: a spec written straight into the bucket
// that does not validate owes nothing and says why, instead of failing the request (an
// audit of every schedule goes on past it).
func TestScheduleAccountInvalid(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	specs, err := a.js.KeyValue(context.Background(), "sched_specs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := specs.Put(context.Background(), "bad", []byte(`{"workflow":"w","cron":"0 25 * * *"}`)); err != nil {
		t.Fatal(err)
	}
	var pg admin.AccountPage
	a.ok("schedule.account", admin.AccountRequest{ID: "bad"}, &pg)
	if pg.Invalid == "" || pg.Summary.Owed != 0 || pg.Items == nil {
		t.Fatalf("invalid spec: %+v", pg)
	}
}
