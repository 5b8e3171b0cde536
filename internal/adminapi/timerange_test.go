package adminapi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestTimesOutOfRange (issue 52): a time outside the supported range
// (docs/records.md, "Time range") is refused as invalid, naming the field
// and the range, wherever it comes in: never an internal error (a year
// past 9999 cannot be encoded), a core pinned (a slot past the engine's
// Unix nanoseconds) or a pause for ever (the zero time read as "no
// until"). Nothing is written.
func TestTimesOutOfRange(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.ok("schedule.create", admin.PutRequest{ID: "s", Spec: json.RawMessage(`{"workflow":"w","every":"1m"}`)}, nil)
	y10k := "9999-12-31T23:00:00-05:00" // year 10000 in UTC
	spec := func(fields string) json.RawMessage { return json.RawMessage(`{"workflow":"w",` + fields + `}`) }
	for _, c := range []struct {
		verb  string
		req   any
		field string
	}{
		{"schedule.create", admin.PutRequest{ID: "e", Spec: spec(`"at":"2262-04-11T23:47:17Z"`)}, "at"},
		{"schedule.create", admin.PutRequest{ID: "e", Spec: spec(`"at":"` + y10k + `"`)}, "at"},
		{"schedule.create", admin.PutRequest{ID: "e", Spec: spec(`"every":"1h","start":"` + y10k + `"`)}, "start"},
		{"schedule.create", admin.PutRequest{ID: "e", Spec: spec(`"every":"1h","end":"` + y10k + `"`)}, "end"},
		{"schedule.create", admin.PutRequest{ID: "e", Spec: spec(`"every":"1h","anchor":"` + y10k + `"`)}, "anchor"},
		{"schedule.pause", json.RawMessage(`{"id":"s","until":"` + y10k + `"}`), "until"},
		{"schedule.pause", json.RawMessage(`{"id":"s","until":"2262-04-11T23:47:17Z"}`), "until"},
		{"schedule.pause", json.RawMessage(`{"id":"s","until":"0001-01-01T00:00:00Z"}`), "until"},
		{"schedule.pause", json.RawMessage(`{"id":"s","until":"2001-01-01T00:00:00Z"}`), "until"},
		{"wakeup.add", json.RawMessage(`{"run":"r","step":"s","workflow":"w","at":"` + y10k + `"}`), "at"},
		{"wakeup.add", json.RawMessage(`{"run":"r","step":"s","workflow":"w","at":"2262-04-11T23:47:17Z"}`), "at"},
		{"wakeup.add", admin.WakeupRequest{Run: "r", Step: "s", Workflow: "w", When: "9999-12-31"}, "when"},
		{"wakeup.add", admin.WakeupRequest{Run: "r", Step: "s", Workflow: "w", When: "9999-12-31 23:59", Zone: "America/Los_Angeles"}, "when"},
		{"wakeup.add", admin.WakeupRequest{Run: "r", Step: "s", Workflow: "w", WhenExpr: `now + duration("2562047h")`}, "when_expr"},
	} {
		e := a.refused(c.verb, c.req, admin.CodeInvalid, c.field)
		if !strings.Contains(e.Message, "outside the supported time range 1970-01-01T00:00:0") && !strings.Contains(e.Message, "not in the future") {
			t.Errorf("%s %s: message %q names neither the range nor the past", c.verb, c.field, e.Message)
		}
	}
	var info admin.ScheduleInfo
	a.ok("schedule.get", admin.IDRequest{ID: "s"}, &info)
	if info.State != nil && info.State.Paused != nil {
		t.Fatalf("a refused pause paused the schedule: %+v", info.State.Paused)
	}
	a.refused("schedule.get", admin.IDRequest{ID: "e"}, admin.CodeNotFound, "")
	// Just inside the range, everything is taken.
	inside := kvstore.MaxTime.Add(-time.Second).Format(time.RFC3339)
	a.ok("schedule.create", admin.PutRequest{ID: "late", Spec: spec(`"at":"` + inside + `"`)}, nil)
	a.ok("schedule.pause", json.RawMessage(`{"id":"s","until":"`+inside+`"}`), nil)
	a.ok("wakeup.add", json.RawMessage(`{"run":"r","step":"late","workflow":"w","at":"`+inside+`"}`), nil)
}
