package adminapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/calendars"
	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/adminapi"
	"github.com/jetsched/jetsched/internal/control"
	"github.com/jetsched/jetsched/internal/jsname"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/pipelined"
	"github.com/jetsched/jetsched/internal/slotid"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// api is an admin service on a real server, without a fire engine.
type api struct {
	t     *testing.T
	nc    *nats.Conn
	js    jetstream.JetStream
	store *jsstore.Store
}

func newAPI(t *testing.T) *api {
	t.Helper()
	srv := natstest.Start(t)
	js, store := srv.Store(t)
	svc, err := adminapi.Start(context.Background(), adminapi.Config{Conn: js.Conn(), Store: store, MaxBackfillSlots: 100})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	return &api{t: t, nc: js.Conn(), js: js, store: store}
}

// do sends a request and returns the reply body and its error code ("" for
// success), failing on a reply over the default max payload.
func (a *api) do(verb string, req any) (json.RawMessage, admin.Error) {
	a.t.Helper()
	data, err := json.Marshal(req)
	if err != nil {
		a.t.Fatal(err)
	}
	msg, err := a.nc.Request("sched.api."+verb, data, 20*time.Second)
	if err != nil {
		a.t.Fatalf("%s: %v", verb, err)
	}
	if len(msg.Data) >= 1<<20 {
		a.t.Fatalf("%s: a reply of %d bytes", verb, len(msg.Data))
	}
	var e admin.Error
	if code := msg.Header.Get("Nats-Service-Error-Code"); code != "" {
		if err := json.Unmarshal(msg.Data, &e); err != nil || e.Code != code {
			a.t.Fatalf("%s: error reply %q with header code %q", verb, msg.Data, code)
		}
	}
	return msg.Data, e
}

// ok sends a request that must succeed and decodes its reply into out.
func (a *api) ok(verb string, req, out any) {
	a.t.Helper()
	body, e := a.do(verb, req)
	if e.Code != "" {
		a.t.Fatalf("%s %v: %s %s", verb, req, e.Code, e.Message)
	}
	if out != nil {
		reflect.ValueOf(out).Elem().SetZero() // a reused page must not keep the last cursor
		if err := json.Unmarshal(body, out); err != nil {
			a.t.Fatalf("%s: %v\n%s", verb, err, body)
		}
	}
}

// refused sends a request that must fail with code and field.
func (a *api) refused(verb string, req any, code, field string) admin.Error {
	a.t.Helper()
	_, e := a.do(verb, req)
	if e.Code != code || e.Field != field {
		a.t.Fatalf("%s %v: got %q field %q (%s), want %q field %q", verb, req, e.Code, e.Field, e.Message, code, field)
	}
	return e
}

// bulk writes n specs straight into the bucket, the way a bulk import or
// the bench does, with an input of inputBytes each.
func (a *api) bulk(n int, id func(int) string, spec func(int) kvstore.Spec) {
	a.t.Helper()
	for i := range n {
		data, err := spec(i).Encode()
		if err != nil {
			a.t.Fatal(err)
		}
		m := nats.NewMsg(jsname.KV(a.js, "sched_specs", id(i)))
		m.Data = data
		if _, err := pipelined.Publish(context.Background(), a.js, m); err != nil { // waits for room in the async window
			a.t.Fatal(err)
		}
	}
	select {
	case <-a.js.PublishAsyncComplete():
	case <-time.After(30 * time.Second):
		a.t.Fatal("bulk write not acknowledged in 30s")
	}
}

// TestListPastOneMegabyte: 5,000 schedules whose one-reply listing was
// about 2.5 MB, past NATS's 1 MB max payload (the old listing never
// answered). Pages are bounded, in id order, and cover every schedule
// exactly once; filters select server-side with exact totals.
func TestListPastOneMegabyte(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	const n = 5000
	input := json.RawMessage(`{"pad":"` + strings.Repeat("x", 400) + `"}`)
	id := func(i int) string { return fmt.Sprintf("s%05d", (i*7919)%n) } // written out of order
	a.bulk(n, id, func(i int) kvstore.Spec {
		wf := "even"
		if (i*7919)%n%2 == 1 {
			wf = "odd"
		}
		return kvstore.Spec{Workflow: wf, Every: "1h", Input: input}
	})
	// The catalog follows the specs bucket's watch: wait until it has
	// seen every write (on a loaded box it lags the acknowledgements).
	testwait.Eventually(t, 30*time.Second, "the catalog holds every schedule", func() bool {
		var pg admin.Page[admin.ScheduleInfo]
		a.ok("schedule.list", admin.ListRequest{Limit: 1}, &pg)
		return pg.Total == n
	})

	var seen []string
	cursor, pages := "", 0
	for {
		var pg admin.Page[admin.ScheduleInfo]
		a.ok("schedule.list", admin.ListRequest{Cursor: cursor, Limit: admin.MaxLimit}, &pg)
		pages++
		if pg.Total != n {
			t.Fatalf("page %d: total %d, want %d", pages, pg.Total, n)
		}
		for _, v := range pg.Items {
			if string(v.Spec.Input) != string(input) {
				t.Fatalf("%s: input %d bytes, want the 412-byte input (under the 1 KiB listing cut)", v.ID, len(v.Spec.Input))
			}
			seen = append(seen, v.ID)
		}
		if pg.NextCursor == "" {
			break
		}
		cursor = pg.NextCursor
	}
	if len(seen) != n || !slices.IsSorted(seen) || len(slices.Compact(slices.Clone(seen))) != n {
		t.Fatalf("%d ids over %d pages, sorted %v; want %d distinct ids in order", len(seen), pages, slices.IsSorted(seen), n)
	}
	if pages < 5 {
		t.Fatalf("%d pages of at most %d", pages, admin.MaxLimit)
	}

	// Filters: workflow, prefix, state, and their combination.
	var pg admin.Page[admin.ScheduleInfo]
	a.ok("schedule.list", admin.ListRequest{Workflow: "odd", Limit: 3}, &pg)
	if pg.Total != n/2 || len(pg.Items) != 3 || pg.Items[0].ID != "s00001" || pg.NextCursor != "s00005" {
		t.Fatalf("workflow odd: total %d, first %v, next %q", pg.Total, ids(pg.Items), pg.NextCursor)
	}
	a.ok("schedule.list", admin.ListRequest{Prefix: "s012", Workflow: "even"}, &pg)
	if pg.Total != 50 || len(pg.Items) != 50 || pg.Items[0].ID != "s01200" || pg.NextCursor != "" {
		t.Fatalf("prefix s012 and workflow even: total %d, %d items from %v, next %q", pg.Total, len(pg.Items), ids(pg.Items[:1]), pg.NextCursor)
	}
	a.ok("schedule.list", admin.ListRequest{Workflow: "none"}, &pg)
	if pg.Total != 0 || len(pg.Items) != 0 {
		t.Fatalf("unknown workflow: %+v", pg)
	}
	if _, err := (control.Control{Store: a.store}).Pause(context.Background(), "s00042", "audit", time.Time{}); err != nil {
		t.Fatal(err)
	}
	a.bulk(1, func(int) string { return "s00043" }, func(int) kvstore.Spec { return kvstore.Spec{Workflow: "odd", Every: "soon"} })
	for state, want := range map[string][]string{admin.StatePaused: {"s00042"}, admin.StateInvalid: {"s00043"}} {
		a.ok("schedule.list", admin.ListRequest{State: state}, &pg)
		if pg.Total != 1 || !slices.Equal(ids(pg.Items), want) {
			t.Fatalf("state %s: total %d, %v, want %v", state, pg.Total, ids(pg.Items), want)
		}
	}
	a.ok("schedule.list", admin.ListRequest{State: admin.StatePlanned, Prefix: "s0004"}, &pg)
	if pg.Total != 8 { // s00040..s00049 less the paused and the invalid one
		t.Fatalf("planned with prefix s0004: total %d, want 8", pg.Total)
	}

	// status: a summary of all and a page of rows.
	var st admin.StatusPage
	a.ok("status", admin.ListRequest{Limit: 2, Cursor: "s00041"}, &st)
	s := st.Summary
	if s.Schedules != n || s.Paused != 1 || s.Invalid != 1 || s.Planned != n-2 || s.Shards == 0 {
		t.Fatalf("summary %+v", s)
	}
	if len(st.Items) != 2 || st.Items[0].ID != "s00042" || st.Items[0].State != admin.StatePaused || !strings.Contains(st.Items[0].Paused, "audit") ||
		st.Items[1].State != admin.StateInvalid || st.NextCursor != "s00043" {
		t.Fatalf("status page: %+v", st)
	}
}

func ids(items []admin.ScheduleInfo) []string {
	var out []string
	for _, v := range items {
		out = append(out, v.ID)
	}
	return out
}

// TestListBoundsEachReply: schedules with inputs at the cap are listed
// without them (named in "omitted"), get returns them whole, and a page of
// large records ends early rather than pass the reply budget.
func TestListBoundsEachReply(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	big := json.RawMessage(`"` + strings.Repeat("y", kvstore.MaxInputBytes-2) + `"`)
	for _, id := range []string{"big1", "big2", "big3", "big4", "big5"} {
		a.ok("schedule.create", admin.PutRequest{ID: id, Spec: mustJSON(t, kvstore.Spec{Workflow: "w", Every: "1m", Input: big})}, nil)
	}
	var pg admin.Page[admin.ScheduleInfo]
	a.ok("schedule.list", admin.ListRequest{}, &pg)
	if len(pg.Items) != 5 || pg.Items[0].Spec.Input != nil || !slices.Equal(pg.Items[0].Omitted, []string{"input"}) {
		t.Fatalf("list of 5 x 256 KiB inputs: %d items, omitted %v, input %d bytes", len(pg.Items), pg.Items[0].Omitted, len(pg.Items[0].Spec.Input))
	}
	var info admin.ScheduleInfo
	a.ok("schedule.get", admin.IDRequest{ID: "big1"}, &info)
	if len(info.Spec.Input) != len(big) || info.Omitted != nil {
		t.Fatalf("get: input %d bytes, want %d", len(info.Spec.Input), len(big))
	}
	// Just over the cap: refused before anything is written.
	over := json.RawMessage(`"` + strings.Repeat("y", kvstore.MaxInputBytes) + `"`)
	a.refused("schedule.create", admin.PutRequest{ID: "big6", Spec: mustJSON(t, kvstore.Spec{Workflow: "w", Every: "1m", Input: over})}, admin.CodeInvalid, "input")
	a.refused("schedule.get", admin.IDRequest{ID: "big6"}, admin.CodeNotFound, "")
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestListShowsWhatWasJustWritten: a listing right after a write through
// any path (here straight into the bucket) includes it.
func TestListShowsWhatWasJustWritten(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	var pg admin.Page[admin.ScheduleInfo]
	for i := range 20 {
		id := fmt.Sprintf("new%02d", i)
		if _, err := a.store.PutSpec(context.Background(), id, kvstore.Spec{Workflow: "w", Every: "1m"}); err != nil {
			t.Fatal(err)
		}
		a.ok("schedule.list", admin.ListRequest{Prefix: "new"}, &pg)
		if pg.Total != i+1 || pg.Items[i].ID != id {
			t.Fatalf("after writing %s: total %d, %v", id, pg.Total, ids(pg.Items))
		}
	}
	if err := a.store.DeleteSpec(context.Background(), "new05"); err != nil {
		t.Fatal(err)
	}
	a.ok("schedule.list", admin.ListRequest{Prefix: "new"}, &pg)
	if pg.Total != 19 || slices.Contains(ids(pg.Items), "new05") {
		t.Fatalf("after removing new05: %v", ids(pg.Items))
	}
}

// TestOtherListings pages timers, calendars and a schedule's history.
func TestOtherListings(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ctx := context.Background()
	for i := range 7 {
		a.ok("wakeup.add", admin.WakeupRequest{Run: fmt.Sprintf("order.%d", i%2), Step: fmt.Sprintf("step-%d", i), Workflow: []string{"a", "b"}[i%2], When: "1h"}, nil)
	}
	var timers admin.Page[admin.TimerItem]
	a.ok("wakeup.list", admin.WakeupListRequest{Run: "order.1", Limit: 2}, &timers)
	if timers.Total != 3 || len(timers.Items) != 2 || timers.Items[0].Step != "step-1" || timers.NextCursor == "" {
		t.Fatalf("timers of order.1: %+v", timers)
	}
	a.ok("wakeup.list", admin.WakeupListRequest{Run: "order.1", Limit: 2, Cursor: timers.NextCursor}, &timers)
	if timers.Total != 3 || len(timers.Items) != 1 || timers.Items[0].Step != "step-5" || timers.NextCursor != "" {
		t.Fatalf("second page of order.1: %+v", timers)
	}
	a.ok("wakeup.list", admin.WakeupListRequest{Workflow: "a"}, &timers)
	if timers.Total != 4 {
		t.Fatalf("timers of workflow a: total %d", timers.Total)
	}

	// The shipped calendars (builtin:NAME) are listed with the stored
	// ones, in name order: these three sort before them.
	for _, name := range []string{"a-fr", "a-de", "a-us"} {
		a.ok("calendar.put", admin.CalendarRequest{Name: name, Calendar: json.RawMessage(`{"zone":"UTC"}`)}, nil)
	}
	var cals admin.Page[admin.CalendarRow]
	a.ok("calendar.list", admin.CalendarListRequest{Limit: 2}, &cals)
	if cals.Total != 3+len(calendars.Names()) || len(cals.Items) != 2 || cals.Items[0].Name != "a-de" || cals.Items[1].Name != "a-fr" || cals.NextCursor != "a-fr" {
		t.Fatalf("calendars: %+v", cals)
	}
	a.ok("calendar.list", admin.CalendarListRequest{Limit: 2, Cursor: cals.NextCursor}, &cals)
	if len(cals.Items) != 2 || cals.Items[0].Name != "a-us" || cals.Items[1].Name != calendars.Names()[0] || !cals.Items[1].Builtin || cals.Items[1].Zone == "" {
		t.Fatalf("calendars, second page: %+v", cals)
	}

	a.ok("schedule.create", admin.PutRequest{ID: "h", Spec: json.RawMessage(`{"workflow":"w","every":"1m"}`)}, nil)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 5 {
		slot := base.Add(time.Duration(i) * time.Minute)
		if err := a.store.PutTick(ctx, kvstore.Tick{Schedule: "h", Slot: slot, Status: kvstore.TickCompleted, Outcome: strings.Repeat("o", 2000*(i%2))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.store.PutTick(ctx, kvstore.Tick{Schedule: "h", Slot: base.Add(150 * time.Second), SlotID: slotid.Extra("h", "trigger", base.Add(150*time.Second)), Status: kvstore.TickDispatched}); err != nil {
		t.Fatal(err)
	}
	var hist admin.Page[admin.HistoryItem]
	a.ok("schedule.history", admin.HistoryRequest{ID: "h", Limit: 4}, &hist)
	if hist.Total != 6 || len(hist.Items) != 4 || !hist.Items[0].Slot.Equal(base.Add(4*time.Minute)) || hist.Items[2].SlotID == "" || hist.NextCursor == "" {
		t.Fatalf("history newest first: %+v", hist)
	}
	if hist.Items[1].Clipped == nil || len(hist.Items[1].Outcome) > 1100 {
		t.Fatalf("a 2000-byte outcome is listed clipped: %d bytes, clipped %v", len(hist.Items[1].Outcome), hist.Items[1].Clipped)
	}
	a.ok("schedule.history", admin.HistoryRequest{ID: "h", Limit: 4, Cursor: hist.NextCursor}, &hist)
	if len(hist.Items) != 2 || !hist.Items[1].Slot.Equal(base) || hist.NextCursor != "" {
		t.Fatalf("history page 2: %+v", hist)
	}
	a.ok("schedule.history", admin.HistoryRequest{ID: "h", Limit: 1, Order: "oldest"}, &hist)
	if !hist.Items[0].Slot.Equal(base) {
		t.Fatalf("history oldest first starts at %v", hist.Items[0].Slot)
	}
}

// TestListingsWaitForLoadAfter: with LoadAfter, the catalogue loads only
// once it is closed (a scheduler's index complete); a listing before that
// answers "unavailable" saying so, and one after it lists every schedule.
func TestListingsWaitForLoadAfter(t *testing.T) {
	srv := natstest.Start(t)
	js, store := srv.Store(t)
	for i := range 3 {
		if _, err := store.PutSpec(context.Background(), fmt.Sprintf("s%d", i), kvstore.Spec{Workflow: "w", Every: "1m"}); err != nil {
			t.Fatal(err)
		}
	}
	after := make(chan struct{})
	svc, err := adminapi.Start(context.Background(), adminapi.Config{Conn: js.Conn(), Store: store, LoadAfter: after})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	a := &api{t: t, nc: js.Conn(), js: js, store: store}
	if _, e := a.do("schedule.list", admin.ListRequest{}); e.Code != admin.CodeUnavailable || !strings.Contains(e.Message, "index is complete") {
		t.Fatalf("listing before LoadAfter closed: %q %q, want %q saying it waits for the index", e.Code, e.Message, admin.CodeUnavailable)
	}
	close(after)
	var pg admin.Page[admin.ScheduleInfo]
	a.ok("schedule.list", admin.ListRequest{}, &pg)
	if pg.Total != 3 {
		t.Fatalf("listing after LoadAfter closed: %d schedules, want 3: %+v", len(pg.Items), pg)
	}
}

// One-shots that an ended list stands for (fired in windows, no record of
// their own) are listed, counted and shown as ended, also once the fire
// stream no longer holds their fires; the one no list names is planned.
func TestListedOneShotsShowEnded(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ctx := context.Background()
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	ids := []string{"once-a", "once-b", "once-c"}
	for _, id := range ids {
		if _, err := a.store.PutSpec(ctx, id, kvstore.Spec{Workflow: "wf", At: &at}); err != nil {
			t.Fatal(err)
		}
	}
	shards, err := a.store.Shards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids[:2] {
		l := jsstore.Ended{Shard: kvstore.ShardOf(id, shards), Owner: "s1", At: time.Now().UTC(),
			Slots: []jsstore.EndedSlot{{Schedule: id, Slot: at, Seq: uint64(10 + i), Window: "0/1"}}}
		if _, err := a.store.PutEnded(ctx, l, fmt.Sprintf("t%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	var pg admin.Page[admin.ScheduleInfo]
	err = testwait.Until(10*time.Second, "the listed one-shots listed as ended", func() error {
		a.ok("schedule.list", admin.ListRequest{State: admin.StateEnded}, &pg)
		if pg.Total != 2 {
			return fmt.Errorf("%d ended: %+v", pg.Total, pg.Items)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a.ok("schedule.list", admin.ListRequest{State: admin.StatePlanned}, &pg)
	if pg.Total != 1 || pg.Items[0].ID != "once-c" {
		t.Errorf("planned: %+v, want once-c alone", pg.Items)
	}
	var v admin.ScheduleInfo
	a.ok("schedule.get", admin.IDRequest{ID: "once-a"}, &v)
	if v.State == nil || !v.State.Ended || v.Planned || v.LastStatus != string(kvstore.TickDispatched) || v.State.Claim == nil || v.State.Claim.Seq != 10 {
		t.Errorf("schedule.get once-a: %+v (state %+v), want ended from its list, dispatched, seq 10", v, v.State)
	}
	// once-b moved to another time: its list no longer stands for it, in
	// the listing as in get.
	moved := at.Add(24 * time.Hour)
	if _, err := a.store.PutSpec(ctx, "once-b", kvstore.Spec{Workflow: "wf", At: &moved}); err != nil {
		t.Fatal(err)
	}
	a.ok("schedule.list", admin.ListRequest{State: admin.StateEnded}, &pg)
	if pg.Total != 1 || pg.Items[0].ID != "once-a" {
		t.Errorf("ended after once-b moved: %+v, want once-a alone", pg.Items)
	}
	a.ok("schedule.get", admin.IDRequest{ID: "once-b"}, &v)
	if v.State == nil || v.State.Ended || !v.Planned || !v.State.Next.Equal(moved) {
		t.Errorf("schedule.get once-b, moved: %+v (state %+v), want planned at its new time", v, v.State)
	}
}
