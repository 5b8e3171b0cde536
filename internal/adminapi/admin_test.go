package adminapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/jetsched/jetsched/internal/daemon/daemontest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/testwait"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// call sends a request and returns the body, or the error code and body.
func call(t *testing.T, nc *nats.Conn, subject string, req any) (json.RawMessage, string) {
	t.Helper()
	data, _ := json.Marshal(req)
	msg, err := nc.Request(subject, data, 10*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	return msg.Data, msg.Header.Get("Nats-Service-Error-Code")
}

func TestAdminAPI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := daemon.Start(ctx, daemon.Config{Embedded: true, Listen: "127.0.0.1:0", DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer daemontest.Stop(t, d)
	nc, err := nats.Connect(d.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()

	body, code := call(t, nc, "sched.api.schedule.create", map[string]any{"id": "rep", "spec": map[string]any{"workflow": "reports", "cron": "0 9 * * 1-5", "tz": "Europe/Paris"}})
	if code != "" || !strings.Contains(string(body), `"revision"`) {
		t.Fatalf("create: %s %s", code, body)
	}
	body, code = call(t, nc, "sched.api.schedule.create", map[string]any{"id": "bad", "spec": map[string]any{"workflow": "reports", "cron": "0 25 * * *"}})
	var e admin.Error
	if code != "invalid" || json.Unmarshal(body, &e) != nil || e.Field != "cron" {
		t.Fatalf("invalid create: %s %s", code, body)
	}
	body, code = call(t, nc, "sched.api.schedule.get", map[string]any{"id": "nope"})
	if code != "not_found" {
		t.Fatalf("get unknown: %s %s", code, body)
	}
	// Wait for the scheduler to plan it, then operate it.
	err = testwait.Until(10*time.Second, "schedule rep planned", func() error {
		body, _ = call(t, nc, "sched.api.schedule.get", map[string]any{"id": "rep"})
		var info admin.ScheduleInfo
		if json.Unmarshal(body, &info) != nil || info.State == nil {
			return fmt.Errorf("get: %s", body)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		subject string
		req     any
	}{
		{"sched.api.schedule.pause", map[string]any{"id": "rep", "note": "audit"}},
		{"sched.api.schedule.resume", map[string]any{"id": "rep"}},
		{"sched.api.schedule.trigger", map[string]any{"id": "rep"}},
		{"sched.api.schedule.skip", map[string]any{"id": "rep", "count": 1}},
		{"sched.api.schedule.history", map[string]any{"id": "rep"}},
		{"sched.api.schedule.account", map[string]any{"id": "rep"}},
		{"sched.api.status", nil},
		{"sched.api.schedule.list", nil},
		{"sched.api.calendar.put", map[string]any{"name": "fr", "calendar": map[string]any{"zone": "Europe/Paris"}}},
		{"sched.api.calendar.get", map[string]any{"name": "fr"}},
		{"sched.api.calendar.list", nil},
		{"sched.api.wakeup.add", map[string]any{"run": "order.1", "step": "esc", "workflow": "approvals", "when": "1h"}},
		{"sched.api.wakeup.list", map[string]any{"run": "order.1"}},
		{"sched.api.wakeup.cancel", map[string]any{"run": "order.1", "step": "esc"}},
		{"sched.api.calendar.delete", map[string]any{"name": "fr"}},
		{"sched.api.schedule.delete", map[string]any{"id": "rep"}},
	} {
		if body, code := call(t, nc, c.subject, c.req); code != "" {
			t.Fatalf("%s: %s %s", c.subject, code, body)
		}
	}
	if body, code := call(t, nc, "sched.api.schedule.get", map[string]any{"idd": "x"}); code != "invalid" {
		t.Fatalf("unknown request field: %s %s", code, body)
	}
	// The service is discoverable.
	msg, err := nc.Request("$SRV.INFO.jetsched", nil, 5*time.Second)
	if err != nil || !strings.Contains(string(msg.Data), "sched.api.schedule.create") {
		t.Fatalf("$SRV.INFO: %v %s", err, msg.Data)
	}
}
