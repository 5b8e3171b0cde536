package adminapi_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestRevisions: create refuses a taken id unless upsert, update refuses
// a missing id, and an if_revision that is no longer current is refused
// with conflict; of two concurrent updates at the same revision exactly
// one wins.
func TestRevisions(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	spec := json.RawMessage(`{"workflow":"w","every":"1m"}`)
	spec2 := json.RawMessage(`{"workflow":"w","every":"2m"}`)
	var out admin.PutResponse
	a.ok("schedule.create", admin.PutRequest{ID: "x", Spec: spec}, &out)
	rev := out.Revision
	a.refused("schedule.create", admin.PutRequest{ID: "x", Spec: spec2}, admin.CodeConflict, "")
	// Upserting the same spec writes nothing; a different one replaces it.
	a.ok("schedule.create", admin.PutRequest{ID: "x", Spec: spec, Upsert: true}, &out)
	if out.Revision != rev || !out.Unchanged {
		t.Fatalf("upsert of the same spec: %+v, want unchanged at revision %d", out, rev)
	}
	a.ok("schedule.create", admin.PutRequest{ID: "x", Spec: json.RawMessage(`{"workflow":"w","every":"1m","description":"v2"}`), Upsert: true}, &out)
	if out.Revision <= rev || out.Unchanged {
		t.Fatalf("upsert of a changed spec: %+v after revision %d", out, rev)
	}
	a.refused("schedule.update", admin.PutRequest{ID: "missing", Spec: spec}, admin.CodeNotFound, "")
	a.refused("schedule.update", admin.PutRequest{ID: "x", Spec: spec2, IfRevision: rev}, admin.CodeConflict, "")
	a.refused("schedule.delete", admin.DeleteRequest{ID: "x", IfRevision: rev}, admin.CodeConflict, "")
	a.refused("schedule.create", admin.PutRequest{ID: "x", Spec: spec, IfRevision: rev}, admin.CodeInvalid, "if_revision")
	a.refused("schedule.update", admin.PutRequest{ID: "x", Spec: spec, Upsert: true}, admin.CodeInvalid, "upsert")

	var info admin.ScheduleInfo
	a.ok("schedule.get", admin.IDRequest{ID: "x"}, &info)
	results := make([]string, 8)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			_, e := a.do("schedule.update", admin.PutRequest{ID: "x", Spec: spec2, IfRevision: info.Revision})
			results[i] = e.Code
		})
	}
	wg.Wait()
	won := 0
	for _, code := range results {
		switch code {
		case "":
			won++
		case admin.CodeConflict:
		default:
			t.Fatalf("concurrent update: code %q", code)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d concurrent updates at revision %d succeeded, want exactly 1: %q", won, len(results), info.Revision, results)
	}
	a.ok("schedule.get", admin.IDRequest{ID: "x"}, &info)
	a.ok("schedule.delete", admin.DeleteRequest{ID: "x", IfRevision: info.Revision}, nil)
	a.ok("schedule.create", admin.PutRequest{ID: "x", Spec: spec}, nil) // a removed id can be created again
}

// TestRefusals: malformed and out-of-range requests get a coded reply
// naming the field, and nothing is written.
func TestRefusals(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.ok("schedule.create", admin.PutRequest{ID: "s", Spec: json.RawMessage(`{"workflow":"w","every":"1m"}`)}, nil)
	note := strings.Repeat("n", kvstore.MaxNoteBytes+1)
	for _, c := range []struct {
		verb  string
		req   any
		code  string
		field string
	}{
		{"schedule.skip", json.RawMessage(`{"id":"s","count":-5}`), admin.CodeInvalid, "count"},
		{"schedule.skip", json.RawMessage(`{"id":"s","count":0}`), admin.CodeInvalid, "count"},
		{"schedule.delete", json.RawMessage(`{}`), admin.CodeInvalid, "id"},
		{"schedule.get", json.RawMessage(`{"id":"*"}`), admin.CodeInvalid, "id"},
		{"schedule.get", json.RawMessage(`{"id":"s","id":"t"}`), admin.CodeInvalid, "id"},
		{"schedule.get", json.RawMessage(`{"id":5}`), admin.CodeInvalid, "id"},
		{"schedule.get", json.RawMessage(`{"idd":"s"}`), admin.CodeInvalid, "idd"},
		{"schedule.create", json.RawMessage(`{"id":"d","spec":{"workflow":"a","workflow":"b","every":"1m"}}`), admin.CodeInvalid, "spec"},
		{"schedule.create", json.RawMessage(`{"id":"d","spec":{"workflow":"a","every":"1m","input":{"k":1,"k":2}}}`), admin.CodeInvalid, "spec"},
		{"schedule.pause", admin.PauseRequest{ID: "s", Note: note}, admin.CodeInvalid, "note"},
		{"schedule.trigger", admin.TriggerRequest{ID: "s", Note: note}, admin.CodeInvalid, "note"},
		{"schedule.backfill", admin.BackfillRequest{ID: "s", From: time.Now().Add(-time.Hour), To: time.Now().Add(-time.Minute), Note: note}, admin.CodeInvalid, "note"},
		{"schedule.create", admin.PutRequest{ID: "d", Spec: json.RawMessage(`{"workflow":"w","every":"1m","description":"` + note + `"}`)}, admin.CodeInvalid, "description"},
		{"calendar.put", admin.CalendarRequest{Name: "big", Calendar: json.RawMessage(`{"zone":"UTC","holidays":[{"name":"` + strings.Repeat("h", calendar.MaxJSONBytes) + `","date":"01-01"}]}`)}, admin.CodeInvalid, "calendar"},
		{"calendar.put", admin.CalendarRequest{Name: "long", Calendar: json.RawMessage(`{"zone":"UTC","holidays":[{"name":"` + note + `","date":"01-01"}]}`)}, admin.CodeInvalid, "calendar"},
		{"calendar.get", admin.CalendarRequest{Name: "a.b"}, admin.CodeInvalid, "calendar"},
		{"calendar.put", json.RawMessage(`{"name":"dup","calendar":{"zone":"UTC","holidays":[{"name":"a","date":"01-01","date":"01-02"}]}}`), admin.CodeInvalid, "calendar"},
		{"wakeup.add", admin.WakeupRequest{Run: "r", Step: "s", Workflow: "w", When: "1h", ExpireAfter: "-1s"}, admin.CodeInvalid, "expire_after"},
		{"wakeup.add", admin.WakeupRequest{Run: "r", Step: "s", Workflow: "w", When: "1h", Condition: note}, admin.CodeInvalid, "condition"},
		{"schedule.list", admin.ListRequest{Limit: admin.MaxLimit + 1}, admin.CodeInvalid, "limit"},
		{"schedule.list", admin.ListRequest{State: "sleeping"}, admin.CodeInvalid, "state"},
		{"schedule.list", admin.ListRequest{Cursor: "a b"}, admin.CodeInvalid, "cursor"},
		{"schedule.list", admin.ListRequest{Prefix: "a.*"}, admin.CodeInvalid, "prefix"},
		{"status", admin.ListRequest{Limit: -1}, admin.CodeInvalid, "limit"},
		{"schedule.history", admin.HistoryRequest{ID: "s", Order: "random"}, admin.CodeInvalid, "order"},
		{"schedule.history", admin.HistoryRequest{ID: "s", Cursor: "t.123"}, admin.CodeInvalid, "cursor"},
		{"wakeup.list", admin.WakeupListRequest{Cursor: "*"}, admin.CodeInvalid, "cursor"},
		{"calendar.list", admin.CalendarListRequest{Limit: 5000}, admin.CodeInvalid, "limit"},
		{"schedule.frobnicate", json.RawMessage(`{}`), admin.CodeNotFound, "verb"},
		{"nope", nil, admin.CodeNotFound, "verb"},
	} {
		e := a.refused(c.verb, c.req, c.code, c.field)
		if c.code == admin.CodeNotFound && !strings.Contains(e.Message, c.verb) {
			t.Fatalf("%s: message %q does not name the verb", c.verb, e.Message)
		}
	}
	var st kvstore.State
	a.ok("schedule.skip", admin.IDRequest{ID: "s"}, &st) // no count: one slot
	if st.SkipNext != 1 || st.Paused != nil || len(st.Triggers) != 0 {
		t.Fatalf("state after refusals and one skip: %+v", st)
	}
	a.refused("schedule.get", admin.IDRequest{ID: "d"}, admin.CodeNotFound, "")
	a.refused("calendar.get", admin.CalendarRequest{Name: "big"}, admin.CodeNotFound, "")
}

// TestBackfillBounds: a range over the maximum is refused with the count
// it would make; progress (done/total) is in the state; cancel ends it.
func TestBackfillBounds(t *testing.T) {
	t.Parallel()
	a := newAPI(t) // MaxBackfillSlots 100
	// Aligned to the epoch, so that whole minutes are slots.
	a.ok("schedule.create", admin.PutRequest{ID: "b", Spec: json.RawMessage(`{"workflow":"w","every":"1m","align":"epoch"}`)}, nil)
	to := time.Now().Add(-time.Hour).Truncate(time.Minute)
	e := a.refused("schedule.backfill", admin.BackfillRequest{ID: "b", From: to.Add(-1000 * time.Minute), To: to}, admin.CodeInvalid, "to")
	if !strings.Contains(e.Message, "about 1001 slots") || !strings.Contains(e.Message, "maximum of 100") {
		t.Fatalf("refusal does not give the count: %s", e.Message)
	}
	a.refused("schedule.backfill", admin.BackfillRequest{ID: "b", From: to.Add(-30 * time.Second), To: to.Add(-10 * time.Second)}, admin.CodeInvalid, "from")
	var st kvstore.State
	a.ok("schedule.backfill", admin.BackfillRequest{ID: "b", From: to.Add(-99 * time.Minute), To: to}, &st)
	if st.Backfill == nil || st.Backfill.Total != 100 || st.Backfill.Done != 0 {
		t.Fatalf("backfill of 100 slots: %+v", st.Backfill)
	}
	var info admin.ScheduleInfo
	a.ok("schedule.get", admin.IDRequest{ID: "b"}, &info)
	if info.State == nil || info.State.Backfill == nil || info.State.Backfill.Total != 100 {
		t.Fatalf("get shows no backfill progress: %+v", info.State)
	}
	var sp admin.StatusPage
	a.ok("status", admin.ListRequest{}, &sp)
	if len(sp.Items) != 1 || sp.Items[0].Backfill == nil || sp.Items[0].Backfill.Total != 100 {
		t.Fatalf("status shows no backfill progress: %+v", sp.Items)
	}
	var out struct {
		Cancelled bool `json:"cancelled"`
		Total     int  `json:"total"`
	}
	a.ok("schedule.backfill.cancel", admin.IDRequest{ID: "b"}, &out)
	if !out.Cancelled || out.Total != 100 {
		t.Fatalf("cancel: %+v", out)
	}
	a.refused("schedule.backfill.cancel", admin.IDRequest{ID: "b"}, admin.CodeNotFound, "")
	a.ok("schedule.get", admin.IDRequest{ID: "b"}, &info)
	if info.State.Backfill != nil {
		t.Fatalf("backfill still there after cancel: %+v", info.State.Backfill)
	}
}
