package timers

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestInvalidRecordReason: an invalid timer is recorded with the field its
// *kvstore.FieldError names; any other error with "record".
func TestInvalidRecordReason(t *testing.T) {
	due := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	valid := func() kvstore.Timer {
		return kvstore.Timer{Run: "order.42", Step: "escalate", Workflow: "approvals", Due: due, Created: due.Add(-time.Hour),
			Payload: json.RawMessage(`{"n":1}`), Condition: "awaiting", ConditionKey: "runs/order-42"}
	}
	for _, c := range []struct {
		edit  func(*kvstore.Timer)
		field string
	}{
		{func(t *kvstore.Timer) { t.Workflow = "a.>" }, "workflow"},
		{func(t *kvstore.Timer) { t.Run = "a\r\nb" }, "run"},
		{func(t *kvstore.Timer) { t.Due = time.Time{} }, "due"},
		{func(t *kvstore.Timer) { t.Payload = json.RawMessage(`{`) }, "payload"},
		{func(t *kvstore.Timer) { t.ConditionKey = "runs" }, "condition_key"},
	} {
		tm := valid()
		c.edit(&tm)
		err := kvstore.ValidateTimer(kvstore.TimerKey(tm.Run, tm.Step), tm)
		if err == nil {
			t.Fatalf("%s: accepted", c.field)
		}
		if field, reason := invalidRecordReason(err); field != c.field || !strings.HasPrefix(reason, "invalid record: "+c.field+": ") {
			t.Errorf("%s: reason %q (field %q)", c.field, reason, field)
		}
	}
	if field, reason := invalidRecordReason(errors.New("not json")); field != "record" || reason != "invalid record: record: not json" {
		t.Errorf("a plain error: reason %q (field %q)", reason, field)
	}
}
