package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/cli"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/daemon/daemontest"
	"github.com/jetsched/jetsched/internal/eventfilter"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/staticfile"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestReAddFiredOneShot: services re-register at every boot; a one-shot
// that has fired, added again with the same flags, is unchanged (exit 0),
// not "in the past".
func TestReAddFiredOneShot(t *testing.T) {
	d := startDaemon(t, daemon.Config{})
	run := cliRunner(d)
	at := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
	args := []string{"schedule", "add", "--id", "launch", "--workflow", "notify", "--at", at}
	if code, _, errOut := run(args...); code != cli.ExitOK {
		t.Fatalf("add: exit %d: %s", code, errOut)
	}
	testwait.Eventually(t, 15*time.Second, "the one-shot launch fired once and ended", func() bool {
		_, out, _ := run("schedule", "get", "launch", "--json")
		var v admin.ScheduleInfo
		return json.Unmarshal([]byte(out), &v) == nil && v.State != nil && v.State.Ended && v.State.Fires == 1
	})
	code, out, errOut := run(args...)
	if code != cli.ExitOK || !strings.HasPrefix(out, "schedule launch unchanged (revision ") {
		t.Fatalf("the same add after the fire: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	later := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	if code, _, errOut := run("schedule", "add", "--id", "launch", "--workflow", "notify", "--at", later); code != cli.ExitInvalid || !strings.Contains(errOut, "--at: ") || !strings.Contains(errOut, "in the past") {
		t.Fatalf("moving it into the past: exit %d, stderr %q", code, errOut)
	}
}

// startAt runs a scheduler on its own embedded server storing in dir, so
// that a test can stop it and start another on the same data.
func startAt(t *testing.T, dir string, cfg daemon.Config) *daemon.Daemon {
	t.Helper()
	cfg.Embedded, cfg.Listen, cfg.DataDir = true, "127.0.0.1:0", dir
	d, err := daemon.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestStaticScheduleFile: run --schedules creates the file's schedules
// marked static, the API and CLI refuse to put or remove them while pause
// and trigger work, and the next start with a changed file updates what
// changed and removes what left it, leaving dynamic schedules alone.
func TestStaticScheduleFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "billing.yaml")
	write := func(content string) []jsstore.StaticSet {
		t.Helper()
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		sets, err := staticfile.LoadAll([]string{file})
		if err != nil {
			t.Fatal(err)
		}
		return sets
	}
	v1 := write(`schedules:
  - id: nightly
    workflow: report
    cron: "0 2 * * *"
    tz: Europe/Paris
  - workflow: cleanup
    every: 1h
    input: {olderThanDays: 30}
`)
	cleanup := v1[0].Schedules[1].ID
	data := filepath.Join(dir, "data")
	d := startAt(t, data, daemon.Config{Static: v1})
	stopped := false
	defer func() {
		if !stopped {
			daemontest.Stop(t, d)
		}
	}()
	run := cliRunner(d)
	var v admin.ScheduleInfo
	code, out, _ := run("schedule", "get", "nightly", "--json")
	if code != cli.ExitOK || json.Unmarshal([]byte(out), &v) != nil || v.Spec.Static != "billing.yaml" || v.Spec.Cron != "0 2 * * *" {
		t.Fatalf("nightly after start: exit %d, %s", code, out)
	}
	for _, args := range [][]string{
		{"schedule", "add", "--id", "nightly", "--workflow", "report", "--cron", "0 3 * * *"},
		{"schedule", "rm", cleanup},
	} {
		code, _, errOut := run(args...)
		if code != cli.ExitInvalid || !strings.Contains(errOut, "is static: declared in billing.yaml") {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	if code, _, errOut := run("schedule", "pause", "nightly", "--note", "month end"); code != cli.ExitOK {
		t.Fatalf("pause: %s", errOut)
	}
	if code, _, errOut := run("schedule", "add", "--id", "mine", "--workflow", "w", "--cron", "0 4 * * *"); code != cli.ExitOK {
		t.Fatalf("a dynamic schedule: %s", errOut)
	}
	testwait.Eventually(t, 15*time.Second, "the trigger of the cleanup schedule accepted", func() bool {
		code, _, _ := run("schedule", "trigger", cleanup)
		return code == cli.ExitOK // refused until a scheduler planned it
	})
	testwait.Eventually(t, 15*time.Second, "the triggered slot dispatched", func() bool {
		_, h, _ := run("schedule", "history", cleanup)
		return strings.Contains(h, "trigger-") && strings.Contains(h, "dispatched")
	})
	daemontest.Stop(t, d)
	stopped = true

	v2 := write(`schedules:
  - id: nightly
    workflow: report
    cron: "0 1 * * *"
    tz: Europe/Paris
`)
	d2 := startAt(t, data, daemon.Config{Static: v2})
	defer daemontest.Stop(t, d2)
	ctx := context.Background()
	e, err := d2.Store().GetSpec(ctx, "nightly")
	if err != nil || e.Spec.Cron != "0 1 * * *" || e.Spec.Static != "billing.yaml" {
		t.Fatalf("nightly after the second start: %+v, %v", e.Spec, err)
	}
	if _, err := d2.Store().GetSpec(ctx, cleanup); !kvstoreNotFound(err) {
		t.Fatalf("%s left the file but is still there: %v", cleanup, err)
	}
	if _, err := d2.Store().GetSpec(ctx, "mine"); err != nil {
		t.Fatalf("the dynamic schedule was touched: %v", err)
	}
	st, _, err := d2.Store().GetState(ctx, "nightly")
	if err != nil || st.Paused == nil || st.Paused.Note != "month end" {
		t.Fatalf("the pause did not survive the file's update: %+v, %v", st.Paused, err)
	}
}

func kvstoreNotFound(err error) bool {
	return err != nil && strings.Contains(usererr.Message(err), "not found: schedule")
}

// TestFiredEvents: run --events default,fired publishes a fired event for
// each fire once the stream acknowledged it: slot, scheduled time in the
// schedule's zone, dispatched time and the stream sequence, which hold
// the fire message. Per slot and in a window: a window's event gave the
// time of the acknowledgement as its dispatched time, not the message's
// (a first slot goes into a window when the start's shard checks keep
// --window-busy workers busy, so this failed now and then).
func TestFiredEvents(t *testing.T) {
	for _, tc := range []struct {
		name       string
		windowBusy int
	}{
		{"per slot", 1000}, // never that many busy workers
		{"in a window", -1},
	} {
		t.Run(tc.name, func(t *testing.T) { testFiredEvents(t, tc.windowBusy) })
	}
}

func testFiredEvents(t *testing.T, windowBusy int) {
	events, err := eventfilter.Parse("default,fired")
	if err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemon.Config{Fire: fires.Config{Events: events, WindowBusy: windowBusy}})
	nc, err := nats.Connect(d.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("sched.event.fired.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	run := cliRunner(d)
	if code, _, errOut := run("schedule", "add", "--id", "tick", "--workflow", "w", "--every", "1s", "--tz", "Europe/Paris"); code != cli.ExitOK {
		t.Fatal(errOut)
	}
	msg, err := sub.NextMsg(15 * time.Second)
	if err != nil {
		t.Fatalf("no fired event: %v", err)
	}
	if msg.Subject != "sched.event.fired.tick" {
		t.Fatalf("subject %s", msg.Subject)
	}
	var ev kvstore.Event
	if err := json.Unmarshal(msg.Data, &ev); err != nil {
		t.Fatal(err)
	}
	paris, _ := time.LoadLocation("Europe/Paris")
	_, wantOff := ev.Slot.In(paris).Zone()
	_, off := ev.ScheduledAt.Zone()
	switch {
	case ev.Kind != kvstore.EventFired || ev.Schedule != "tick" || ev.Workflow != "w":
		t.Fatalf("event %s", msg.Data)
	case ev.SlotID != kvstore.SlotID("tick", ev.Slot) || !ev.ScheduledAt.Equal(ev.Slot) || off != wantOff:
		t.Fatalf("slot id %s, slot %v, scheduled at %v (offset %d, want %d)", ev.SlotID, ev.Slot, ev.ScheduledAt, off, wantOff)
	case ev.DispatchedAt.Before(ev.Slot) || ev.Stream != "SCHED_FIRES" || ev.Seq == 0:
		t.Fatalf("event %s", msg.Data)
	}
	stream, err := d.JetStream().Stream(context.Background(), "SCHED_FIRES")
	if err != nil {
		t.Fatal(err)
	}
	fired, err := stream.GetMsg(context.Background(), ev.Seq)
	if err != nil {
		t.Fatal(err)
	}
	if fired.Header.Get("Nats-Msg-Id") != ev.SlotID || fired.Header.Get(kvstore.HeaderScheduledAt) != ev.ScheduledAt.Format(time.RFC3339Nano) ||
		fired.Header.Get(kvstore.HeaderDispatchedAt) != ev.DispatchedAt.Format(time.RFC3339Nano) {
		t.Fatalf("message at sequence %d: %v; event %s", ev.Seq, fired.Header, msg.Data)
	}
}
