package timers

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/strictjson"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// FuzzReadTimer: any bytes under any key of sched_wakeups are read (decoded
// and validated) without a panic; what the scheduler accepts on read the
// API's validator accepts too (the same function, on the record as
// re-encoded), it survives a round trip, and nothing in it can reach a
// header or a subject as something else: the key is the record's own, the
// workflow one token, no header value holds a control character, the
// payload nests at most fieldcheck.MaxJSONDepth.
func FuzzReadTimer(f *testing.F) {
	due := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	good, _ := json.Marshal(kvstore.Timer{Run: "order.42", Step: "escalate", Workflow: "approvals", Due: due, Created: due.Add(-time.Hour),
		Payload: json.RawMessage(`{"n":1}`), Condition: "awaiting", ConditionKey: "runs/order-42", When: "48 whours",
		Zone: "Europe/Paris", Calendar: "office"})
	f.Add(kvstore.TimerKey("order.42", "escalate"), good)
	for _, s := range []string{
		`{"run":"r","step":"s","workflow":"a.>","due":"2026-01-01T00:00:00Z"}`,
		`{"run":"attacker","step":"s","workflow":"wf","due":"2026-01-01T00:00:00Z"}`,
		`{"run":"r","step":"s","workflow":"wf","due":"2026-01-01T00:00:00Z","payload":[[[[]]]],"condition":"x","condition_key":"runs/k"}`,
		`{"run":"r","run":"s","step":"s","workflow":"wf","due":"2026-01-01T00:00:00Z"}`,
		`{"run":"r\r\n","step":"s","workflow":"wf","due":"2026-01-01T00:00:00Z"}`,
		`{`, `null`, `[]`,
	} {
		f.Add("r.s", []byte(s))
	}
	f.Fuzz(func(t *testing.T, key string, data []byte) {
		tm, err := readTimer(key, data)
		if err != nil {
			return
		}
		enc, err := json.Marshal(tm)
		if err != nil {
			t.Fatalf("encode an accepted timer: %v", err)
		}
		again, err := readTimer(key, enc)
		if err != nil {
			t.Fatalf("an accepted timer re-encoded is refused: %v\n%s", err, enc)
		}
		if err := kvstore.ValidateTimer(key, again); err != nil {
			t.Fatalf("the API's validator refuses what the reader accepts: %v", err)
		}
		if key != kvstore.TimerKey(tm.Run, tm.Step) {
			t.Fatalf("key %q is not the record's (%q, %q)", key, tm.Run, tm.Step)
		}
		if kvstore.ValidateWorkflow(tm.Workflow) != nil || strings.ContainsAny(tm.Workflow, ".*> ") {
			t.Fatalf("workflow %q is not one token", tm.Workflow)
		}
		for _, h := range []string{tm.Run, tm.Step, tm.Condition, tm.ConditionKey, tm.When, tm.Zone, tm.Calendar} {
			if strings.ContainsFunc(h, unicode.IsControl) {
				t.Fatalf("header value %q holds a control character", h)
			}
		}
		if d := strictjson.Depth(tm.Payload); d > fieldcheck.MaxJSONDepth {
			t.Fatalf("payload %d deep accepted", d)
		}
	})
}
