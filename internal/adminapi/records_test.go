package adminapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/adminapi"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
)

// newAPIReading is newAPI whose service lets condition keys name buckets
// (scheduler run --condition-buckets).
func newAPIReading(t *testing.T, buckets ...string) *api {
	t.Helper()
	srv := natstest.Start(t)
	js, store := srv.Store(t)
	svc, err := adminapi.Start(context.Background(), adminapi.Config{Conn: js.Conn(), Store: store, ConditionBuckets: buckets})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	return &api{t: t, nc: js.Conn(), js: js, store: store}
}

// TestRecordRefusals: the API refuses what the scheduler would refuse on
// read, naming the field: ids and conditions holding characters a header,
// a subject or a log would read as something else, input and payloads
// nested deeper than fieldcheck.MaxJSONDepth, and condition keys in buckets
// the scheduler was not configured to read (another tenant's, its own
// audit trail's), which are refused without saying whether they exist.
// Nothing is written.
func TestRecordRefusals(t *testing.T) {
	t.Parallel()
	a := newAPIReading(t, "runs")
	ctx := context.Background()
	for _, b := range []string{"runs", "tenant_b", "sched_audit_head"} {
		if _, err := a.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: b}); err != nil {
			t.Fatal(err)
		}
	}
	deep := json.RawMessage(strings.Repeat("[", 5000) + strings.Repeat("]", 5000))
	wk := func(edit func(*admin.WakeupRequest)) admin.WakeupRequest {
		r := admin.WakeupRequest{Run: "r", Step: "s", Workflow: "wf", When: "1h"}
		edit(&r)
		return r
	}
	for _, c := range []struct {
		verb  string
		req   any
		field string
		says  string
	}{
		{"wakeup.add", wk(func(r *admin.WakeupRequest) { r.Run = "r\r\nSched-Workflow: x" }), "run", `character '\r'`},
		{"wakeup.add", wk(func(r *admin.WakeupRequest) { r.Run = "r\x00" }), "run", `character '\x00'`},
		{"wakeup.add", wk(func(r *admin.WakeupRequest) { r.Step = "s.>" }), "step", `character '>'`},
		{"wakeup.add", wk(func(r *admin.WakeupRequest) { r.Step = "*" }), "step", `character '*'`},
		{"wakeup.add", wk(func(r *admin.WakeupRequest) { r.Workflow = "a.>" }), "workflow", ""},
		{"wakeup.add", wk(func(r *admin.WakeupRequest) { r.Payload = deep }), "payload", "nested 5000 deep, over the maximum of 64"},
		{"wakeup.add", wk(func(r *admin.WakeupRequest) { r.Condition = "a\nb" }), "condition", "control character"},
		{"wakeup.add", wk(func(r *admin.WakeupRequest) { r.Condition, r.ConditionKey = "x", "tenant_b/k" }), "condition_key",
			`bucket "tenant_b" is not a condition bucket of this scheduler (it reads runs;`},
		{"wakeup.add", wk(func(r *admin.WakeupRequest) { r.Condition, r.ConditionKey = "x", "sched_audit_head/head" }), "condition_key",
			`bucket "sched_audit_head" is not a condition bucket`},
		{"wakeup.add", wk(func(r *admin.WakeupRequest) { r.Condition, r.ConditionKey = "x", "nosuch/k" }), "condition_key",
			`bucket "nosuch" is not a condition bucket`},
		{"schedule.create", admin.PutRequest{ID: "d", Spec: json.RawMessage(`{"workflow":"w","every":"1m","input":` + string(deep) + `}`)},
			"input", "nested 5000 deep"},
	} {
		e := a.refused(c.verb, c.req, admin.CodeInvalid, c.field)
		if !strings.Contains(e.Message, c.says) {
			t.Errorf("%s %s: message %q, want %q", c.verb, c.field, e.Message, c.says)
		}
	}
	var out map[string]any
	a.ok("wakeup.add", wk(func(r *admin.WakeupRequest) { r.Condition, r.ConditionKey = "x", "runs/k" }), &out)
	a.ok("wakeup.add", wk(func(r *admin.WakeupRequest) {
		r.Step, r.Payload = "deep-enough", json.RawMessage(strings.Repeat("[", fieldcheck.MaxJSONDepth)+strings.Repeat("]", fieldcheck.MaxJSONDepth))
	}), &out)
	a.refused("schedule.get", admin.IDRequest{ID: "d"}, admin.CodeNotFound, "")
	entries, err := a.store.ListTimers(ctx, ">")
	if err != nil || len(entries) != 2 {
		t.Fatalf("timers stored: %d (%v), want the 2 accepted", len(entries), err)
	}
}

// TestForgedSpecShownInvalid: a spec written straight into the bucket
// with an input nested 5,000 deep is shown invalid by schedule.get, with
// the reason.
func TestForgedSpecShownInvalid(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ctx := context.Background()
	kv, err := a.js.KeyValue(ctx, "sched_specs")
	if err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	if _, err := kv.Put(ctx, "deep", []byte(`{"workflow":"w","every":"1m","input":`+deep+`}`)); err != nil {
		t.Fatal(err)
	}
	var info admin.ScheduleInfo
	a.ok("schedule.get", admin.IDRequest{ID: "deep"}, &info)
	if !strings.Contains(info.Invalid, "input") || !strings.Contains(info.Invalid, "nested 5000 deep") {
		t.Fatalf("schedule.get of a forged deep input: invalid %q", info.Invalid)
	}
}

// TestForgedTimersListedInvalid: timer records written straight into the
// bucket, one that does not decode and one that fails the API's checks
// (its key is another run's), are listed by wakeup.list with the reason,
// beside a valid one, not left out (a record nobody sees is one nobody
// removes).
func TestForgedTimersListedInvalid(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ctx := context.Background()
	a.ok("wakeup.add", admin.WakeupRequest{Run: "good", Step: "s", Workflow: "w", When: "1h"}, nil)
	kv, err := a.js.KeyValue(ctx, "sched_wakeups")
	if err != nil {
		t.Fatal(err)
	}
	due := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	for key, value := range map[string]string{
		"junk.s":   `not json`,
		"victim.s": `{"run":"attacker","step":"s","workflow":"w","due":"` + due + `"}`,
	} {
		if _, err := kv.Put(ctx, key, []byte(value)); err != nil {
			t.Fatal(err)
		}
	}
	err = testwait.Until(10*time.Second, "the three timers listed", func() error {
		var pg admin.Page[admin.TimerItem]
		a.ok("wakeup.list", admin.WakeupListRequest{}, &pg)
		got := map[string]string{}
		for _, it := range pg.Items {
			got[it.Key] = it.Invalid
		}
		if len(got) != 3 || got["good.s"] != "" || got["junk.s"] == "" || !strings.Contains(got["victim.s"], "key") {
			return fmt.Errorf("listed %q", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
