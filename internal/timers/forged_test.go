package timers_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// invalidEvents collects the events on sched.event.invalid.>, by subject.
func (e *env) invalidEvents() func() map[string]kvstore.Event {
	return e.events("sched.event.invalid.>")
}

// forge writes value under key straight into sched_wakeups, as `nats kv
// put` would: no API, no validation.
func (e *env) forge(key string, value []byte) {
	e.t.Helper()
	ctx := context.Background()
	kv, err := e.js.KeyValue(ctx, "sched_wakeups")
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := kv.Put(ctx, key, value); err != nil {
		e.t.Fatalf("forge %s: %v", key, err)
	}
}

// forgeTimer is forge of a timer record.
func (e *env) forgeTimer(key string, t kvstore.Timer) {
	e.t.Helper()
	data, err := json.Marshal(t)
	if err != nil {
		e.t.Fatal(err)
	}
	e.forge(key, data)
}

// TestForgedTimersAreReportedNeverFired: timer records written straight
// into the bucket are validated as the API validates them. A wildcard
// workflow, a key that names another run, a run holding CR/LF, a payload
// nested 5,000 deep, a condition key in a bucket the scheduler was not
// configured for, and bytes that are no JSON at all: none is published;
// each gets a failed ledger entry and an invalid event saying "invalid
// record: <field>: <why>", and stays in the bucket for the operator. A
// valid timer beside them fires.
func TestForgedTimersAreReportedNeverFired(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	events := e.invalidEvents()
	secrets, err := e.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "tenant_b"})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "s3cr3t-value-of-another-tenant"
	if _, err := secrets.PutString(ctx, "k", secret); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	due := now.Add(-time.Second).UTC().Truncate(time.Millisecond)
	rec := func(run, step, workflow string) kvstore.Timer {
		return kvstore.Timer{Run: run, Step: step, Workflow: workflow, Due: due, Created: now.UTC()}
	}
	deep := rec("deep", "s", "wf")
	deep.Payload = json.RawMessage(strings.Repeat("[", 5000) + strings.Repeat("]", 5000))
	crlf := rec("r\r\nSched-Workflow: x", "s", "wf")
	other := rec("spy", "s", "wf")
	other.Condition, other.ConditionKey = "x", "tenant_b/k"
	audit := rec("auditspy", "s", "wf")
	audit.Condition, audit.ConditionKey = "x", "sched_audit_head/head"
	forged := []struct {
		key   string
		t     *kvstore.Timer // nil: junk bytes
		field string
	}{
		{kvstore.TimerKey("wild", "s"), ptr(rec("wild", "s", "a.>")), "workflow"},
		{kvstore.TimerKey("victim", "s"), ptr(rec("attacker", "s", "wf")), "key"},
		{kvstore.TimerKey(crlf.Run, "s"), &crlf, "run"},
		{kvstore.TimerKey("deep", "s"), &deep, "payload"},
		{kvstore.TimerKey("spy", "s"), &other, "condition_key"},
		{kvstore.TimerKey("auditspy", "s"), &audit, "condition_key"},
		{kvstore.TimerKey("star", "a*b"), ptr(rec("star", "a*b", "wf")), "step"},
		{kvstore.TimerKey("junk", "s"), nil, "timer"},
	}
	for _, f := range forged {
		if f.t == nil {
			e.forge(f.key, []byte(`{"run":"junk","step":"s",`))
			continue
		}
		e.forgeTimer(f.key, *f.t)
	}
	if _, err := e.client.Register(ctx, wakeupAt("ok", "s", "wf", now)); err != nil {
		t.Fatal(err)
	}
	e.start("a")
	testwait.Eventually(e.t, 15*time.Second, "the valid timer's wakeup", func() bool { return len(e.received()) == 1 })
	for _, f := range forged {
		slot := due
		if f.t == nil {
			slot = time.UnixMilli(0)
		}
		tick := e.tickOf(f.key, slot)
		want := "invalid record: " + f.field + ": "
		if tick.Status != kvstore.TickFailed || !strings.HasPrefix(tick.Reason, want) {
			t.Errorf("%s: tick %+v, want failed with reason %q...", f.key, tick, want)
		}
		if strings.Contains(tick.Reason, secret) {
			t.Errorf("%s: the ledger holds another bucket's value: %q", f.key, tick.Reason)
		}
		if n := e.published(kvstore.WakeupID(f.key, slot)); n != 0 {
			t.Errorf("%s: published %d times", f.key, n)
		}
		if _, err := e.store.GetTimer(ctx, f.key); f.t != nil && err != nil {
			t.Errorf("%s: the record is gone (%v); it stays for the operator", f.key, err)
		}
	}
	testwait.Eventually(e.t, 10*time.Second, "an invalid event per forged record", func() bool {
		got := events()
		for _, f := range forged {
			ev, ok := got["sched.event.invalid."+f.key]
			if !ok || ev.Field != f.field || !strings.HasPrefix(ev.Reason, "invalid record: "+f.field+": ") {
				return false
			}
			if strings.Contains(ev.Reason, secret) {
				t.Fatalf("%s: the event holds another bucket's value: %q", f.key, ev.Reason)
			}
		}
		return true
	})
	if n := e.streamMsgs(); n != 1 {
		t.Fatalf("%d messages in SCHED_WAKEUPS, want the valid timer's alone", n)
	}
}

// TestForgedTimerReplacedByAValidOneFires: the API replaces a forged
// record, and the valid one fires (a bad record blocks only itself).
func TestForgedTimerReplacedByAValidOneFires(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	now := time.Now()
	due := now.Add(-time.Second).UTC().Truncate(time.Millisecond)
	key := kvstore.TimerKey("r", "s")
	e.forgeTimer(key, kvstore.Timer{Run: "r", Step: "s", Workflow: "a.>", Due: due, Created: now.UTC()})
	e.start("a")
	if tick := e.tickOf(key, due); tick.Status != kvstore.TickFailed {
		t.Fatalf("forged record: tick %+v", tick)
	}
	if _, err := e.client.Register(ctx, wakeupAt("r", "s", "wf", now)); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(e.t, 15*time.Second, "the valid timer's wakeup", func() bool { return len(e.received()) == 1 })
}

// streamMsgs is how many messages SCHED_WAKEUPS holds.
func (e *env) streamMsgs() uint64 {
	e.t.Helper()
	s, err := e.js.Stream(context.Background(), "SCHED_WAKEUPS")
	if err != nil {
		e.t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return info.State.Msgs
}

func ptr[T any](v T) *T { return &v }

func wakeupAt(run, step, workflow string, at time.Time) wakeups.Request {
	return wakeups.Request{Run: run, Step: step, Workflow: workflow, At: at}
}
