package cli

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/internal/timers"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// cliConditionBuckets are the condition buckets the tests' admin API and
// scheduler read (--condition-buckets).
var cliConditionBuckets = []string{"runs", "missing"}

// startScheduler runs the fire engine (for the shard leases) and the
// wakeup engine on the env's store until the test ends.
func (e *env) startScheduler() {
	e.t.Helper()
	ctx := context.Background()
	fe, err := fires.New(fires.Config{Store: e.store, Instance: "cli-test", LeaseTTL: 2 * time.Second})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := fe.Start(ctx); err != nil {
		e.t.Fatal(err)
	}
	we, err := timers.New(timers.Config{Store: e.store, Owner: fe, Instance: "cli-test", ClaimTTL: 3 * time.Second,
		ConditionBuckets: cliConditionBuckets})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := we.Start(ctx); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { we.Stop(context.Background()); fe.Stop(context.Background()) })
}

// waitTick waits for a timer's ledger entry.
func (e *env) waitTick(key string, due time.Time) kvstore.Tick {
	e.t.Helper()
	var tick kvstore.Tick
	err := testwait.Until(15*time.Second, "the ledger entry of timer "+key, func() error {
		var err error
		tick, err = e.store.GetTick(context.Background(), kvstore.WakeupID(key, due))
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return tick
}

// TestWakeupConditionKey: `wakeup add --condition-key BUCKET/KEY
// --condition VALUE` against a real server: the key is checked at fire
// time (changed: stale, with the value found; kept: fired), a missing
// bucket or a missing --condition is refused with exit 2 naming the flag.
func TestWakeupConditionKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	js := e.store.JetStream()
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "runs"})
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{"order-1", "order-2"} {
		if _, err := kv.PutString(ctx, run, "awaiting_approval"); err != nil {
			t.Fatal(err)
		}
	}
	due := time.Now().Add(1500 * time.Millisecond).UTC().Truncate(time.Second).Add(time.Second)
	for _, run := range []string{"order-1", "order-2"} {
		code, out, errOut := e.run("wakeup", "add", "--run", run, "--step", "escalate", "--workflow", "approvals",
			"--at", due.Format(time.RFC3339), "--condition", "awaiting_approval", "--condition-key", "runs/"+run)
		if code != ExitOK || !strings.Contains(out, "timer "+run+"/escalate due") {
			t.Fatalf("add %s: exit %d: %s %s", run, code, out, errOut)
		}
	}
	code, out, _ := e.run("wakeup", "ls", "--json")
	if code != ExitOK || strings.Count(out, `"condition_key": "runs/order-`) != 2 {
		t.Fatalf("ls --json: exit %d\n%s", code, out)
	}
	for _, bad := range []struct {
		args []string
		says string
	}{
		{[]string{"--condition", "x", "--condition-key", "missing/order-1"}, `--condition-key: invalid condition_key "missing/order-1": no KV bucket "missing"`},
		{[]string{"--condition", "x", "--condition-key", "other/order-1"}, `bucket "other" is not a condition bucket of this scheduler (it reads runs, missing;`},
		{[]string{"--condition-key", "runs/order-1"}, "--condition-key: give --condition"},
		{[]string{"--condition", "x", "--condition-key", "runs"}, "--condition-key \"runs\": want BUCKET/KEY"},
	} {
		args := append([]string{"wakeup", "add", "--run", "r", "--step", "s", "--workflow", "wf", "--when", "1h"}, bad.args...)
		code, out, errOut := e.run(args...)
		if code != ExitInvalid || !strings.Contains(errOut, bad.says) || out != "" {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 saying %q", bad.args, code, errOut, bad.says)
		}
	}

	if _, err := kv.PutString(ctx, "order-1", "approved"); err != nil {
		t.Fatal(err)
	}
	e.startScheduler()
	if tick := e.waitTick(kvstore.TimerKey("order-1", "escalate"), due); tick.Status != kvstore.TickStale ||
		!strings.HasPrefix(tick.Reason, `condition runs/order-1 holds another value than "awaiting_approval" (revision `) {
		t.Fatalf("order-1 (approved): %+v", tick)
	}
	if tick := e.waitTick(kvstore.TimerKey("order-2", "escalate"), due); tick.Status != kvstore.TickFired {
		t.Fatalf("order-2 (still awaiting): %+v", tick)
	}
}

// TestWakeupWhenExpr: `wakeup add --when-expr EXPR --payload JSON` keeps
// the expression in the record with the due time it gave; a bad
// expression is refused before connecting with its line and column, and a
// result that is no time or in the past by the API, exit 2 / code invalid
// on field when_expr.
func TestWakeupWhenExpr(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	dueAt := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	code, out, errOut := e.run("wakeup", "add", "--run", "order-7", "--step", "remind", "--workflow", "approvals",
		"--payload", `{"due_at":"`+dueAt.Format(time.RFC3339)+`"}`, "--when-expr", `date(payload.due_at) - duration("24h")`)
	if code != ExitOK {
		t.Fatalf("add: exit %d: %s %s", code, out, errOut)
	}
	ent, err := e.store.GetTimer(ctx, kvstore.TimerKey("order-7", "remind"))
	if err != nil || !ent.Timer.Due.Equal(dueAt.Add(-24*time.Hour)) || ent.Timer.WhenExpr != `date(payload.due_at) - duration("24h")` {
		t.Fatalf("stored %+v, %v", ent.Timer, err)
	}
	for _, bad := range []struct {
		expr, says string
	}{
		{`date(payload.due_at) +`, `--when-expr: when_expr "date(payload.due_at) +": line 1, column 22: unexpected token EOF`},
		{`payload.n * 2`, `--when-expr: invalid when_expr: when_expr "payload.n * 2": gives a number (6), not a time`},
		{`now - duration("1h")`, `is in the past`},
		{`addWorking(now, "8h")`, `needs the timer's calendar`},
	} {
		code, out, errOut := e.run("wakeup", "add", "--run", "bad", "--step", "s", "--workflow", "wf", "--payload", `{"n":3}`, "--when-expr", bad.expr)
		if code != ExitInvalid || !strings.Contains(errOut, bad.says) || out != "" {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 saying %q", bad.expr, code, errOut, bad.says)
		}
	}
	// The API answers invalid, naming the field.
	nc, err := nats.Connect(e.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	req, _ := json.Marshal(map[string]any{"run": "r", "step": "s", "workflow": "wf", "when_expr": `"soon"`})
	msg, err := nc.Request("sched.api.wakeup.add", req, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var apiErr struct{ Code, Field, Message string }
	if err := json.Unmarshal(msg.Data, &apiErr); err != nil || apiErr.Code != "invalid" || apiErr.Field != "when_expr" {
		t.Fatalf("API answer %s (%v)", msg.Data, err)
	}
	if _, err := e.store.GetTimer(ctx, kvstore.TimerKey("bad", "s")); !errors.Is(err, kvstore.ErrNotFound) {
		t.Fatalf("a refused timer was stored: %v", err)
	}
}

// TestWakeupPreview: the seed's Friday 17:00 + 48 working hours with both
// calendars of docs/calendar.md (one stored and read through the API, one
// a local file), a count over a holiday, an expression, and bad input.
func TestWakeupPreview(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if code, _, errOut := e.run("calendar", "put", "fullweek",
		writeFile(t, "full.json", `{"zone": "America/New_York", "hours": {"mon-fri": ["00:00-24:00"]}}`)); code != ExitOK {
		t.Fatalf("calendar put: %s", errOut)
	}
	nineToSix := writeFile(t, "nine-to-six.json", `{"zone": "America/New_York"}`)
	us := writeFile(t, "us.json", `{"zone": "America/New_York", "weekend": ["sat", "sun"],
		"holidays": [{"name": "Thanksgiving", "month": 11, "weekday": "thu", "nth": 4}]}`)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"full working weekdays, stored", []string{"--from", "2026-12-04T17:00:00-05:00", "--when", "48 whours", "--calendar", "fullweek", "--explain"}, `2026-12-08T17:00:00-05:00
from      2026-12-04T17:00:00-05:00 Fri
form      48 whours (working)
worked    2026-12-04 Fri 17:00-24:00  7h
skipped   2026-12-05 Sat  no working hours on Saturday
skipped   2026-12-06 Sun  no working hours on Sunday
worked    2026-12-07 Mon 00:00-24:00  24h
worked    2026-12-08 Tue 00:00-17:00  17h
total     48h of working time
due       2026-12-08T17:00:00-05:00 Tue (4d after from)
`},
		{"default hours, a file", []string{"--from", "2026-12-04T17:00:00-05:00", "--when", "48 whours", "--calendar", nineToSix}, "2026-12-14T11:00:00-05:00\n"},
		{"over Thanksgiving", []string{"--from", "2026-11-25T16:00:00-05:00", "--when", "4 whours", "--calendar", us, "--explain"}, `2026-11-27T11:00:00-05:00
from      2026-11-25T16:00:00-05:00 Wed
form      4 whours (working)
worked    2026-11-25 Wed 16:00-18:00  2h
skipped   2026-11-26 Thu  holiday "Thanksgiving" (4th Thursday of November)
worked    2026-11-27 Fri 09:00-11:00  2h
total     4h of working time
due       2026-11-27T11:00:00-05:00 Fri (1d19h after from)
`},
		{"working days", []string{"--from", "2026-11-25T10:00:00-05:00", "--when", "2 wdays", "--calendar", us, "--explain"}, `2026-11-30T10:00:00-05:00
from      2026-11-25T10:00:00-05:00 Wed
form      2 wdays (working)
skipped   2026-11-26 Thu  holiday "Thanksgiving" (4th Thursday of November)
counted   2026-11-27 Fri  working day 1
skipped   2026-11-28 Sat  no working hours on Saturday
skipped   2026-11-29 Sun  no working hours on Sunday
counted   2026-11-30 Mon  working day 2
due       2026-11-30T10:00:00-05:00 Mon (5d after from)
`},
		{"time of day in a zone", []string{"--from", "2026-12-04T03:00:00+01:00", "--when", "02:00", "--zone", "Europe/Paris"}, "2026-12-05T02:00:00+01:00\n"},
		{"expression", []string{"--from", "2026-12-04T17:00:00-05:00", "--when-expr", `addWorking(now, "2h")`, "--calendar", nineToSix, "--explain"}, `2026-12-07T10:00:00-05:00
from      2026-12-04T17:00:00-05:00 Fri
expr      addWorking(now, "2h")
call      addWorking(2026-12-04T17:00:00-05:00, 2h)
worked    2026-12-04 Fri 17:00-18:00  1h
skipped   2026-12-05 Sat  no working hours on Saturday
skipped   2026-12-06 Sun  no working hours on Sunday
worked    2026-12-07 Mon 09:00-10:00  1h
total     2h of working time
due       2026-12-07T10:00:00-05:00 Mon (2d17h after from)
`},
		{"expression over the payload", []string{"--from", "2026-12-01T00:00:00Z", "--when-expr", `date(payload.due_at) - duration("24h")`,
			"--payload", `{"due_at":"2026-12-31T17:00:00Z"}`}, "2026-12-30T17:00:00Z\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := e.run(append([]string{"wakeup", "preview"}, tt.args...)...)
			if code != ExitOK || out != tt.want {
				t.Fatalf("exit %d, stderr %s\ngot:\n%s\nwant:\n%s", code, errOut, out, tt.want)
			}
		})
	}
	code, out, _ := e.run("wakeup", "preview", "--from", "2026-12-04T17:00:00-05:00", "--when", "2 whours", "--calendar", "fullweek", "--explain", "--json")
	var got wakeupPreviewOut
	if code != ExitOK || json.Unmarshal([]byte(out), &got) != nil || len(got.Counts) != 1 || len(got.Counts[0].Intervals) != 1 ||
		!got.Due.Equal(time.Date(2026, 12, 4, 19, 0, 0, 0, time.FixedZone("EST", -5*3600))) {
		t.Fatalf("--json: exit %d\n%s", code, out)
	}
	for _, bad := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--when", "2001-01-01"}, ExitInvalid, "--when: when \"2001-01-01\": is in the past"},
		{[]string{"--when", "48 whours"}, ExitInvalid, "working time needs a calendar"},
		{[]string{"--when", "1h", "--when-expr", "now"}, ExitInvalid, "give exactly one"},
		{[]string{"--when-expr", "now +"}, ExitInvalid, "line 1, column 5"},
		{[]string{"--when", "1h", "--from", "yesterday"}, ExitInvalid, "--from"},
		{[]string{"--when", "1h", "--zone", "Mars/Base"}, ExitInvalid, "--zone"},
		{[]string{"--when", "1 wday", "--calendar", "nope"}, ExitInvalid, `not found: calendar "nope"`},
	} {
		code, out, errOut := e.run(append([]string{"wakeup", "preview"}, bad.args...)...)
		if code != bad.code || !strings.Contains(errOut, bad.says) || out != "" {
			t.Errorf("%v: exit %d, stderr %q; want exit %d saying %q", bad.args, code, errOut, bad.code, bad.says)
		}
	}
}
