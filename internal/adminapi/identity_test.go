package adminapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestPutWithoutID: a spec put without an id gets its content hash as id,
// and putting it again writes nothing and says unchanged.
func TestPutWithoutID(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	spec := json.RawMessage(`{"workflow":"cleanup","every":"1h","input":{"olderThanDays":30}}`)
	var first, again admin.PutResponse
	a.ok("schedule.create", admin.PutRequest{Spec: spec, Upsert: true}, &first)
	want := kvstore.DefaultKey(kvstore.Spec{Workflow: "cleanup", Every: "1h", Input: json.RawMessage(`{"olderThanDays":30}`)})
	if first.ID != want || !first.Created || first.Unchanged {
		t.Fatalf("put without id: %+v, want id %s created", first, want)
	}
	a.ok("schedule.create", admin.PutRequest{Spec: json.RawMessage(`{"workflow":"cleanup","every":"1h","input":{ "olderThanDays": 30 }}`), Upsert: true}, &again)
	if again.ID != want || !again.Unchanged || again.Created || again.Revision != first.Revision {
		t.Fatalf("the same put again: %+v, want unchanged at revision %d", again, first.Revision)
	}
	// update derives the id alike.
	a.ok("schedule.update", admin.PutRequest{Spec: spec}, &again)
	if again.ID != want || !again.Unchanged {
		t.Fatalf("update without id: %+v", again)
	}
	a.refused("schedule.create", admin.PutRequest{Spec: json.RawMessage(`{"workflow":"a.b","every":"1h"}`)}, admin.CodeInvalid, "workflow")
	a.refused("schedule.create", admin.PutRequest{}, admin.CodeInvalid, "spec")
}

// TestPutOneShotInThePast: a new one-shot in the past is refused naming
// at; the same one-shot registered again after it fired is unchanged.
func TestPutOneShotInThePast(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	at := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	spec := json.RawMessage(`{"workflow":"launch","at":"` + at + `"}`)
	e := a.refused("schedule.create", admin.PutRequest{ID: "launch", Spec: spec, Upsert: true}, admin.CodeInvalid, "at")
	if !strings.Contains(e.Message, "in the past") {
		t.Fatalf("message %q", e.Message)
	}
	// As it stood when it was registered (in the future then).
	if _, err := a.store.PutSpec(context.Background(), "launch", kvstore.Spec{Workflow: "launch", At: ptime(t, at)}); err != nil {
		t.Fatal(err)
	}
	var out admin.PutResponse
	a.ok("schedule.create", admin.PutRequest{ID: "launch", Spec: spec, Upsert: true}, &out)
	if !out.Unchanged {
		t.Fatalf("re-registering the fired one-shot: %+v", out)
	}
}

// TestStaticRefusedThroughTheAPI: put and delete of a static schedule get
// code static naming its file; pause, resume, trigger and skip work.
func TestStaticRefusedThroughTheAPI(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	set := jsstore.StaticSet{Source: "billing.yaml", Schedules: []jsstore.StaticSchedule{{ID: "invoice", Spec: kvstore.Spec{Workflow: "invoice", Cron: "0 9 1 * *"}}}}
	if _, err := a.store.ApplyStatic(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		verb string
		req  any
	}{
		{"schedule.create", admin.PutRequest{ID: "invoice", Spec: json.RawMessage(`{"workflow":"invoice","cron":"0 10 1 * *"}`), Upsert: true}},
		{"schedule.update", admin.PutRequest{ID: "invoice", Spec: json.RawMessage(`{"workflow":"invoice","cron":"0 10 1 * *"}`)}},
		{"schedule.delete", admin.DeleteRequest{ID: "invoice"}},
	} {
		e := a.refused(c.verb, c.req, admin.CodeStatic, "id")
		if !strings.Contains(e.Message, `schedule "invoice" is static: declared in billing.yaml`) {
			t.Fatalf("%s: message %q", c.verb, e.Message)
		}
	}
	a.refused("schedule.create", admin.PutRequest{ID: "other", Spec: json.RawMessage(`{"workflow":"w","cron":"0 10 1 * *","static":"billing.yaml"}`)}, admin.CodeInvalid, "static")
	a.ok("schedule.pause", admin.PauseRequest{ID: "invoice", Note: "quarter close"}, nil)
	a.ok("schedule.resume", admin.IDRequest{ID: "invoice"}, nil)
	a.ok("schedule.trigger", admin.TriggerRequest{ID: "invoice"}, nil)
	a.ok("schedule.skip", admin.IDRequest{ID: "invoice"}, nil)
}

// TestErrorVocabulary: one mistake, one message, whatever the verb: no
// package prefixes, the record named as the user named it.
func TestErrorVocabulary(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	for _, verb := range []string{"schedule.get", "schedule.delete", "schedule.pause", "schedule.resume", "schedule.trigger", "schedule.skip"} {
		e := a.refused(verb, admin.IDRequest{ID: "nosuchid"}, admin.CodeNotFound, "")
		if e.Message != `not found: schedule "nosuchid"` {
			t.Errorf("%s: message %q", verb, e.Message)
		}
	}
	e := a.refused("schedule.update", admin.PutRequest{ID: "nosuchid", Spec: json.RawMessage(`{"workflow":"w","every":"1h"}`)}, admin.CodeNotFound, "")
	if e.Message != `not found: schedule "nosuchid"` {
		t.Errorf("update: message %q", e.Message)
	}
	e = a.refused("calendar.get", admin.CalendarRequest{Name: "nosuch"}, admin.CodeNotFound, "")
	if e.Message != `not found: calendar "nosuch"` {
		t.Errorf("calendar.get: message %q", e.Message)
	}
	e = a.refused("wakeup.cancel", admin.WakeupCancelRequest{Run: "r", Step: "s"}, admin.CodeNotFound, "")
	if e.Message != `not found: timer "r/s"` {
		t.Errorf("wakeup.cancel: message %q", e.Message)
	}
	e = a.refused("schedule.create", admin.PutRequest{ID: "x", Spec: json.RawMessage(`{"workflow":"w","every":"1h","cron":"* * * * *"}`)}, admin.CodeInvalid, kvstore.RecurrenceField)
	if !strings.Contains(e.Message, "cron,every") {
		t.Errorf("two recurrences: message %q", e.Message)
	}
	e = a.refused("schedule.create", admin.PutRequest{ID: "x", Spec: json.RawMessage(`{"workflow":"w","cron":"0 25 * * *"}`)}, admin.CodeInvalid, "cron")
	if strings.Contains(e.Message, "cronx:") || strings.Contains(e.Message, "kvstore:") {
		t.Errorf("bad cron: message %q has a package prefix", e.Message)
	}
}

func ptime(t *testing.T, s string) *time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return &v
}
