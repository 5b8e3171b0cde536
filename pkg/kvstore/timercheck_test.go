package kvstore_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func validTimer() kvstore.Timer {
	due := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	return kvstore.Timer{Run: "order.42", Step: "escalate", Workflow: "approvals", Due: due, Created: due.Add(-time.Hour),
		Payload: json.RawMessage(`{"n":1}`), Condition: "awaiting", ConditionKey: "runs/order-42", When: "48 whours",
		Zone: "Europe/Paris", Calendar: "office"}
}

// TestValidateTimer: each rule names its field; the reason a scheduler
// records says "invalid record: <field>: <why>".
func TestValidateTimer(t *testing.T) {
	key := kvstore.TimerKey("order.42", "escalate")
	if err := kvstore.ValidateTimer(key, validTimer()); err != nil {
		t.Fatalf("valid timer: %v", err)
	}
	deep := func(n int) json.RawMessage {
		return json.RawMessage(strings.Repeat("[", n) + strings.Repeat("]", n))
	}
	for _, c := range []struct {
		name  string
		key   string // "": key
		edit  func(*kvstore.Timer)
		field string
	}{
		{"wildcard workflow", "", func(t *kvstore.Timer) { t.Workflow = "a.>" }, "workflow"},
		{"workflow star", "", func(t *kvstore.Timer) { t.Workflow = "*" }, "workflow"},
		{"no workflow", "", func(t *kvstore.Timer) { t.Workflow = "" }, "workflow"},
		{"key of another run", kvstore.TimerKey("victim", "escalate"), func(*kvstore.Timer) {}, "key"},
		{"run with CR LF", "", func(t *kvstore.Timer) { t.Run = "a\r\nb" }, "run"},
		{"step with NUL", "", func(t *kvstore.Timer) { t.Step = "a\x00" }, "step"},
		{"no due", "", func(t *kvstore.Timer) { t.Due = time.Time{} }, "due"},
		{"expiry before due", "", func(t *kvstore.Timer) { t.ExpiresAt = t.Due.Add(-time.Second) }, "expires_at"},
		{"negative rearms", "", func(t *kvstore.Timer) { t.Rearms = -1 }, "rearms"},
		{"payload 65 deep", "", func(t *kvstore.Timer) { t.Payload = deep(65) }, "payload"},
		{"payload 5000 deep", "", func(t *kvstore.Timer) { t.Payload = deep(5000) }, "payload"},
		{"payload too large", "", func(t *kvstore.Timer) {
			t.Payload = json.RawMessage(`"` + strings.Repeat("x", kvstore.MaxInputBytes) + `"`)
		}, "payload"},
		{"payload not JSON", "", func(t *kvstore.Timer) { t.Payload = json.RawMessage(`{`) }, "payload"},
		{"condition with LF", "", func(t *kvstore.Timer) { t.Condition = "a\nSched-Run: x" }, "condition"},
		{"condition too long", "", func(t *kvstore.Timer) { t.Condition = strings.Repeat("c", kvstore.MaxNoteBytes+1) }, "condition"},
		{"when with CR", "", func(t *kvstore.Timer) { t.When = "1h\r" }, "when"},
		{"zone with NUL", "", func(t *kvstore.Timer) { t.Zone = "UTC\x00" }, "zone"},
		{"calendar with a dot", "", func(t *kvstore.Timer) { t.Calendar = "a.b" }, "calendar"},
		{"condition key malformed", "", func(t *kvstore.Timer) { t.ConditionKey = "runs" }, "condition_key"},
		{"condition key without condition", "", func(t *kvstore.Timer) { t.Condition = "" }, "condition"},
	} {
		tm := validTimer()
		c.edit(&tm)
		k := c.key
		if k == "" {
			k = kvstore.TimerKey(tm.Run, tm.Step)
		}
		err := kvstore.ValidateTimer(k, tm)
		var fe *kvstore.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: %v, want field %s", c.name, err, c.field)
			continue
		}
	}
	ok := validTimer()
	ok.Payload = deep(fieldcheck.MaxJSONDepth)
	if err := kvstore.ValidateTimer(key, ok); err != nil {
		t.Errorf("payload %d deep: %v", fieldcheck.MaxJSONDepth, err)
	}
}

// TestSpecInputDepth: a spec's input nested deeper than MaxJSONDepth is
// refused, naming input, by the check writers and readers share.
func TestSpecInputDepth(t *testing.T) {
	for _, n := range []int{fieldcheck.MaxJSONDepth + 1, 5000} {
		s := kvstore.Spec{Workflow: "wf", Every: "1m", Input: json.RawMessage(strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n))}
		err := compile.Validate(s, "x", nil)
		var fe *kvstore.FieldError
		if !errors.As(err, &fe) || fe.Field != "input" || !strings.Contains(err.Error(), "over the maximum of 64") {
			t.Errorf("input %d deep: %v", n, err)
		}
		if _, err := compile.CheckRecord(s, "x", nil, nil, time.Now()); err == nil {
			t.Errorf("CheckRecord: input %d deep accepted", n)
		}
	}
	s := kvstore.Spec{Workflow: "wf", Every: "1m", Input: json.RawMessage(strings.Repeat("[", fieldcheck.MaxJSONDepth) + strings.Repeat("]", fieldcheck.MaxJSONDepth))}
	if err := compile.Validate(s, "x", nil); err != nil {
		t.Errorf("input %d deep: %v", fieldcheck.MaxJSONDepth, err)
	}
}

// FuzzReadCalendar: any bytes in sched_calendars parse without a panic,
// the scheduler's read (calendar.ParseZones, sharing zones) and the API's
// (calendar.Parse, in PutCalendar) agree, and what they accept survives
// the canonical form PutCalendar stores.
func FuzzReadCalendar(f *testing.F) {
	for _, s := range []string{
		`{"zone":"Europe/Paris","hours":{"mon-fri":["09:00-12:00","13:00-18:00"]},"holidays":[{"name":"x","date":"12-25"},{"name":"e","rule":"easter+1"}]}`,
		`{"zone":"UTC","weekend":["sat","sun"]}`, `{"zone":"UTC","holidays":"every day"}`, `{"zone":"UTC","zone":"UTC"}`,
		`{"zone":"Mars/Base"}`, `{`, `[]`,
	} {
		f.Add([]byte(s))
	}
	var zones cronx.Zones
	f.Fuzz(func(t *testing.T, data []byte) {
		read, rerr := calendar.ParseZones(data, &zones)
		api, aerr := calendar.Parse(data)
		if (rerr == nil) != (aerr == nil) {
			t.Fatalf("read and API disagree: %v / %v", rerr, aerr)
		}
		if rerr != nil {
			return
		}
		if read.Fingerprint() != api.Fingerprint() {
			t.Fatalf("read and API parse differently")
		}
		canon, err := api.MarshalJSON()
		if err != nil {
			t.Fatalf("canonical form: %v", err)
		}
		back, err := calendar.ParseZones(canon, &zones)
		if err != nil {
			t.Fatalf("the stored canonical form is refused on read: %v\n%s", err, canon)
		}
		if back.Fingerprint() != api.Fingerprint() {
			t.Fatalf("canonical form changed the calendar:\n%s", canon)
		}
	})
}
