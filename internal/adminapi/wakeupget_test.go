package adminapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestWakeupGet: wakeup.get reads one pending timer by run and step,
// whole (a payload a listing would leave out included) with its labels
// and revision; one that is not pending is not_found naming it; a bad run
// or step is invalid naming the field; a record written straight into the
// bucket that is no valid timer is answered with invalid set.
func TestWakeupGet(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	big := `{"blob":"` + strings.Repeat("x", 2048) + `"}`
	var added struct {
		Revision uint64 `json:"revision"`
	}
	a.ok("wakeup.add", json.RawMessage(`{"run":"order/42","step":"escalate","workflow":"approvals","when":"48h","payload":`+big+
		`,"labels":{"team":"billing"}}`), &added)
	var got admin.TimerReply
	a.ok("wakeup.get", admin.WakeupGetRequest{Run: "order/42", Step: "escalate"}, &got)
	if got.Key != kvstore.TimerKey("order/42", "escalate") || got.Run != "order/42" || got.Step != "escalate" || got.Workflow != "approvals" ||
		got.When != "48h" || string(got.Payload) != big || got.Labels["team"] != "billing" || got.Revision != added.Revision ||
		len(got.Omitted) != 0 || got.Invalid != "" {
		t.Fatalf("wakeup.get = %+v (revision %d), want the whole timer at revision %d", got.TimerItem, got.Revision, added.Revision)
	}

	e := a.refused("wakeup.get", admin.WakeupGetRequest{Run: "order/42", Step: "remind"}, admin.CodeNotFound, "")
	if !strings.Contains(e.Message, `timer "order/42/remind"`) {
		t.Errorf("not found message %q does not name the timer", e.Message)
	}
	a.refused("wakeup.get", admin.WakeupGetRequest{Step: "remind"}, admin.CodeInvalid, "run")
	a.refused("wakeup.get", admin.WakeupGetRequest{Run: "order/42"}, admin.CodeInvalid, "step")
	a.refused("wakeup.get", json.RawMessage(`{"run":"r","step":"s","extra":1}`), admin.CodeInvalid, "extra")

	key := kvstore.TimerKey("forged", "s")
	kv, err := a.js.KeyValue(context.Background(), "sched_wakeups")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(context.Background(), key, []byte(`{"run":"forged","step":"s","workflow":"w.x","due":"2030-01-01T00:00:00Z"}`)); err != nil {
		t.Fatal(err)
	}
	a.ok("wakeup.get", admin.WakeupGetRequest{Run: "forged", Step: "s"}, &got)
	if got.Invalid == "" || got.Key != key {
		t.Fatalf("a forged record: %+v, want it answered with invalid set", got.TimerItem)
	}
}
