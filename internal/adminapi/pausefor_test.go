package adminapi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
)

// TestPauseFor: schedule.pause takes "for", a duration in the one grammar
// of the CLI's --for ("2 hours", "1d 3h", "90m"), ending the pause that
// long after the request; a bad one is invalid naming for, in our words,
// and pauses nothing.
func TestPauseFor(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.ok("schedule.create", admin.PutRequest{ID: "s", Spec: json.RawMessage(`{"workflow":"w","every":"1m"}`)}, nil)
	for _, c := range []struct {
		req  string
		want string
	}{
		{`{"id":"s","for":"2 horus"}`, `unknown unit "horus"`},
		{`{"id":"s","for":"30"}`, "a bare number needs a unit here"},
		{`{"id":"s","for":"0s"}`, "must be longer than 0"},
		{`{"id":"s","for":"-1h"}`, ""},
		{`{"id":"s","for":"300000d"}`, "out of range"},
		{`{"id":"s","for":"100000d"}`, "supported time range"},
		{`{"id":"s","for":"1h","until":"2099-01-01T00:00:00Z"}`, "not both"},
	} {
		e := a.refused("schedule.pause", json.RawMessage(c.req), admin.CodeInvalid, "for")
		if !strings.Contains(e.Message, c.want) {
			t.Errorf("%s: message %q, want it to say %q", c.req, e.Message, c.want)
		}
	}
	var info admin.ScheduleInfo
	a.ok("schedule.get", admin.IDRequest{ID: "s"}, &info)
	if info.State != nil && info.State.Paused != nil {
		t.Fatalf("a refused pause paused the schedule: %+v", info.State.Paused)
	}

	before := time.Now()
	a.ok("schedule.pause", json.RawMessage(`{"id":"s","note":"window","for":"1d 2 hours"}`), nil)
	after := time.Now()
	a.ok("schedule.get", admin.IDRequest{ID: "s"}, &info)
	p := info.State.Paused
	if p == nil || p.Note != "window" {
		t.Fatalf("paused %+v, want a pause with the note", p)
	}
	d := 26 * time.Hour
	if p.Until.Before(before.Add(d).Truncate(time.Second)) || p.Until.After(after.Add(d)) {
		t.Fatalf("until %s, want 26h after the request (%s .. %s)", p.Until, before.Add(d), after.Add(d))
	}
}
