package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/slotid"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// must runs a command that must exit 0 and returns its stdout and stderr.
func (e *env) must(args ...string) (string, string) {
	e.t.Helper()
	code, out, errOut := e.run(args...)
	if code != ExitOK {
		e.t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	return out, errOut
}

// refused runs a command that must exit with code and name want on one
// line of stderr.
func (e *env) refused(code int, want string, args ...string) {
	e.t.Helper()
	got, out, errOut := e.run(args...)
	if got != code || !strings.Contains(errOut, want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		e.t.Fatalf("%v: exit %d, stderr %q (stdout %q); want exit %d naming %q", args, got, errOut, out, code, want)
	}
}

func TestListingsPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := range 7 {
		wf := []string{"even", "odd"}[i%2]
		e.must("schedule", "add", "--id", fmt.Sprintf("job-%d", i), "--workflow", wf, "--every", "1h")
	}
	out, errOut := e.must("schedule", "ls", "--limit", "3")
	if strings.Count(out, "job-") != 3 || !strings.Contains(errOut, "3 of 7 schedules shown; next page: --cursor job-2") {
		t.Fatalf("ls --limit 3:\n%s%s", out, errOut)
	}
	out, _ = e.must("schedule", "ls", "--limit", "3", "--cursor", "job-2")
	if !strings.Contains(out, "job-3") || strings.Contains(out, "job-2") {
		t.Fatalf("ls --cursor job-2:\n%s", out)
	}
	out, errOut = e.must("schedule", "ls", "--limit", "2", "--all")
	if strings.Count(out, "job-") != 7 || strings.Count(out, "WORKFLOW") != 1 || errOut != "" {
		t.Fatalf("ls --all: the header once and 7 rows, nothing on stderr:\n%s%s", out, errOut)
	}
	out, _ = e.must("schedule", "ls", "--limit", "2", "--all", "--json", "--workflow", "odd")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("ls --all --json --workflow odd: %d lines, want 3 JSON lines:\n%s", len(lines), out)
	}
	for _, l := range lines {
		var v admin.ScheduleInfo
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.Spec.Workflow != "odd" {
			t.Fatalf("line %q: %v", l, err)
		}
	}
	out, _ = e.must("schedule", "ls", "--json", "--prefix", "job-1")
	var pg admin.Page[admin.ScheduleInfo]
	if err := json.Unmarshal([]byte(out), &pg); err != nil || pg.Total != 1 || pg.Items[0].ID != "job-1" {
		t.Fatalf("ls --json --prefix job-1: %v\n%s", err, out)
	}
	e.must("schedule", "pause", "job-4", "--note", "audit")
	out, _ = e.must("status", "--state", "paused")
	if !strings.Contains(out, "7 schedules: 0 active, 6 planned, 1 paused, 0 ended, 0 invalid") || !strings.Contains(out, "job-4") || strings.Contains(out, "job-3") {
		t.Fatalf("status --state paused:\n%s", out)
	}
	out, _ = e.must("status", "--all", "--json", "--limit", "5")
	if n := strings.Count(strings.TrimSpace(out), "\n") + 1; n != 7 || !strings.Contains(out, `"state":"paused"`) {
		t.Fatalf("status --all --json: %d lines:\n%s", n, out)
	}
	for _, c := range [][]string{
		{"schedule", "ls", "--limit", "0"},
		{"schedule", "ls", "--limit", "1001"},
		{"status", "--state", "asleep"},
		{"schedule", "ls", "--cursor", "a b"},
		{"wakeup", "ls", "--limit", "-1"},
	} {
		code, _, errOut := e.run(c...)
		if code != ExitInvalid || !strings.Contains(errOut, "--") {
			t.Fatalf("%v: exit %d: %s", c, code, errOut)
		}
	}

	for i := range 3 {
		e.must("wakeup", "add", "--run", "order-1", "--step", fmt.Sprintf("s%d", i), "--workflow", "approvals", "--when", "1h")
	}
	out, errOut = e.must("wakeup", "ls", "--limit", "2")
	if strings.Count(out, "order-1") != 2 || !strings.Contains(errOut, "2 of 3 timers shown") {
		t.Fatalf("wakeup ls --limit 2:\n%s%s", out, errOut)
	}
	e.must("calendar", "put", "us", writeFile(t, "us.json", usCalendar))
	if out, _ = e.must("calendar", "ls"); !strings.Contains(out, "America/New_York") {
		t.Fatalf("calendar ls:\n%s", out)
	}
	for i := range 3 {
		if err := e.store.PutTick(t.Context(), kvstore.Tick{Schedule: "job-0", Slot: time.Date(2026, 1, 1, i, 0, 0, 0, time.UTC), Status: kvstore.TickCompleted}); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut = e.must("schedule", "history", "job-0", "--limit", "2")
	if strings.Index(out, "T02:00") > strings.Index(out, "T01:00") || strings.Contains(out, "T00:00") || !strings.Contains(errOut, "2 of 3 slots shown") {
		t.Fatalf("history, newest first:\n%s%s", out, errOut)
	}
	if out, _ = e.must("schedule", "history", "job-0", "--oldest-first", "--all", "--limit", "1"); strings.Index(out, "T00:00") > strings.Index(out, "T02:00") {
		t.Fatalf("history --oldest-first --all:\n%s", out)
	}
}

// TestConflictsExit3: create-only on a taken id, a stale --if-revision on
// add and rm exit 3 and change nothing.
func TestConflictsExit3(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// An explicit anchor: a new interval is otherwise anchored at now, and
	// the two adds may fall in different seconds (an anchor change listed).
	anchor := []string{"--anchor", "2026-01-01T00:00:00Z"}
	e.must(append([]string{"schedule", "add", "--id", "c", "--workflow", "w", "--every", "1m"}, anchor...)...)
	// Another schedule under a taken id is not replaced silently.
	e.refused(ExitConflict, "would change every \"1m\" -> \"2m\"; nothing was written: add --replace", append([]string{"schedule", "add", "--id", "c", "--workflow", "w", "--every", "2m"}, anchor...)...)
	e.must("schedule", "add", "--id", "c", "--workflow", "w", "--every", "2m", "--replace")
	out, _ := e.must("schedule", "get", "c")
	if !strings.Contains(out, "revision:") {
		t.Fatalf("get does not show the revision:\n%s", out)
	}
	e.refused(ExitConflict, "exists", "schedule", "add", "--id", "c", "--workflow", "w", "--every", "3m", "--create-only")
	e.refused(ExitConflict, "not 1", "schedule", "add", "--id", "c", "--workflow", "w", "--every", "3m", "--if-revision", "1", "--replace")
	e.refused(ExitInvalid, "--if-revision applies to --replace", "schedule", "add", "--id", "c", "--workflow", "w", "--every", "3m", "--if-revision", "1")
	e.refused(ExitConflict, "not 1", "schedule", "rm", "c", "--if-revision", "1")
	e.refused(ExitNotFound, `not found: schedule "d"`, "schedule", "add", "--id", "d", "--workflow", "w", "--every", "3m", "--if-revision", "1", "--replace")
	e.refused(ExitInvalid, "--create-only", "schedule", "add", "--id", "c", "--workflow", "w", "--every", "3m", "--create-only", "--upsert")
	stored, err := e.store.GetSpec(t.Context(), "c")
	if err != nil || stored.Spec.Every != "2m" {
		t.Fatalf("after refused writes: %+v %v", stored.Spec, err)
	}
	e.must("schedule", "add", "--id", "c", "--workflow", "w", "--every", "3m", "--if-revision", fmt.Sprint(stored.Revision), "--replace")
	stored, _ = e.store.GetSpec(t.Context(), "c")
	if stored.Spec.Every != "3m" {
		t.Fatalf("after --replace --if-revision: %+v", stored.Spec)
	}
	e.must("schedule", "rm", "c", "--if-revision", fmt.Sprint(stored.Revision))
	e.must("schedule", "add", "--id", "c", "--workflow", "w", "--every", "3m", "--create-only")
}

// TestEdgeLimits: values over the caps, and other bad values of point 9,
// exit 2 naming the flag before anything is sent.
func TestEdgeLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must("schedule", "add", "--id", "s", "--workflow", "w", "--every", "1s")
	huge := writeFile(t, "huge.json", `"`+strings.Repeat("x", 1<<20+100)+`"`) // over NATS's max payload
	big := writeFile(t, "big.json", `"`+strings.Repeat("x", kvstore.MaxInputBytes)+`"`)
	note := strings.Repeat("n", kvstore.MaxNoteBytes+1)
	past := time.Now().Add(-time.Hour).UTC()
	for _, c := range []struct {
		want string
		args []string
	}{
		{"--input", []string{"schedule", "add", "--id", "h", "--workflow", "w", "--every", "1s", "--input", "@" + huge}},
		{"--input", []string{"schedule", "add", "--id", "h", "--workflow", "w", "--every", "1s", "--input", "@" + big}},
		{"--input", []string{"schedule", "add", "--id", "h", "--workflow", "w", "--every", "1s", "--input", `{"a":1,"a":2}`}},
		{"--description", []string{"schedule", "add", "--id", "h", "--workflow", "w", "--every", "1s", "--description", note}},
		{"--payload", []string{"wakeup", "add", "--run", "r", "--step", "s", "--workflow", "w", "--when", "1h", "--payload", "@" + huge}},
		{"--expire-after", []string{"wakeup", "add", "--run", "r", "--step", "s", "--workflow", "w", "--when", "1h", "--expire-after=-1s"}},
		{"--condition", []string{"wakeup", "add", "--run", "r", "--step", "s", "--workflow", "w", "--when", "1h", "--condition", note}},
		{"--note", []string{"schedule", "pause", "s", "--note", note}},
		{"--note", []string{"schedule", "trigger", "s", "--note", note}},
		{"--note", []string{"schedule", "backfill", "s", "--from", past.Add(-time.Minute).Format(time.RFC3339), "--to", past.Format(time.RFC3339), "--note", note}},
		{"--count", []string{"schedule", "skip", "s", "--count", "-5"}},
		{"--to", []string{"schedule", "backfill", "s", "--from", past.Add(-24 * time.Hour).Format(time.RFC3339), "--to", past.Format(time.RFC3339)}},
	} {
		e.refused(ExitInvalid, c.want, c.args...)
	}
	if _, err := e.store.GetSpec(t.Context(), "h"); err == nil {
		t.Fatal("a refused schedule was written")
	}
	st, _, err := e.store.GetState(t.Context(), "s")
	if err == nil && (st.Paused != nil || len(st.Triggers) > 0 || st.Backfill != nil || st.SkipNext != 0) {
		t.Fatalf("refused operator actions changed the state: %+v", st)
	}

	from, to := past.Add(-9*time.Second).Truncate(time.Second), past.Truncate(time.Second)
	out, _ := e.must("schedule", "backfill", "s", "--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339), "--rate", "1")
	if !strings.Contains(out, "backfill of 10 slots") {
		t.Fatalf("backfill:\n%s", out)
	}
	if out, _ = e.must("schedule", "get", "s"); !strings.Contains(out, "0/10 slots at 1/s") {
		t.Fatalf("get shows no backfill progress:\n%s", out)
	}
	if out, _ = e.must("schedule", "backfill", "--cancel", "s"); !strings.Contains(out, "cancelled after 0 of 10 slots") {
		t.Fatalf("backfill --cancel:\n%s", out)
	}
	e.refused(ExitNotFound, `not found: backfill in progress for schedule "s"`, "schedule", "backfill", "--cancel", "s")
}

// TestHistoryOfExtraSlots (issue 51): the ledger entry of a trigger's or a
// backfill's slot that a worker completed, as schedulers before the fix
// wrote it (at the zero time), is listed at its slot's time, text and
// --json, one row per slot with the worker's outcome; never year 0001.
func TestHistoryOfExtraSlots(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	js := e.store.JetStream()
	base := time.UnixMilli(1_800_000_000_000).UTC() // 2027-01-15T08:00:00Z
	trigger := slotid.Extra("z", "trigger", base.Add(1500*time.Millisecond))
	backfill := slotid.Extra("z", "backfill", base.Add(-time.Hour))
	natstest.PublishFire(t, js, natstest.Fire{Schedule: "z", Workflow: "wf", SlotID: trigger, At: base.Add(1500 * time.Millisecond),
		Reason: kvstore.ReasonTrigger, Instance: "i1"})
	natstest.PutZeroSlotTick(t, js, "z", trigger)
	natstest.PutZeroSlotTick(t, js, "z", backfill)
	out, _ := e.must("schedule", "history", "z")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || strings.Contains(out, "0001-") ||
		!strings.HasPrefix(lines[1], "2027-01-15T08:00:01.500Z (trigger-1800000001500)") || !strings.Contains(lines[1], "completed") || !strings.Contains(lines[1], "w1") ||
		!strings.HasPrefix(lines[2], "2027-01-15T07:00:00.000Z (backfill-1799996400000)") || !strings.Contains(lines[2], "completed") {
		t.Fatalf("history: want a header, the trigger then the backfill at their slots' times, completed by w1:\n%s", out)
	}
	out, _ = e.must("schedule", "history", "z", "--json")
	var pg admin.Page[admin.HistoryItem]
	if err := json.Unmarshal([]byte(out), &pg); err != nil || strings.Contains(out, "0001-") || len(pg.Items) != 2 {
		t.Fatalf("history --json: %v\n%s", err, out)
	}
	for i, want := range []time.Time{base.Add(1500 * time.Millisecond), base.Add(-time.Hour)} {
		if it := pg.Items[i]; !it.Slot.Equal(want) || it.Status != kvstore.TickCompleted || it.Outcome != "w1" {
			t.Errorf("history --json item %d = %+v; want completed by w1 at %s", i, it.Tick, want)
		}
	}
}
